/// HTML fragments as Wikimedia sends them (section headings, captions, file description pages' `extmetadata`)
/// reduced to the plain text a label shows: tags removed (`<br>` and block ends become a space), character
/// references decoded (named ones HTML pages use, and numeric ones), runs of white space collapsed, trimmed.
/// Script and style contents are dropped. Never fails: malformed markup is read as text where it cannot be a tag.
/// Linear in its input: no stretch is scanned twice for a tag's end — a tag still open at the end of the input makes
/// the rest text (no later `<` can close), and inside script and style each tag found is stepped over whole.
public enum HTMLText {
    /// Text as HTML: its special characters as character references (`&`, `<`, `>` and both quotes, so the result is
    /// safe in text and in a quoted attribute value alike).
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    public static func plain(_ html: String) -> String {
        let u = Array(html.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var pendingSpace = false
        // Once a tag ran to the end of the input unclosed, no later `<` can find an end either.
        var tagsCanEnd = true
        func emit(_ c: Unicode.Scalar) {
            if c.properties.isWhitespace {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(" "); pendingSpace = false }
                out.append(c)
            }
        }
        while i < u.count {
            let c = u[i]
            if c == "<", tagsCanEnd, let end = tagEnd(u, from: i, unclosed: &tagsCanEnd) {
                let name = tagName(u, i + 1, end)
                if name == "script" || name == "style" {
                    // Skip to the matching close tag (or the end), stepping over every tag found on the way.
                    var j = end + 1
                    var more = true
                    while j < u.count {
                        if u[j] == "<", more, let e = tagEnd(u, from: j, unclosed: &more) {
                            if u[j + 1] == "/", tagName(u, j + 2, e) == name { j = e; break }
                            j = e + 1
                            continue
                        }
                        j += 1
                    }
                    i = j + 1
                    continue
                }
                if breaking.contains(name) { pendingSpace = !out.isEmpty }
                i = end + 1
                continue
            }
            if c == "&", let (decoded, next) = reference(u, at: i) {
                for s in decoded.unicodeScalars { emit(s) }
                i = next
                continue
            }
            emit(c)
            i += 1
        }
        return String(out)
    }

    /// Elements whose boundaries separate words.
    static let breaking: Set<String> = ["br", "p", "div", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3", "h4", "h5", "h6", "dd", "dt", "hr"]

    /// The index of the `>` closing a tag that starts at `start` (`<`), or nil when this `<` does not open a tag.
    /// `tagsCanEnd` turns false when the search ran to the end of the input.
    static func tagEnd(_ u: [Unicode.Scalar], from start: Int, unclosed tagsCanEnd: inout Bool) -> Int? {
        guard start + 1 < u.count else { return nil }
        let first = u[start + 1]
        guard first == "/" || first == "!" || first.properties.isAlphabetic else { return nil }
        var quote: Unicode.Scalar?
        var j = start + 1
        while j < u.count {
            let c = u[j]
            if let q = quote { if c == q { quote = nil } } else if c == "\"" || c == "'" { quote = c } else if c == ">" { return j }
            j += 1
        }
        tagsCanEnd = false
        return nil
    }

    /// The lowercased element name of the tag between `from` and `end` (a leading `/` skipped).
    static func tagName(_ u: [Unicode.Scalar], _ from: Int, _ end: Int) -> String {
        var j = from
        if j < end, u[j] == "/" { j += 1 }
        var name = String.UnicodeScalarView()
        while j < end, u[j].properties.isAlphabetic || ("0"..."9").contains(u[j]) { name.append(u[j]); j += 1 }
        return String(name).lowercased()
    }

    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "ndash": "–", "mdash": "—",
        "hellip": "…", "copy": "©", "reg": "®", "laquo": "«", "raquo": "»", "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”",
        "times": "×", "middot": "·", "deg": "°", "eacute": "é", "egrave": "è", "uuml": "ü", "ouml": "ö", "auml": "ä", "szlig": "ß",
    ]

    /// A character reference at `i` (`&amp;`, `&#233;`, `&#xE9;`) and the index after it; nil when it is not one.
    static func reference(_ u: [Unicode.Scalar], at i: Int) -> (String, Int)? {
        var j = i + 1
        var body = String.UnicodeScalarView()
        while j < u.count, j - i <= 10, u[j] != ";" { body.append(u[j]); j += 1 }
        guard j < u.count, u[j] == ";", !body.isEmpty else { return nil }
        let text = String(body)
        if text.hasPrefix("#") {
            let digits = text.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let v = value, v != 0, let scalar = Unicode.Scalar(v) else { return ("\u{FFFD}", j + 1) }
            return (String(Character(scalar)), j + 1)
        }
        guard let decoded = named[text] else { return nil }
        return (decoded, j + 1)
    }
}

/// The text of HTML text content (no tags in it; a reference's parts as the citation drawer reads them) as `plain` gives it — character references decoded, runs of
/// white space (Unicode's White_Space) as one space, trimmed — read over UTF-8 bytes, without a scalar array or a
/// property lookup per character.
extension HTMLText {
    public static func plain(textContent bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var pendingSpace = false
        func emit(_ b: UInt8) {
            if pendingSpace { out.append(32); pendingSpace = false }
            out.append(b)
        }
        var i = bytes.startIndex
        let end = bytes.endIndex
        while i < end {
            let b = bytes[i]
            if let w = whiteSpaceLength(bytes, i) { pendingSpace = !out.isEmpty; i += w; continue }
            if b == 38, let (decoded, next) = reference(bytes, i) {
                for c in decoded.unicodeScalars {
                    if c.properties.isWhitespace { pendingSpace = !out.isEmpty } else { for d in String(c).utf8 { emit(d) } }
                }
                i = next
                continue
            }
            emit(b)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The length of the White_Space character at `i`, nil when there is none.
    private static func whiteSpaceLength(_ u: ArraySlice<UInt8>, _ i: Int) -> Int? {
        let b = u[i]
        if b < 0x80 { return b == 32 || (b >= 9 && b <= 13) ? 1 : nil }
        guard i + 1 < u.endIndex else { return nil }
        let b1 = u[i + 1]
        if b == 0xC2 { return b1 == 0x85 || b1 == 0xA0 ? 2 : nil }
        guard i + 2 < u.endIndex else { return nil }
        let b2 = u[i + 2]
        if b == 0xE1, b1 == 0x9A, b2 == 0x80 { return 3 }                                   // U+1680
        if b == 0xE2, b1 == 0x80, (b2 >= 0x80 && b2 <= 0x8A) || b2 == 0xA8 || b2 == 0xA9 || b2 == 0xAF { return 3 }   // U+2000–200A, 2028, 2029, 202F
        if b == 0xE2, b1 == 0x81, b2 == 0x9F { return 3 }                                   // U+205F
        if b == 0xE3, b1 == 0x80, b2 == 0x80 { return 3 }                                   // U+3000
        return nil
    }

    /// A character reference at `i` as `HTMLText` reads one (named ones it knows, numeric ones), and the index after it.
    private static func reference(_ u: ArraySlice<UInt8>, _ i: Int) -> (String, Int)? {
        var j = i + 1
        while j < u.endIndex, j - i <= 10, u[j] != 59 { j += 1 }
        guard j < u.endIndex, u[j] == 59, j > i + 1 else { return nil }
        let body = String(decoding: u[(i + 1)..<j], as: UTF8.self)
        guard let decoded = HTMLText.reference(Array("&\(body);".unicodeScalars), at: 0) else { return nil }
        return (decoded.0, j + 1)
    }
}
