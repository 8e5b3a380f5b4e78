import HTTPCore
import Foundation
import HTTPServer
import LedeBasics

/// The messages' keys, one case a message, are generated from `i18n/en.json` at build time (the MessageKeys plugin,
/// `Sources/MessageKeysPlugin`): `lede-problem-title-400` is `problemTitle400`. What follows reads them.
extension MessageKey {
    /// The title of a problem with this status, when the catalogue has one.
    static func problemTitle(status: Int) -> MessageKey? { titles[status] }
    private static let titles: [Int: MessageKey] = Dictionary(uniqueKeysWithValues: allCases.compactMap { key in
        key.rawValue.hasPrefix("lede-problem-title-") ? Int(key.rawValue.dropFirst("lede-problem-title-".count)).map { ($0, key) } : nil
    })

    /// The message a problem names by its key (a dictionary: `init(rawValue:)` compares with every case in turn).
    static func named(_ key: String) -> MessageKey? { byKey[key] }

    /// The catalogue's message for a problem the server makes itself (the server names no key of Lede's).
    /// The catalogue's message for one of the server's own; nil for the two answered before any request is read
    /// (there is no reader's language to word them in).
    init?(server: ServerMessage) {
        switch server {
        case .noRoute: self = .problemNoRoute
        case .draining: self = .problemDraining
        case .rateLimited: self = .problemRateLimited
        case .streamsFull: self = .problemServerStreamsFull
        case .internalError: self = .problemInternal
        case .methodNotAllowed: self = .problemMethodNotAllowed
        case .methodNotImplemented: self = .problemMethodNotImplemented
        case .bodyTooSlow: self = .problemBodyTooSlow
        case .bodiesBusy: self = .problemBodiesBusy
        case .noAnswer: self = .problemNoAnswer
        case .requestTimeout, .overloaded: return nil
        }
    }

    /// The catalogue's message a problem names, the server's own included.
    static func of(_ message: ProblemMessage) -> MessageKey? { message.server.flatMap(MessageKey.init(server:)) ?? named(message.key) }
    private static let byKey: [String: MessageKey] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.rawValue, $0) })
}

/// The message catalogue, compiled into the binary: each language's messages, read once.
struct Messages: Sendable {
    /// Every language file of `i18n/` (the documentation `qqq` included), as the package embeds them.
    static let files: [(language: String, json: [UInt8])] = [
        ("ar", PackageResources.ar_json),
        ("cs", PackageResources.cs_json),
        ("de", PackageResources.de_json),
        ("en", PackageResources.en_json),
        ("es", PackageResources.es_json),
        ("fa", PackageResources.fa_json),
        ("fi", PackageResources.fi_json),
        ("fr", PackageResources.fr_json),
        ("he", PackageResources.he_json),
        ("hi", PackageResources.hi_json),
        ("hu", PackageResources.hu_json),
        ("id", PackageResources.id_json),
        ("it", PackageResources.it_json),
        ("ja", PackageResources.ja_json),
        ("ko", PackageResources.ko_json),
        ("nl", PackageResources.nl_json),
        ("pl", PackageResources.pl_json),
        ("pt", PackageResources.pt_json),
        ("pt-br", PackageResources.pt_br_json),
        ("qqq", PackageResources.qqq_json),
        ("ru", PackageResources.ru_json),
        ("sv", PackageResources.sv_json),
        ("th", PackageResources.th_json),
        ("tr", PackageResources.tr_json),
        ("uk", PackageResources.uk_json),
        ("vi", PackageResources.vi_json),
        ("zh-hans", PackageResources.zh_hans_json),
        ("zh-hant", PackageResources.zh_hant_json),
    ]

    static let shared = Messages(files: files)

    /// Language → key → text (`qqq` is the documentation, not a language).
    let catalogue: [String: [String: String]]

