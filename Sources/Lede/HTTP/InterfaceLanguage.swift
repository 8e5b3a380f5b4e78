import HTTPServer
import LedeBasics
import HTTPCore

/// The reader's interface language: the language Wikimedia's own words for the reader (Echo's notifications, the
/// editor's reasons and notices, a refused save, the captcha) are asked in, as MediaWiki's `uselang`. The `uselang`
/// query parameter when given; else the first `Accept-Language` tag (by q-value) in MediaWiki's form — any language,
/// not only an edition, since MediaWiki has messages for far more; MediaWiki falls back along its own chain for a
/// language it lacks. Nil when the request names none: nothing is asked, the wiki answers in its own language.
enum InterfaceLanguage {
    static func resolve(_ request: HTTPRequest) throws -> String? {
        switch read(request) {
        case .malformed:
            throw Problem(status: 400, slug: "invalid-parameter",
                          detail: "uselang must be a language code such as de, pt-br or zh-hant.",
                          extensions: [("parameter", JSONText.quote("uselang"))])
        case .parameter(let code): return code
        case .header(let code): return code
        case .none: return nil
        }
    }

    /// Where the request names its interface language, read without refusing: a malformed `uselang` is told apart
    /// (a route refuses it; a problem's words, being an answer already, fall back to English).
    enum Reading { case parameter(String), header(String), malformed, none }

    static func read(_ request: HTTPRequest) -> Reading {
        if request.query != nil, let raw = request.queryParameter("uselang") { return normalised(raw).map(Reading.parameter) ?? .malformed }
        return fromAcceptLanguage(request.headers["Accept-Language"]).map(Reading.header) ?? .none
    }

    /// The most preferred tag (highest q, then first) that is a language code, lower-cased.
    static func fromAcceptLanguage(_ header: String?) -> String? {
        AcceptLanguage.best(header) { normalised(String(decoding: $0, as: UTF8.self)) }
    }

    /// A language code as MediaWiki writes one (`de`, `pt-br`, `zh-hant`, `be-tarask`): letters, digits and hyphens, a
    /// primary subtag of 2-3 letters, at most 35 bytes; lower-cased. Nil for anything else (`*`, `en_US`, `x`).
    static func normalised(_ raw: String) -> String? {
        let t = raw.lowercased()
        guard t.utf8.count <= 35 else { return nil }
        let parts = t.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.utf8.allSatisfy({ $0 >= 97 && $0 <= 122 }) else { return nil }
        for p in parts.dropFirst() {
            guard (1...8).contains(p.count), p.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) }) else { return nil }
        }
        return t
    }
}
