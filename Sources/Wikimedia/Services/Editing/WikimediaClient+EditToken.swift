import EventLoops
import Foundation
import LedeBasics
import Upstream

// The edit token: the user's, or an anonymous session's.
extension WikimediaClient {
    /// The edit's token: the user's, or an anonymous session's (`+\\`) without credentials. A user's that comes back
    /// anonymous means the credentials were not accepted.
    /// `forwardedFor`: an anonymous caller's address, sent as `X-Forwarded-For`.
    public func editToken(lang: LanguageCode, authorization: String?, forwardedFor: String?) async throws -> String {
        guard let authorization else {
            var req = Self.tokenRequest(lang, nil)
            req.forwardedFor = forwardedFor
            let (q, _) = try await action(req, as: TokensQuery.self)
            guard let token = q.tokens?.csrftoken, !token.isEmpty else { throw UpstreamError.malformed("no csrf token in the answer") }
            return token
        }
        return try await csrfToken(lang: lang, authorization: authorization)
    }
}
