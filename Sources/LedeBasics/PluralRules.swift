/// CLDR's plural categories for whole numbers, per language, in the order MediaWiki's `{{PLURAL:…}}` takes its forms
/// (`{{PLURAL:$1|one|few|many}}` in Russian), and the form a number takes: an explicit `N=` form first, else the form
/// of its category, the last form given when fewer are given than the language has categories (MediaWiki's
/// `Language::convertPlural`).
public enum PluralRules {
    public enum Category: Sendable, Equatable { case zero, one, two, few, many, other }

    /// The rule families of the catalogue's languages and their neighbours, by primary subtag (`pt-br` apart).
    enum Family { case none, one, zeroOrOne, french, east, polish, czech, arabic, hebrew }

    /// The primary subtag of a (lower-case) code, without a copy.
    static func primary(_ language: String) -> Substring { language[..<(language.firstIndex(of: "-") ?? language.endIndex)] }

    static func family(_ language: String) -> Family {
        if language == "pt-br" { return .zeroOrOne }
        switch primary(language) {
        case "ja", "zh", "ko", "th", "vi", "id", "ms", "lo", "my", "km", "yue", "wuu", "jv", "su": return .none
        case "fr": return .french
        case "hi", "fa", "bn", "gu", "kn", "am", "zu", "as": return .zeroOrOne
        case "ru", "uk", "be": return .east
        case "pl": return .polish
        case "cs", "sk": return .czech
        case "ar", "arz", "ary": return .arabic
        case "he": return .hebrew
        default: return .one
        }
    }

    /// The categories `language` has, in form order.
    public static func categories(_ language: String) -> [Category] { categories(family(language)) }
    static let otherOnly: [Category] = [.other], oneOther: [Category] = [.one, .other], french: [Category] = [.one, .many, .other]
    static let slavic: [Category] = [.one, .few, .many, .other], arabic: [Category] = [.zero, .one, .two, .few, .many, .other]
    static let hebrew: [Category] = [.one, .two, .other]
    static func categories(_ family: Family) -> [Category] {
        switch family {
        case .none: return otherOnly
        case .one, .zeroOrOne: return oneOther
        case .french: return french
        case .east, .polish, .czech: return slavic
        case .arabic: return arabic
        case .hebrew: return hebrew
        }
    }

    /// Which of `count` plain forms (the `N=` forms left out) `n` takes in `language`: its category's place, the last
    /// form when fewer are given.
    public static func formIndex(_ n: Int, count: Int, _ language: String) -> Int {
        let cats = categories(language)
        let i = cats.firstIndex(of: category(n, language)) ?? cats.count - 1
        return min(i, max(0, count - 1))
    }

    /// `n`'s category in `language` (whole numbers; a negative number as its magnitude).
    public static func category(_ n: Int, _ language: String) -> Category {
        let n = n.magnitude, r10 = n % 10, r100 = n % 100
        switch family(language) {
        case .none: return .other
        case .one: return n == 1 ? .one : .other
        case .zeroOrOne: return n <= 1 ? .one : .other
        case .french: return n <= 1 ? .one : (n % 1_000_000 == 0 ? .many : .other)
        case .east: return r10 == 1 && r100 != 11 ? .one : ((2...4).contains(r10) && !(12...14).contains(r100) ? .few : .many)
        case .polish: return n == 1 ? .one : ((2...4).contains(r10) && !(12...14).contains(r100) ? .few : .many)
        case .czech: return n == 1 ? .one : ((2...4).contains(n) ? .few : .other)
        case .arabic:
            switch n {
            case 0: return .zero
            case 1: return .one
            case 2: return .two
            default: return (3...10).contains(r100) ? .few : ((11...99).contains(r100) ? .many : .other)
            }
        case .hebrew: return n == 1 ? .one : (n == 2 ? .two : .other)
        }
    }

    /// The form of `forms` (as written between `|` in `{{PLURAL:n|…}}`) that `n` takes in `language`.
    public static func form(_ n: Int, _ forms: [Substring], _ language: String) -> Substring {
        var plain: [Substring] = []
        for f in forms {
            if let eq = f.firstIndex(of: "="), let k = Int(f[..<eq]) {
                if k == n { return f[f.index(after: eq)...] }
            } else {
                plain.append(f)
            }
        }
        guard !plain.isEmpty else { return "" }
        return plain[formIndex(n, count: plain.count, language)]
    }
}

/// Whole numbers written as MediaWiki writes them for a language (`{{formatnum:…}}`): its digits (Arabic-Indic in
/// Arabic, Persian digits in Persian), its group separator (`,` `.` a no-break space, a narrow one in French), the
/// Indian grouping in Hindi, and no separator in a four-digit number where the language groups from five (Polish,
/// Spanish).
public enum NumberFormat {
    struct Style { var separator: String; var minimumGrouping: Int = 1; var indian = false; var zero: UInt32 = 48 }

    static func style(_ language: String) -> Style {
        if language == "pt-br" { return Style(separator: ".") }
        switch PluralRules.primary(language) {
        case "de", "nl", "it", "id", "tr", "vi", "da", "el": return Style(separator: ".")
        case "es", "gl", "ca": return Style(separator: ".", minimumGrouping: 2)
        case "pl": return Style(separator: "\u{00A0}", minimumGrouping: 2)
        case "fr": return Style(separator: "\u{202F}")
        case "ru", "uk", "be", "cs", "sk", "sv", "fi", "nb", "nn", "no", "hu", "pt", "bg", "et", "lt", "lv": return Style(separator: "\u{00A0}")
        case "ar", "arz": return Style(separator: "\u{066C}", zero: 0x0660)
        case "fa": return Style(separator: "\u{066C}", zero: 0x06F0)
        case "hi": return Style(separator: ",", indian: true)
        default: return Style(separator: ",")
        }
    }

    /// `digits` (ASCII digits, an optional leading `-`) in `language`'s way; anything else as it is.
    public static func format(_ digits: String, _ language: String) -> String {
        let negative = digits.hasPrefix("-")
        let body = negative ? digits.dropFirst() : Substring(digits)
        guard !body.isEmpty, body.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return digits }
        let s = style(language)
        // Too short to group, in ASCII digits: as it is (no copy).
        if s.zero == 48 && body.utf8.count < 4 + s.minimumGrouping - 1 { return digits }
        let chars = Array(body.utf8)
        var groups: [ArraySlice<UInt8>] = []
        if chars.count >= 4 && chars.count >= 4 + s.minimumGrouping - 1 {
            var end = chars.count
            var size = 3
            while end > 0 {
                let start = max(0, end - size)
                groups.insert(chars[start..<end], at: 0)
                end = start
                if s.indian { size = 2 }
            }
        } else {
            groups = [chars[...]]
        }
        var out = negative ? "-" : ""
        for (i, g) in groups.enumerated() {
            if i > 0 { out += s.separator }
            for d in g { out.unicodeScalars.append(Unicode.Scalar(s.zero + UInt32(d - 48))!) }
        }
        return out
    }
}
