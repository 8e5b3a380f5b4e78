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

// MARK: - The wikis' language variants

/// `meta=siteinfo&siprop=languagevariants`: every language with a converter, each with its variants (their fallbacks
/// are not read). The same on every wiki of the farm.
struct LanguageVariantsQuery: Decodable {
    struct Skip: Decodable { init(from decoder: Decoder) throws {} }
    var languagevariants: [String: [String: Skip]]?
}

extension WikimediaClient {
    static func languageVariantsRequest(_ lang: LanguageCode) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("meta", "siteinfo"), ("siprop", "languagevariants"), ("format", "json"), ("formatversion", "2"),
        ], kind: .siteinfo)
    }

    /// The variants the wikis list, by language (each language's own code left out): what `LearnedVariants` learns.
    public func languageVariants(lang: LanguageCode) async throws -> [String: [String]] {
        let (q, _) = try await action(Self.languageVariantsRequest(lang), as: LanguageVariantsQuery.self)
        guard let listed = q.languagevariants else { throw UpstreamError.malformed("siteinfo: no languagevariants") }
        return listed.mapValues { $0.keys.sorted() }
    }
}
