import Foundation
import LedeBasics
import Wikimedia
/// Removes pronunciation parentheticals from article extracts ("Given the article summary has an IPA …
/// Then the IPA and enclosing parentheses should be removed"), and nothing else.
///
/// A round-bracket group — `( )` or full-width `（ ）` — goes, with its brackets and the space before it, when it
/// carries pronunciation: an IPA transcription (between `/ /` or `[ ]` holding IPA letters, modifier letters or
/// combining diacritics), the listen mark `ⓘ`, or a pronunciation word (en, de, it, fr, es, nl, zh, ja). The
/// whole group goes, whatever else it holds. Groups left with only punctuation and spaces go too. Everything
/// else stays. Unbalanced brackets leave the text untouched. In HTML, tags are opaque: brackets inside them
/// never count, and tags inside a removed group are dropped in matched pairs only, so the HTML stays well-formed.
enum PronunciationStripper {
    static func clean(_ text: String) -> String {
        guard mayHoldGroup(text) else { return text }
        let units = text.unicodeScalars.map { Unit.text($0) }
        return render(strip(units))
    }

    static func cleanHTML(_ html: String) -> String {
        guard mayHoldGroup(html), let units = tokenizeHTML(html) else { return html }
        return render(strip(units))
    }

    /// Whether `text` holds an opening bracket, `(` or `（` (UTF-8 EF BC 88): with none there is no group to judge and the
    /// text is the answer as it is.
    static func mayHoldGroup(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { u in
            guard let base = u.baseAddress else { return false }
            return memchr(base, 0x28, u.count) != nil || memchr(base, 0xEF, u.count) != nil
        }
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

        // Decide outermost-first: a removed group takes its nested groups with it. Each group is judged in constant time
        // from counts made in one pass over the text (linear however deep the nesting).
        let facts = TextFacts(vis)
        var removeVis = [Bool](repeating: false, count: vis.count)
        var removals: [(Int, Int)] = []
        for g in groups.sorted(by: { ($0.depth, $0.open) < ($1.depth, $1.open) }) {
            if removeVis[g.open] { continue }
            if facts.carriesPronunciation(g.open, g.close) || facts.isOnlyPunctuation(g.open, g.close) {
                for i in g.open...g.close { removeVis[i] = true }
                removals.append((g.open, g.close))
            }
        }
        if removals.isEmpty { return units }

        // Spacing where a group went: take the space before it; at the start of a line take the space after;
        // never leave a space before punctuation or two spaces in a row. A walk back that reaches an earlier removal
        // continues from where that removal's own walk stopped (each space is stepped over once).
        var groupOf = [Int](repeating: -1, count: vis.count)   // removal index of each removed group position
        for (k, (open, close)) in removals.enumerated() { for i in open...close { groupOf[i] = k } }
        var stoppedAt = [Int?](repeating: nil, count: removals.count)
        for (k, (open, close)) in removals.enumerated() {
            var after = close + 1
            while after < vis.count && removeVis[after] { after += 1 }
            let atEnd = after == vis.count
            let nextIsSpace = !atEnd && isSpace(vis[after])
            guard atEnd || nextIsSpace || closingPunctuation.contains(vis[after]) else { continue }  // "word (x)word": keep the space
            var before = open - 1
            while before >= 0 {
                if groupOf[before] >= 0, let stop = stoppedAt[groupOf[before]] { before = stop; break }
                guard removeVis[before] || vis[before] == " " || vis[before] == "\u{00A0}" else { break }
                if !removeVis[before] { removeVis[before] = true }
                before -= 1
            }
            stoppedAt[k] = before
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
        // Appended to a String (amortised growth): UnicodeScalarView.append(contentsOf:) copied the whole text so far
        // for every tag, quadratic in tags (Benchmarks/readers.sh found 380 ms for 512 KB of nested spans).
        // Written as UTF-8 bytes and made a string once (a scalar appended to a string's scalar view cost ~240
        // instructions).
        var out: [UInt8] = []
        out.reserveCapacity(units.count + units.count / 4)
        for u in units {
            switch u {
            case .text(let s):
                if s.value < 0x80 { out.append(UInt8(s.value)) } else { UTF8.encode(s) { out.append($0) } }
            case .tag(let t): out.append(contentsOf: t.utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - What counts as pronunciation

    /// What decides a group, counted once over the visible text so that any group `(open, close)` is judged in
    /// constant time: IPA between `/ /` (paired in order from the group's first slash) or `[ ]`, the listen mark,
    /// pronunciation words and CJK fragments (neither can hold a bracket, so each lies wholly inside a group or not).
    struct TextFacts {
        let ipa: [Int]            // IPA scalars before i
        let listen: [Int]         // ⓘ before i
        let wordly: [Int]         // pronunciation words and fragments starting before i
        let substantive: [Int]    // scalars that are neither space nor punctuation before i
        let nextClose: [Int]      // the first `]` at or after i (count when none)
        let nextIPAOpen: [Int]    // the first `[` at or after i whose span to its `]` holds IPA (count when none)
        let slashes: [Int]        // positions of `/`
        let firstSlash: [Int]     // index into `slashes` of the first slash at or after i
        let pairIPA: [[Int]]      // per parity, pairs (slashes[k], slashes[k+1]) with IPA between, k of that parity, before k

        init(_ v: [Unicode.Scalar]) {
            let n = v.count
            var ipa = [Int](repeating: 0, count: n + 1), listen = ipa, wordly = ipa, substantive = ipa
            var cjk = false
            for i in 0..<n {
                ipa[i + 1] = ipa[i] + (PronunciationStripper.isIPA(v[i]) ? 1 : 0)
                listen[i + 1] = listen[i] + (v[i] == "ⓘ" ? 1 : 0)
                substantive[i + 1] = substantive[i] + (PronunciationStripper.isPunctuationOrSpace(v[i]) ? 0 : 1)
                if v[i].value >= 0x3000 { cjk = true }
            }
            // Words: runs of letters (and the marks that belong to them). A word is made a string and looked up only
            // when it could be one of the words (`couldBeWord`: most words of a text cannot).
            var starts = [Bool](repeating: false, count: n + 1)
            var i = 0
            var utf8: [UInt8] = []   // a candidate word's bytes (a scalar appended to a string's scalar view costs ~200 instructions)
            while i < n {
                guard PronunciationStripper.isWordScalar(v[i]) else { i += 1; continue }
                var j = i
                while j < n && PronunciationStripper.isWordScalar(v[j]) { j += 1 }
                if PronunciationStripper.couldBeWord(first: v[i], count: j - i) {
                    utf8.removeAll(keepingCapacity: true)
                    for k in i..<j { UTF8.encode(v[k]) { utf8.append($0) } }
                    let word = String(decoding: utf8, as: UTF8.self)
                    if PronunciationStripper.caseSensitiveWords.contains(word) || PronunciationStripper.pronunciationWords.contains(word.lowercased()) { starts[i] = true }
                }
                i = j
            }
            // The fragments are ideographs (U+4E00 and up): a text with nothing from U+3000 on holds none.
            if cjk {
                for fragment in PronunciationStripper.cjkFragmentScalars where fragment.count <= n {
                    for s in 0...(n - fragment.count) where v[s] == fragment[0] && Array(v[s..<(s + fragment.count)]) == fragment { starts[s] = true }
                }
            }
            for i in 0..<n { wordly[i + 1] = wordly[i] + (starts[i] ? 1 : 0) }
            var nextClose = [Int](repeating: n, count: n + 1)
            for i in stride(from: n - 1, through: 0, by: -1) { nextClose[i] = v[i] == "]" ? i : nextClose[i + 1] }
            var nextIPAOpen = [Int](repeating: n, count: n + 1)
            for i in stride(from: n - 1, through: 0, by: -1) {
                let b = nextClose[min(i + 1, n)]
                nextIPAOpen[i] = v[i] == "[" && b < n && ipa[b] - ipa[i + 1] > 0 ? i : nextIPAOpen[i + 1]
            }
            var slashes: [Int] = []
            for i in 0..<n where v[i] == "/" { slashes.append(i) }
            var firstSlash = [Int](repeating: slashes.count, count: n + 1)
            var k = slashes.count
            for i in stride(from: n - 1, through: 0, by: -1) { if k > 0 && slashes[k - 1] == i { k -= 1 }; firstSlash[i] = k }
            var pairIPA = [[Int](repeating: 0, count: slashes.count + 1), [Int](repeating: 0, count: slashes.count + 1)]
            for k in 0..<slashes.count {
                let hit = k + 1 < slashes.count && ipa[slashes[k + 1]] - ipa[slashes[k] + 1] > 0
                for parity in 0..<2 { pairIPA[parity][k + 1] = pairIPA[parity][k] + (hit && k % 2 == parity ? 1 : 0) }
            }
            self.ipa = ipa; self.listen = listen; self.wordly = wordly; self.substantive = substantive
            self.nextClose = nextClose; self.nextIPAOpen = nextIPAOpen; self.slashes = slashes; self.firstSlash = firstSlash; self.pairIPA = pairIPA
        }

        /// Whether the text strictly between `open` and `close` carries pronunciation.
        func carriesPronunciation(_ open: Int, _ close: Int) -> Bool {
            let lo = open + 1
            if listen[close] - listen[lo] > 0 || wordly[close] - wordly[lo] > 0 { return true }
            let a = nextIPAOpen[lo]
            if a < close && nextClose[a + 1] < close { return true }
            // Slashes inside the group pair up in order from its first one: pairs (p, p+1), (p+2, p+3)…
            let p = firstSlash[lo], q = firstSlash[close]   // the group's slashes are slashes[p..<q]
            guard q - p >= 2 else { return false }
            let parity = p % 2
            return pairIPA[parity][q - 1] - pairIPA[parity][p] > 0
        }

        func isOnlyPunctuation(_ open: Int, _ close: Int) -> Bool { substantive[close] - substantive[open + 1] == 0 }
    }

    static func carriesPronunciation(_ inner: [Unicode.Scalar]) -> Bool { TextFacts(inner).carriesPronunciation(-1, inner.count) }

    static func isPunctuationOrSpace(_ s: Unicode.Scalar) -> Bool {
        if s.value < 0x80 { return ASCIISet.punctuationOrSpace.contains(s.value) }
        return punctuationOrSpaceByProperties(s)
    }

    /// The rule itself (the ASCII table is made from it).
    static func punctuationOrSpaceByProperties(_ s: Unicode.Scalar) -> Bool {
        if isSpace(s) || s.properties.generalCategory.isPunctuation { return true }
        switch s.value {
        case 0xB7, 0x2022, 0x3B, 0x2C, 0x3A, 0x3002, 0xFF0C, 0x3001: return true   // · • ; , : 。 ， 、
        default: return false
        }
    }

    /// Letters, and the combining marks written on them (so "prononcé" is one word however it is encoded).
    static func isWordScalar(_ s: Unicode.Scalar) -> Bool {
        if s.value < 0x80 { return ASCIISet.word.contains(s.value) }
        return wordScalarByProperties(s)
    }

    static func wordScalarByProperties(_ s: Unicode.Scalar) -> Bool {
        s.properties.isAlphabetic || (0x0300...0x036F).contains(s.value)
    }

    /// Scalars below 0x80 by a 128-bit set, made once from the rules above (the Unicode properties are a table search
    /// a scalar; an extract is mostly ASCII).
    struct ASCIISet {
        let low: UInt64, high: UInt64
        init(_ rule: (Unicode.Scalar) -> Bool) {
            var low: UInt64 = 0, high: UInt64 = 0
            for v in 0..<UInt32(0x80) where rule(Unicode.Scalar(UInt8(v))) { if v < 64 { low |= 1 << UInt64(v) } else { high |= 1 << UInt64(v - 64) } }
            self.low = low; self.high = high
        }
        @inline(__always) func contains(_ v: UInt32) -> Bool { v < 64 ? (low >> UInt64(v)) & 1 == 1 : (high >> UInt64(v & 63)) & 1 == 1 }
        static let punctuationOrSpace = ASCIISet(PronunciationStripper.punctuationOrSpaceByProperties)
        static let word = ASCIISet(PronunciationStripper.wordScalarByProperties)
    }

    /// Whether a word of `count` scalars starting with `first` could be one of `caseSensitiveWords` or, lower-cased,
    /// `pronunciationWords`: an ASCII first letter must begin one of them (folded to lower case; for a word written
    /// with an accented first letter, the letter it decomposes to), and no word is shorter than three scalars (a
    /// letter is at least one scalar however it is encoded, and lower-casing never drops one). Anything else — a
    /// first scalar beyond ASCII — is looked up.
    static func couldBeWord(first: Unicode.Scalar, count: Int) -> Bool {
        guard count >= 3 else { return false }
        guard first.value < 0x80 else { return true }
        let v = first.value
        let lower = (0x41...0x5A).contains(v) ? v | 0x20 : v
        return wordFirsts.contains(lower) || caseSensitiveFirsts.contains(v)
    }

    /// The ASCII letters the pronunciation words begin with, lower case (an accented first letter counts as its base
    /// letter: "écouter" begins with e, however it is written).
    static let wordFirsts = ASCIISet { s in
        pronunciationWords.contains { w in
            guard let f = w.unicodeScalars.first else { return false }
            return f == s || baseLetter(f) == s
        }
    }
    static let caseSensitiveFirsts = ASCIISet { s in caseSensitiveWords.contains { $0.unicodeScalars.first == s } }

    /// The ASCII letter a Latin letter with a diacritic decomposes to (é → e), else nil.
    static func baseLetter(_ s: Unicode.Scalar) -> Unicode.Scalar? {
        guard let first = String(s).decomposedStringWithCanonicalMapping.unicodeScalars.first, first.value < 0x80 else { return nil }
        return first
    }

    static let cjkFragmentScalars: [[Unicode.Scalar]] = cjkFragments.map { Array($0.unicodeScalars) }

    static func isIPA(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x0250...0x02AF: return true   // IPA Extensions: ə ɪ ʊ ʃ ʒ ŋ ɛ ɔ ɑ ɒ ʌ ɐ ʁ …
        case 0x02B0...0x02FF: return true   // Spacing modifier letters: ˈ ˌ ː ʰ ʲ ˀ …
        case 0x0300...0x036F: return true   // Combining diacritics
        case 0x1D00...0x1DBF, 0x1DC0...0x1DFF: return true
        // θ ð ŋ æ ø œ ç β χ ħ (ɸ is in the IPA extensions)
        case 0x03B8, 0x00F0, 0x014B, 0x00E6, 0x00F8, 0x0153, 0x00E7, 0x03B2, 0x03C7, 0x0127: return true
        default: return false
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
