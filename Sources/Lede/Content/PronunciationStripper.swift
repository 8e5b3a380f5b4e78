/// Removes pronunciation parentheticals from article extracts ("Given the article summary has an IPA …
/// Then the IPA and enclosing parentheses should be removed"), and nothing else.
///
/// A round-bracket group — `( )` or full-width `（ ）` — goes, with its brackets and the space before it, when it
/// carries pronunciation: an IPA transcription (between `/ /` or `[ ]` holding IPA letters, modifier letters or
/// combining diacritics), the listen mark `ⓘ`, or a pronunciation word (en, de, it, fr, es, nl, zh, ja). The
/// whole group goes, whatever else it holds. Groups left with only punctuation and spaces go too. Everything
/// else stays. Unbalanced brackets leave the text untouched. In HTML, tags are opaque: brackets inside them
/// never count, and tags inside a removed group are dropped in matched pairs only, so the HTML stays well-formed.
public enum PronunciationStripper {
    public static func clean(_ text: String) -> String {
        let units = text.unicodeScalars.map { Unit.text($0) }
        return render(strip(units))
    }

    public static func cleanHTML(_ html: String) -> String {
        guard let units = tokenizeHTML(html) else { return html }
        return render(strip(units))
    }

    enum Unit: Equatable {
        case text(Unicode.Scalar)
        case tag(String)
    }

    // MARK: - Core

    static func strip(_ units: [Unit]) -> [Unit] {
        // Visible text and where each visible scalar sits among the units.
        var vis: [Unicode.Scalar] = []
        var at: [Int] = []
        for (i, u) in units.enumerated() { if case .text(let s) = u { vis.append(s); at.append(i) } }

        // Match brackets; any imbalance leaves the text as it is.
        var stack: [(Int, Unicode.Scalar)] = []
        var groups: [(open: Int, close: Int, depth: Int)] = []
        for (i, s) in vis.enumerated() {
            if s == "(" || s == "（" { stack.append((i, s)) }
            else if s == ")" || s == "）" {
                guard let (o, os) = stack.popLast(), (os == "(") == (s == ")") else { return units }
                groups.append((o, i, stack.count))
            }
        }
        guard stack.isEmpty, !groups.isEmpty else { return units }

        // Decide outermost-first: a removed group takes its nested groups with it.
        var removeVis = [Bool](repeating: false, count: vis.count)
        var removals: [(Int, Int)] = []
        for g in groups.sorted(by: { ($0.depth, $0.open) < ($1.depth, $1.open) }) {
            if removeVis[g.open] { continue }
            let inner = Array(vis[(g.open + 1)..<g.close])
            if carriesPronunciation(inner) || isOnlyPunctuation(inner) {
                for i in g.open...g.close { removeVis[i] = true }
                removals.append((g.open, g.close))
            }
        }
        if removals.isEmpty { return units }

        // Spacing where a group went: take the space before it; at the start of a line take the space after;
        // never leave a space before punctuation or two spaces in a row.
        for (open, close) in removals {
            var after = close + 1
            while after < vis.count && removeVis[after] { after += 1 }
            let atEnd = after == vis.count
            let nextIsSpace = !atEnd && isSpace(vis[after])
            guard atEnd || nextIsSpace || closingPunctuation.contains(vis[after]) else { continue }  // "word (x)word": keep the space
            var before = open - 1
            while before >= 0 && (removeVis[before] || vis[before] == " " || vis[before] == "\u{00A0}") {
                if !removeVis[before] { removeVis[before] = true }
                before -= 1
            }
            if (before < 0 || isOpening(vis[before])) && nextIsSpace { removeVis[after] = true }
        }

        // Units to drop: removed text, and tags inside a removed span only when they pair up within it.
        var drop = [Bool](repeating: false, count: units.count)
        for (i, r) in removeVis.enumerated() where r { drop[at[i]] = true }
        for (open, close) in removals {
            let lo = at[open], hi = at[close]
            var openTags: [(Int, String)] = []
            for i in lo...hi {
                guard case .tag(let t) = units[i] else { continue }
                let name = tagName(t)
                if t.hasPrefix("</") {
                    if let j = openTags.lastIndex(where: { $0.1 == name }) {
                        drop[openTags[j].0] = true; drop[i] = true
                        openTags.remove(at: j)
                    }
                } else if t.hasSuffix("/>") || voidElements.contains(name) {
                    drop[i] = true
                } else {
                    openTags.append((i, name))
                }
            }
        }
        return units.enumerated().filter { !drop[$0.offset] }.map(\.element)
    }

    static func render(_ units: [Unit]) -> String {
        var out = String.UnicodeScalarView()
        for u in units {
            switch u {
            case .text(let s): out.append(s)
            case .tag(let t): out.append(contentsOf: t.unicodeScalars)
            }
        }
        return String(out)
    }

