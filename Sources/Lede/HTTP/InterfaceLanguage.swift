import HTTPServer
import LedeBasics
import HTTPCore

/// The reader's interface language, read by MediaWiki's rules. Two answers, since Wikimedia and Lede speak different
/// sets of languages:
/// - `uselang`, the language Wikimedia's own words for the reader are asked in (Echo's notifications, the editor's
///   reasons and notices, a refused save): the `uselang` query parameter when given, else the most preferred
///   `Accept-Language` tag (by q-value) that names a language MediaWiki has messages for, as MediaWiki's code
///   (`de-DE` → `de`, `pt-BR` → `pt-br`, `zh-Hant-TW` → `zh-tw`, `sr-Latn` → `sr-el`; `MediaWikiLanguage`).
/// - `words`, the language of Lede's own words (problems, the share page, the editor's notices): the first of those
///   tags whose fallback chain reaches a language of the catalogue before English (`nb, de;q=0.5` reads German:
///   the catalogue has no Norwegian), or English when the reader puts English first.
/// Nil when the request names none: nothing is asked, the wiki answers in its own language, Lede in English.
enum InterfaceLanguage {
    /// The request's languages, read once when it is dispatched (`ProblemWords.language(of:)`): a `uselang` that is
    /// well-formed decides both; a malformed one is remembered (the routes that pass it on refuse it) and leaves the
    /// header to choose Lede's words.
    static func read(_ request: HTTPRequest) -> RequestLanguage {
        var asked = RequestLanguage.Asked.none, words: String?, byHeader = false
        if request.hasQuery, let raw = request.queryParameter("uselang") {
            if let code = parameter(raw) { asked = .parameter(code); words = code } else { asked = .malformed }
        }
        if words == nil, request.mayHaveAcceptLanguage, let header = request.headers["Accept-Language"] {
            if asked == .none, let code = fromAcceptLanguage(header) { asked = .header(code) }
            if let code = wordsFromAcceptLanguage(header) { words = code; byHeader = true }
        }
        return RequestLanguage(asked: asked, words: words, wordsByHeader: byHeader)
    }

    /// The `uselang` to send for the request: nil when it names none; a malformed `uselang` is refused (400).
    static func resolve(_ ctx: RequestContext) throws -> String? {
        switch ctx.language.asked {
        case .malformed:
            throw Problem(status: 400, slug: "invalid-parameter", .problemUselangInvalid, extensions: [("parameter", JSONText.quote("uselang"))])
        case .parameter(let code), .header(let code): return code
        case .none: return nil
        }
    }

    /// `uselang=` as MediaWiki's code: a tag MediaWiki has messages for, by `MediaWikiLanguage`; a well-formed code it
    /// does not list is sent as written (MediaWiki falls back along its own chain); nil when malformed.
    static func parameter(_ raw: String) -> String? { MediaWikiLanguage.code(forTag: raw) ?? normalised(raw) }

    /// The most preferred `Accept-Language` tag that names a language MediaWiki has messages for, as its code.
    static func fromAcceptLanguage(_ header: String?) -> String? {
        AcceptLanguage.best(header) { MediaWikiLanguage.code(forTag: String(decoding: $0, as: UTF8.self)) }
    }

    /// The first tag by q-value whose chain reaches the catalogue before English, or that is English.
    static func wordsFromAcceptLanguage(_ header: String?) -> String? {
        AcceptLanguage.best(header) { tag in
            guard let code = MediaWikiLanguage.code(forTag: String(decoding: tag, as: UTF8.self)) else { return nil }
            return code == "en" || code.hasPrefix("en-") || Messages.shared.speaks(code) ? code : nil
        }
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
