import HTTPServer
import LedeBasics
import Wikimedia

/// Whether Wikimedia accepts a token the server knows nothing of: one `meta=userinfo` call on the accounts' edition
/// (OAuth 2 tokens are global across Wikimedia's wikis), charged by the server to the address that sent it.
struct WikimediaCredentialCheck: CredentialVerifier {
    let api: WikimediaClient
    let lang: LanguageCode

    func verify(_ credentials: String, then done: @escaping @Sendable (Bool?) -> Void) {
        let api = self.api, lang = self.lang
        Task { done(try? await api.acceptsCredentials(lang: lang, authorization: credentials)) }
    }
}
