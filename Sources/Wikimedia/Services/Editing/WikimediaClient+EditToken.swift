import EventLoops
import Foundation
import HTTPServer
import LedeBasics

// The edit token: the user's, or an anonymous session's.
extension WikimediaClient {
    /// The edit's token: the user's, or an anonymous session's (`+\\`) without credentials. A user's that comes back
    /// anonymous means the credentials were not accepted.
    public func editToken(lang: LanguageCode, authorization: String?) async throws -> String {
        guard let authorization else {
            let (q, _) = try await action(Self.tokenRequest(lang, nil), as: TokensQuery.self)
            guard let token = q.tokens?.csrftoken, !token.isEmpty else { throw UpstreamError.malformed("no csrf token in the answer") }
            return token
        }
        return try await csrfToken(lang: lang, authorization: authorization)
    }
}