    // MARK: - What counts as pronunciation

    static func carriesPronunciation(_ inner: [Unicode.Scalar]) -> Bool {
        if inner.contains("ⓘ") { return true }
        if hasIPASpan(inner, open: "/", close: "/") || hasIPASpan(inner, open: "[", close: "]") { return true }
        let text = String(String.UnicodeScalarView(inner))
        for word in words(text) {
            if caseSensitiveWords.contains(word) || pronunciationWords.contains(word.lowercased()) { return true }
        }
        for fragment in cjkFragments where text.contains(fragment) { return true }
        return false
    }

    static func hasIPASpan(_ s: [Unicode.Scalar], open: Unicode.Scalar, close: Unicode.Scalar) -> Bool {
        var i = 0
        while i < s.count {
            if s[i] == open, let j = s[(i + 1)...].firstIndex(of: close) {
                if s[(i + 1)..<j].contains(where: isIPA) { return true }
                i = open == close ? j + 1 : j + 1
            } else { i += 1 }
        }
        return false
    }

    static func isIPA(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x0250...0x02AF: return true   // IPA Extensions: ə ɪ ʊ ʃ ʒ ŋ ɛ ɔ ɑ ɒ ʌ ɐ ʁ …
        case 0x02B0...0x02FF: return true   // Spacing modifier letters: ˈ ˌ ː ʰ ʲ ˀ …
        case 0x0300...0x036F: return true   // Combining diacritics
        case 0x1D00...0x1DBF, 0x1DC0...0x1DFF: return true
        default: return "θðŋæøœçβχħɸ".unicodeScalars.contains(s)
        }
    }

    static let pronunciationWords: Set<String> = [
        "listen", "pronounced", "pronunciation", "pronounce",                       // en
        "aussprache", "anhören", "ausgesprochen", "lautschrift",                    // de
        "pronuncia", "ascolta", "pronunciato", "pronunciata",                       // it
        "prononciation", "prononcé", "prononcée", "écouter",                        // fr
        "pronunciación", "pronunciado", "escuchar", "pronunciació",                 // es (and ca)
        "uitspraak", "luister", "uitgesproken",                                     // nl
    ]
    /// Acronyms for the phonetic alphabet, counted only as written (so "(api)" in lower case is not one).
    static let caseSensitiveWords: Set<String> = ["IPA", "AFI"]
    static let cjkFragments = ["发音", "發音", "读音", "讀音", "発音", "国际音标", "國際音標"]

    static func isOnlyPunctuation(_ inner: [Unicode.Scalar]) -> Bool {
        inner.allSatisfy { isSpace($0) || $0.properties.generalCategory.isPunctuation || "·•;,:。，、".unicodeScalars.contains($0) }
    }

    static func words(_ text: String) -> [String] {
        text.split(whereSeparator: { !$0.isLetter }).map(String.init)
    }

    static func isSpace(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\u{00A0}" || s == "\t" || s == "\n" }
    static func isOpening(_ s: Unicode.Scalar) -> Bool { s == "\n" || s == "(" || s == "（" || s == "\"" || s == "“" }
    static let closingPunctuation: Set<Unicode.Scalar> = [",", ".", ";", ":", "!", "?", "，", "。", "；", "：", "、", ")", "）"]

    // MARK: - HTML

    static let voidElements: Set<String> = ["br", "img", "hr", "wbr", "meta", "link", "input", "source", "area", "col", "embed", "track"]

    static func tagName(_ tag: String) -> String {
        var s = Substring(tag.dropFirst())
        if s.hasPrefix("/") { s = s.dropFirst() }
        return String(s.prefix { $0.isLetter || $0.isNumber || $0 == "-" }).lowercased()
    }

    /// Splits HTML into text scalars and whole tags (quotes in attributes respected). nil when a tag never ends.
    static func tokenizeHTML(_ html: String) -> [Unit]? {
        var units: [Unit] = []
        let s = Array(html.unicodeScalars)
        var i = 0
        while i < s.count {
            if s[i] == "<", i + 1 < s.count, s[i + 1].properties.isAlphabetic || s[i + 1] == "/" || s[i + 1] == "!" {
                var j = i + 1
                var quote: Unicode.Scalar?
                while j < s.count {
                    if let q = quote { if s[j] == q { quote = nil } }
                    else if s[j] == "\"" || s[j] == "'" { quote = s[j] }
                    else if s[j] == ">" { break }
                    j += 1
                }
                guard j < s.count else { return nil }
                units.append(.tag(String(String.UnicodeScalarView(s[i...j]))))
                i = j + 1
            } else {
                units.append(.text(s[i])); i += 1
            }
        }
        return units
    }
}

private extension Unicode.GeneralCategory {
    var isPunctuation: Bool {
        switch self {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation: return true
        default: return false
        }
    }
}
