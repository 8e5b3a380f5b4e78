import HTTPServer

/// The reader's account, as the request's credentials name it (read once by the server: `RequestContext.credentials`):
/// a bearer token of valid form, or a 401 saying what is wrong. Wikimedia decides whether the token is valid.
enum BearerAuthorization {
    /// The one challenge every 401 of Lede's carries (RFC 6750 §3).
    static let challenge = "Bearer realm=\"lede\""

    /// The token when the request sends credentials (refused as `extract` refuses), nil for an anonymous request.
    static func optional(_ credentials: Credentials) throws -> String? {
        if case .none = credentials { return nil }
        return try extract(credentials)
    }

    static func extract(_ credentials: Credentials) throws -> String {
        switch credentials {
        case .bearer(let token): return token
        case .none: throw unauthorised(.problemAccountRequired)
        case .invalid(.repeated): throw unauthorised(.problemAccountRepeated)
        case .invalid(.scheme): throw unauthorised(.problemAccountScheme)
        case .invalid(.token): throw unauthorised(.problemAccountMalformed)
        }
    }

    static func unauthorised(_ key: MessageKey) -> Problem {
        Problem(status: 401, slug: "not-authorised", key, headers: ["WWW-Authenticate": challenge])
    }

    /// The problem `extract` refuses `credentials` with, nil when they hold a token of valid form.
    static func refusal(_ credentials: Credentials) -> Problem? {
        do { _ = try extract(credentials); return nil } catch { return error as? Problem }
    }

    /// What a route that needs an account declares (`Router.Account`): refused from the head as `extract` refuses,
    /// and its 2xx answers vouch for the token.
    static let required = Router.Account.required(refusal: refusal)
}