    init(files: [(language: String, json: [UInt8])]) {
        var catalogue: [String: [String: String]] = [:]
        for (language, json) in files {
            guard let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any] else { continue }
            var messages: [String: String] = [:]
            for (key, value) in object where key != "@metadata" { if let text = value as? String { messages[key] = text } }
            catalogue[language] = messages
        }
        self.catalogue = catalogue
        speaking = Set(MediaWikiLanguage.codes.filter { Messages.reaches($0, catalogue) })
    }
    /// MediaWiki's languages whose chain reaches the catalogue before English.
    let speaking: Set<String>

    /// The languages with messages (not `qqq`).
    var languages: [String] { catalogue.keys.filter { $0 != "qqq" }.sorted() }

    /// Whether `language`'s fallback chain reaches a language of the catalogue other than English before English
    /// (for MediaWiki's languages, a set made once: no chain walked per request).
    func speaks(_ language: String) -> Bool {
        if MediaWikiLanguage.codes.contains(language) { return speaking.contains(language) }
        return Messages.reaches(language, catalogue)
    }
    private static func reaches(_ language: String, _ catalogue: [String: [String: String]]) -> Bool {
        for code in Messages.fallbacks(language) {
            if code == "en" { return false }
            if code != "qqq", catalogue[code] != nil { return true }
        }
        return false
    }

    /// `key` in the first language of `language`'s fallback chain that has it, `$1`, `$2`… replaced by `parameters`.
    func text(_ key: MessageKey, in language: String?, _ parameters: String...) -> String {
        text(key, in: language, parameters: parameters)
    }

    func text(_ key: MessageKey, in language: String?, parameters: [String]) -> String {
        // English, the language of logs and of most problems, without walking a chain.
        if language == nil || language == "en", let template = catalogue["en"]?[key.rawValue] { return Messages.render(template, parameters, language: "en") }
        guard let found = template(key, along: Messages.fallbacks(language ?? "en")) else { return key.rawValue }
        return Messages.render(found.text, parameters, language: found.language)
    }

    /// The language whose text `key` is given in for `language` (for `Content-Language` and `lang` attributes).
    func language(of key: MessageKey, for language: String?) -> String {
        template(key, along: Messages.fallbacks(language ?? "en"))?.language ?? "en"
    }

    /// `key`'s text in the first language of `chain` (a `fallbacks` chain) that has it, and that language.
    func template(_ key: MessageKey, along chain: [String]) -> (language: String, text: String)? {
        for code in chain { if let text = catalogue[code]?[key.rawValue] { return (code, text) } }
        return nil
    }

    /// A template with its parameters, in `language` (the template's own): MediaWiki's `{{PLURAL:$N|…}}` (the form
    /// `$N`'s number takes, `PluralRules`) and `{{formatnum:$N}}` (the number as the language writes it,
    /// `NumberFormat`), and `$N`, in one pass over the template's bytes. A parameter's value is inserted as it is and
    /// never read again (a path holding `{{PLURAL:…}}` stays text).
    static func render(_ template: String, _ parameters: [String], language: String) -> String {
        // Nothing to read: the template as it is (no copy).
        guard template.utf8.contains(where: { $0 == 123 || ($0 == 36 && !parameters.isEmpty) }) else { return template }
        var template = template
        return template.withUTF8 { u in
            var out = [UInt8](); out.reserveCapacity(u.count + 32)
            Template(u: u, parameters: parameters, language: language).render(0..<u.count, to: &out)
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// A template's bytes read by index (no generic algorithm over slices: a debug build allocated in each).
    struct Template {
        let u: UnsafeBufferPointer<UInt8>
        let parameters: [String]
        let language: String

        func render(_ r: Range<Int>, to out: inout [UInt8]) {
            var i = r.lowerBound
            while i < r.upperBound {
                let b = u[i]
                if b == 123, i + 1 < r.upperBound, u[i + 1] == 123, let close = closing(i + 2, r.upperBound) {
                    magic((i + 2)..<close, to: &out)
                    i = close + 2
                } else if let p = parameter(i, r.upperBound) {
                    for c in parameters[p].utf8 { out.append(c) }
                    i += 2
                } else {
                    out.append(b); i += 1
                }
            }
        }

        /// The parameter `$N` at `i` names (its index), when it is one.
        func parameter(_ i: Int, _ end: Int) -> Int? {
            guard u[i] == 36, i + 1 < end, u[i + 1] >= 49, u[i + 1] <= 57, Int(u[i + 1] - 48) <= parameters.count else { return nil }
            return Int(u[i + 1] - 48) - 1
        }

        /// Where the `}}` closing a `{{` whose inside begins at `start` is, nested pairs skipped.
        func closing(_ start: Int, _ end: Int) -> Int? {
            var depth = 0, i = start
            while i + 1 < end {
                if u[i] == 123 && u[i + 1] == 123 { depth += 1; i += 2; continue }
                if u[i] == 125 && u[i + 1] == 125 {
                    if depth == 0 { return i }
                    depth -= 1; i += 2; continue
                }
                i += 1
            }
            return nil
        }

        /// A whole number written in ASCII digits over `r` (at most 18 of them).
        func number(_ r: Range<Int>) -> Int? {
            guard !r.isEmpty, r.count <= 18 else { return nil }
            var n = 0
            for i in r {
                guard u[i] >= 48 && u[i] <= 57 else { return nil }
                n = n * 10 + Int(u[i] - 48)
            }
            return n
        }

        func named(_ r: Range<Int>, _ name: StaticString) -> Bool {
            guard r.count == name.utf8CodeUnitCount else { return false }
            var k = 0
            while k < r.count {
                if u[r.lowerBound + k] | 0x20 != name.utf8Start[k] { return false }
                k += 1
            }
            return true
        }

        /// One `{{name:argument|…}}`: PLURAL and formatnum; anything else as written.
        func magic(_ inner: Range<Int>, to out: inout [UInt8]) {
            var colon = inner.lowerBound
            while colon < inner.upperBound && u[colon] != 58 { colon += 1 }
            let plural = named(inner.lowerBound..<colon, "plural"), formatnum = named(inner.lowerBound..<colon, "formatnum")
            guard colon < inner.upperBound, plural || formatnum else {
                out.append(123); out.append(123)
                for i in inner { out.append(u[i]) }
                out.append(125); out.append(125)
                return
            }
            // The first argument, up to a `|` outside nested pairs, trimmed.
            var end = colon + 1, depth = 0
            while end < inner.upperBound {
                if end + 1 < inner.upperBound, u[end] == 123, u[end + 1] == 123 { depth += 1; end += 2; continue }
                if end + 1 < inner.upperBound, u[end] == 125, u[end + 1] == 125 { depth -= 1; end += 2; continue }
                if u[end] == 124 && depth == 0 { break }
                end += 1
            }
            var a = colon + 1, z = end
            while a < z && u[a] == 32 { a += 1 }
            while z > a && u[z - 1] == 32 { z -= 1 }
            let value: Int? = parameter(a, z).flatMap { z - a == 2 ? Int(parameters[$0]) : nil } ?? number(a..<z)
            if formatnum {
                if let n = value { for c in NumberFormat.format(String(n), language).utf8 { out.append(c) } }
                else { render(a..<z, to: &out) }   // no number: as written (`$N` its value)
                return
            }
            // PLURAL: the forms after the first argument; an `N=` form for exactly N first.
            var forms: [Range<Int>] = []
            var start = end + 1, i = end + 1
            depth = 0
            while i <= inner.upperBound {
                if i < inner.upperBound, i + 1 < inner.upperBound, u[i] == 123, u[i + 1] == 123 { depth += 1; i += 2; continue }
                if i < inner.upperBound, i + 1 < inner.upperBound, u[i] == 125, u[i + 1] == 125 { depth -= 1; i += 2; continue }
                if i == inner.upperBound || (u[i] == 124 && depth == 0) {
                    if start <= i && end < inner.upperBound { forms.append(start..<i) }
                    start = i + 1
                }
                i += 1
            }
            guard let n = value else { if let last = forms.last { render(last, to: &out) }; return }
            var plain: [Range<Int>] = []
            for f in forms {
                var eq = f.lowerBound
                while eq < f.upperBound && u[eq] >= 48 && u[eq] <= 57 { eq += 1 }
                if eq > f.lowerBound, eq < f.upperBound, u[eq] == 61 {
                    if number(f.lowerBound..<eq) == n { render((eq + 1)..<f.upperBound, to: &out); return }
                } else {
                    plain.append(f)
                }
            }
            guard !plain.isEmpty else { return }
            render(plain[PluralRules.formIndex(n, count: plain.count, language)], to: &out)
        }
    }

    /// Replaces `$1`…`$9` (each once or more; a number with no parameter stays as written): `render` in English.
    static func substitute(_ template: String, _ parameters: [String]) -> String { render(template, parameters, language: "en") }

    /// MediaWiki's fallback chain for a language, ending in English: its own code, the languages MediaWiki falls
    /// back to (`de-at` → `de`, `pt-br` → `pt`, `zh-hk` → `zh-hant` → `zh-hans`, `zh-tw` → `zh-hant`, `zh` and
    /// `zh-cn` → `zh-hans`), then each shorter prefix (`sr-el` → `sr`), then `en`.
    static func fallbacks(_ language: String) -> [String] {
        var chain: [String] = []
        let asked = language.lowercased()
        var next: String? = MediaWikiLanguage.deprecated[asked] ?? asked   // zh-min-nan is nan, als gsw
        while let code = next, !chain.contains(code) {
            chain.append(code)
            if let explicit = explicitFallback[code] { next = explicit.isEmpty ? nil : explicit }
            else if let dash = code.lastIndex(of: "-") { next = String(code[..<dash]) }
            else { next = nil }
        }
        if !chain.contains("en") { chain.append("en") }
        return chain
    }

    /// Where MediaWiki's chain is not the shorter prefix (empty: the chain ends there, before English).
    static let explicitFallback: [String: String] = [
        "zh": "zh-hans", "zh-cn": "zh-hans", "zh-sg": "zh-hans", "zh-my": "zh-hans",
        "zh-tw": "zh-hant", "zh-hk": "zh-hant", "zh-mo": "zh-hant", "zh-hant": "zh-hans", "zh-hans": "",
        "zh-yue": "yue", "yue": "zh-hant", "gan": "gan-hant", "gan-hant": "zh-hant", "wuu": "wuu-hans", "wuu-hans": "zh-hans",
        "de-formal": "de", "nds": "de", "bar": "de", "ksh": "de", "pfl": "de", "gsw": "de", "lb": "de",
        "nds-nl": "nl", "li": "nl", "vls": "nl", "zea": "nl", "nan": "zh-hant",
        "pt-br": "pt", "gl": "pt", "an": "es", "ast": "es", "ext": "es", "oc": "fr", "frp": "fr", "wa": "fr",
        "be-x-old": "be-tarask", "rue": "uk", "ba": "ru", "tt": "ru", "ky": "ru",
        "nn": "nb", "no": "nb", "fiu-vro": "et", "sr-el": "sr-latn", "sr-ec": "sr-cyrl",
        "bho": "hi", "mai": "hi", "glk": "fa", "mzn": "fa", "lrc": "fa", "yi": "he",
        "arz": "ar", "ary": "ar", "jv": "id", "su": "id", "min": "id", "ace": "id",
    ]
}

/// The app's languages for the server: each request's, read once when it is dispatched (`InterfaceLanguage.read`),
/// and every problem's title in the reader's interface language (`uselang`, else `Accept-Language`), from the
/// catalogue, with its detail where the problem names a message of it. English answers stay as the server wrote them
/// (the catalogue is not read for them; a request with neither `uselang` nor `Accept-Language` costs no field lookup).
struct ProblemWords: ProblemLocalizer {
    func language(of request: HTTPRequest) -> RequestLanguage { InterfaceLanguage.read(request) }

    func words(for problem: Problem, language requested: RequestLanguage) -> ProblemWordsInLanguage? {
        // A malformed `uselang` (the problem is probably that very parameter's) left the header to choose.
        guard let language = requested.words else { return nil }
        let byHeader = requested.wordsByHeader
        let messages = Messages.shared
        // One fallback chain for both lookups; a message found only in English leaves the problem as written.
        let chain = Messages.fallbacks(language)
        func template(_ key: MessageKey) -> (language: String, text: String)? {
            messages.template(key, along: chain).flatMap { $0.language == "en" ? nil : $0 }
        }
        var title: String?, detail: String?, used: String?
        if problem.title == HTTPStatus.reason(problem.status), let key = MessageKey.problemTitle(status: problem.status), let found = template(key) {
            title = found.text; used = found.language
        }
        if let message = problem.message, let key = MessageKey.of(message), let found = template(key), used == nil || used == found.language {
            detail = Messages.render(found.text, message.parameters, language: found.language); used = found.language
        }
        guard let used else { return nil }
        return ProblemWordsInLanguage(title: title, detail: detail, language: MediaWikiLanguage.bcp47(used), byHeader: byHeader)
    }
}

extension Problem {
    /// A problem whose detail is a message of the catalogue: in English here (as logs and English readers read it), in
    /// the reader's language when answered (`ProblemWords`).
    init(status: Int, slug: String? = nil, _ key: MessageKey, _ parameters: String..., headers: HTTPHeaders = HTTPHeaders(),
         extensions: [(String, String)] = []) {
        self.init(status: status, slug: slug, key, parameters: parameters, headers: headers, extensions: extensions)
    }

    /// The same with the message's parameters as a list (for the screens' own `bad(_:_:)` helpers).
    init(status: Int, slug: String? = nil, _ key: MessageKey, parameters: [String], headers: HTTPHeaders = HTTPHeaders(),
         extensions: [(String, String)] = []) {
        self.init(status: status, slug: slug, detail: Messages.shared.text(key, in: "en", parameters: parameters),
                  message: ProblemMessage(key.rawValue, parameters), headers: headers, extensions: extensions)
    }
}
