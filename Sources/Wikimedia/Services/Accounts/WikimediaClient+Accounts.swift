import LedeBasics
import Upstream

extension CallKind {
    /// Whether Wikimedia accepts a reader's credentials (`meta=userinfo`).
    public static let userinfo = CallKind("userinfo")
}

/// `meta=userinfo`: whom the credentials sent name (formatversion=2: `{"id":…,"name":…}`, an anonymous session
/// `{"id":0,"name":"<address>","anon":true}`).
struct UserInfoQuery: Decodable {
    var userinfo: EditingAnswer.UserInfo?
}

extension WikimediaClient {
    static func userInfoRequest(_ lang: LanguageCode, _ auth: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("meta", "userinfo"),
        ], authorization: auth, kind: .userinfo)
    }

    /// Whether Wikimedia accepts `authorization` (`Bearer <token>`): true when it names an account, false when the
    /// credentials are refused (`mwoauth-invalid-authorization*`, 401) or name none (an anonymous session). Throws for
    /// a call that did not tell (a timeout, an unavailable or malformed answer).
    public func acceptsCredentials(lang: LanguageCode, authorization: String) async throws -> Bool {
        do {
            let (q, _) = try await action(Self.userInfoRequest(lang, authorization), as: UserInfoQuery.self)
            guard let user = q.userinfo else { throw UpstreamError.malformed("no userinfo in the answer") }
            return !user.anon
        } catch UpstreamError.notAuthorised {
            return false
        }
    }
}
