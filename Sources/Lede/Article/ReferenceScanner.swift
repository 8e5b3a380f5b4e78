import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// Reads Parsoid HTML in one pass over its bytes: no DOM of the page, no regular expressions. Each byte is looked at a
/// bounded number of times (a tag's attributes are read at most a few times, by name); a tag left open at the end makes
/// the rest text, a comment or script left open ends the scan. Malformed markup never stops it: a note is closed by the
/// next note or the end of its list, a stray end tag is ignored, and nesting deeper than `maxDepth` inside a reference
/// is kept as text.
enum ReferenceScanner {
    static let maxDepth = 64
    static let kinds: Set<String> = ["web", "news", "book", "journal"]

    static func scan(_ html: [UInt8], lang: LanguageCode) -> ArticleReferences {
        html.withUnsafeBufferPointer { bytes in
            var scan = Scan(u: bytes, wiki: "https://\(lang.code).wikipedia.org")
            return scan.run()
        }
    }

    /// One tag: its name (lower case) and where its bytes are.
    struct Tag {
        var name: String
        var start: Int, end: Int   // `<` … `>`
        var closing: Bool
        var selfClosing: Bool
    }

    struct Scan {
        let u: UnsafeBufferPointer<UInt8>
        let wiki: String
        var result = ArticleReferences()
        var noteIndex: [String: Int] = [:]

        // Heading text, for the section a list sits in.
        var heading: [UInt8]? = nil
        var headingName = ""
        var section: String? = nil

        // An in-text citation being read.
        var citation: (anchor: String, note: String?, label: [UInt8], depth: Int)? = nil

        // The reference list being read, and its note.
        var list: (index: Int, depth: Int)? = nil
        var note: Note? = nil

        /// The note being read: a reference, so the scanner changes it in place (a struct here was copied whole, arrays and
        /// all, on every tag). Made, used and dropped by one scan on one thread: its accesses are never checked at run time.
        final class Note {
            let id: String
            @exclusivity(unchecked) var liDepth: Int
            @exclusivity(unchecked) var backLinks: [String] = []
            @exclusivity(unchecked) var backSpanDepth: Int? = nil      // inside `<span rel="mw:referencedBy">` (its span depth)
            @exclusivity(unchecked) var textDepth: Int? = nil          // inside `<span class="mw-reference-text">` (its span depth)
            @exclusivity(unchecked) var spanDepth = 0
            @exclusivity(unchecked) var html: [UInt8] = []
            @exclusivity(unchecked) var plain: [UInt8] = []
            @exclusivity(unchecked) var emitted: [String] = []         // the allowed elements written and still open
            @exclusivity(unchecked) var links: [ArticleReferences.Link] = []
            @exclusivity(unchecked) var link: (url: String?, from: Int)? = nil
            @exclusivity(unchecked) var cites: [String?] = []          // each <cite>'s kind (nil: none of the four)
            init(id: String, liDepth: Int) { self.id = id; self.liDepth = liDepth }
        }

        init(u: UnsafeBufferPointer<UInt8>, wiki: String) { self.u = u; self.wiki = wiki }

        mutating func run() -> ArticleReferences {
            var i = 0, textFrom = 0
            let n = u.count
            var tagsCanEnd = true
            while i < n {
                guard u[i] == 60, tagsCanEnd, i + 1 < n else { i += 1; continue }   // <
                let next = u[i + 1]
                if next == 33 {   // <!-- … --> and <!DOCTYPE …>
                    text(textFrom, i)
                    if i + 3 < n, u[i + 2] == 45, u[i + 3] == 45 {
                        guard let close = find([45, 45, 62], from: i + 4) else { textFrom = n; break }
                        i = close + 3
                    } else {
                        guard let close = find([62], from: i + 2) else { textFrom = n; break }
                        i = close + 1
                    }
                    textFrom = i
                    continue
                }
                guard isAlpha(next) || (next == 47 && i + 2 < n && isAlpha(u[i + 2])) else { i += 1; continue }
                guard let end = tagEnd(from: i) else { tagsCanEnd = false; i += 1; continue }
                text(textFrom, i)
                let tag = makeTag(i, end)
                i = end + 1
                if !tag.closing && (tag.name == "script" || tag.name == "style") && !tag.selfClosing {
                    // Their content is never text: to the matching end tag, or the end of the input.
                    i = endOfRaw(tag.name, from: i) ?? n
                    textFrom = i
                    continue
                }
                if tag.closing { endTag(tag) } else { startTag(tag) }
                textFrom = i
            }
            text(textFrom, n)
            finishNote()
            list = nil
            finishCitation()
            // A citation whose note is missing is dropped, not invented.
            result.citations = result.citations.filter { noteIndex[$0.noteId] != nil }
            // A note's label is what its first citation shows; else its number in its list (`[3]`, `[note 1]`).
            var shown: [String: String] = [:]
            for c in result.citations where shown[c.noteId] == nil && !c.label.isEmpty { shown[c.noteId] = c.label }
            for list in result.lists {
                for (k, id) in list.order.enumerated() {
                    guard let at = noteIndex[id] else { continue }
                    result.notes[at].label = shown[id] ?? (list.group.isEmpty ? "[\(k + 1)]" : "[\(list.group) \(k + 1)]")
                }
            }
            return result
        }

        // MARK: - Bytes

        func isAlpha(_ b: UInt8) -> Bool { (b | 0x20) >= 97 && (b | 0x20) <= 122 }

        /// The first index of `pattern` at or after `from`.
        func find(_ pattern: [UInt8], from: Int) -> Int? {
            guard let first = pattern.first, pattern.count <= u.count else { return nil }
            var j = from
            let last = u.count - pattern.count
            while j <= last {
                if u[j] == first {
                    var k = 1
                    while k < pattern.count, u[j + k] == pattern[k] { k += 1 }
                    if k == pattern.count { return j }
                }
                j += 1
            }
            return nil
        }

        /// The `>` that ends the tag at `start`, quotes respected; nil when none does.
        func tagEnd(from start: Int) -> Int? {
            var quote: UInt8 = 0
            var j = start + 1
            while j < u.count {
                let c = u[j]
                if quote != 0 { if c == quote { quote = 0 } } else if c == 34 || c == 39 { quote = c } else if c == 62 { return j }
                j += 1
            }
            return nil
        }

        /// After the end tag of a raw-text element (`</script`), case-insensitively.
        func endOfRaw(_ name: String, from: Int) -> Int? {
            let want = Array(name.utf8)
            var j = from
            while j + 1 + want.count < u.count {
                if u[j] == 60, u[j + 1] == 47 {
                    var k = 0
                    while k < want.count, (u[j + 2 + k] | 0x20) == want[k] { k += 1 }
                    if k == want.count, let e = tagEnd(from: j) { return e + 1 }
                }
                j += 1
            }
            return nil
        }

        func makeTag(_ start: Int, _ end: Int) -> Tag {
            var j = start + 1
            let closing = u[j] == 47
            if closing { j += 1 }
            let from = j
            while j < end, isAlpha(u[j]) || (u[j] >= 48 && u[j] <= 57) { j += 1 }
            return Tag(name: Self.knownName(u, from, j), start: start, end: end, closing: closing, selfClosing: u[end - 1] == 47)
        }

        /// The names the scanner acts on, as literals (no string made per tag); "" for every other element.
        static let known: [String] = ["a", "b", "i", "br", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ol", "sup", "cite", "span", "style", "script"]
        static let knownBytes: [[UInt8]] = known.map { Array($0.utf8) }

        static func knownName(_ u: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> String {
            let n = to - from
            guard n >= 1, n <= 6 else { return "" }
            outer: for (k, bytes) in knownBytes.enumerated() where bytes.count == n {
                for i in 0..<n where (u[from + i] | (u[from + i] >= 65 ? 0x20 : 0)) != bytes[i] { continue outer }
                return known[k]
            }
            return ""
        }

        /// Where an attribute's value is in the tag, nil when the tag has none of that name.
        func attributeRange(_ tag: Tag, _ wanted: StaticString) -> Range<Int>? {
            let want = UnsafeBufferPointer(start: wanted.utf8Start, count: wanted.utf8CodeUnitCount)
            var j = tag.start + 1
            while j < tag.end, u[j] != 32, u[j] != 9, u[j] != 10, u[j] != 13 { j += 1 }   // past the name
            while j < tag.end {
                while j < tag.end, u[j] == 32 || u[j] == 9 || u[j] == 10 || u[j] == 13 || u[j] == 47 { j += 1 }
                let nameStart = j
                while j < tag.end, u[j] != 61, u[j] != 32, u[j] != 9, u[j] != 10, u[j] != 13, u[j] != 47 { j += 1 }
                var matches = j - nameStart == want.count
                if matches { for k in 0..<want.count where (u[nameStart + k] | 0x20) != want[k] { matches = false; break } }
                while j < tag.end, u[j] == 32 || u[j] == 9 || u[j] == 10 || u[j] == 13 { j += 1 }
                guard j < tag.end, u[j] == 61 else { if matches { return j..<j }; continue }
                j += 1
                while j < tag.end, u[j] == 32 || u[j] == 9 || u[j] == 10 || u[j] == 13 { j += 1 }
                var valueStart = j, valueEnd = j
                if j < tag.end, u[j] == 34 || u[j] == 39 {
                    let q = u[j]
                    valueStart = j + 1
                    j += 1
                    while j < tag.end, u[j] != q { j += 1 }
                    valueEnd = j
                    j += 1
                } else {
                    while j < tag.end, u[j] != 32, u[j] != 9, u[j] != 10, u[j] != 13 { j += 1 }
                    valueEnd = j
                }
                if matches { return valueStart..<max(valueStart, valueEnd) }
            }
            return nil
        }

        /// An attribute's value (character references in it decoded), nil when the tag has none of that name.
        func attribute(_ tag: Tag, _ wanted: StaticString) -> String? {
            guard let r = attributeRange(tag, wanted) else { return nil }
            let raw = UnsafeBufferPointer(rebasing: u[r])
            return raw.contains(38) ? HTMLText.plain(textContent: ArraySlice(raw)) : String(decoding: raw, as: UTF8.self)
        }

        /// Whether an attribute's value holds `needle` (as a space-separated token when `token`), read in place.
        func attribute(_ tag: Tag, _ wanted: StaticString, holds needle: StaticString, token: Bool) -> Bool {
            guard let r = attributeRange(tag, wanted) else { return false }
            let want = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
            guard want.count <= r.count else { return false }
            var j = r.lowerBound
            while j + want.count <= r.upperBound {
                var k = 0
                while k < want.count, u[j + k] == want[k] { k += 1 }
                if k == want.count {
                    let before = j == r.lowerBound || u[j - 1] == 32, after = j + k == r.upperBound || u[j + k] == 32
                    if !token || (before && after) { return true }
                }
                j += 1
            }
            return false
        }

        func hasClass(_ tag: Tag, _ name: StaticString) -> Bool { attribute(tag, "class", holds: name, token: true) }

        // MARK: - Text

        mutating func text(_ from: Int, _ to: Int) {
            guard from < to else { return }
            let piece = UnsafeBufferPointer(rebasing: u[from..<to])
            if heading != nil, heading!.count < 400 { heading!.append(contentsOf: piece.prefix(400 - heading!.count)) }
            if citation != nil, citation!.label.count < 100 { citation!.label.append(contentsOf: piece.prefix(100 - citation!.label.count)) }
            guard let n = note, n.textDepth != nil else { return }
            n.plain.append(contentsOf: piece)
            for b in piece {
                switch b {
                case 60: n.html.append(contentsOf: "&lt;".utf8)
                case 62: n.html.append(contentsOf: "&gt;".utf8)
                default: n.html.append(b)
                }
            }
        }

        // MARK: - Elements

        mutating func startTag(_ tag: Tag) {
            let name = tag.name
            switch name {
            case "h1", "h2", "h3", "h4", "h5", "h6":
                if note == nil, citation == nil { heading = []; headingName = name }
            case "sup":
                if var c = citation { c.depth += 1; citation = c; return }
                if note?.textDepth == nil, let id = attribute(tag, "id"), id.hasPrefix("cite_ref"), hasClass(tag, "mw-ref") || hasClass(tag, "reference") {
                    citation = (id, nil, [], 1)
                    return
                }
            case "ol":
                if var l = list { l.depth += 1; list = l; break }
                if hasClass(tag, "mw-references") {
                    let group = attribute(tag, "data-mw-group") ?? ""
                    let id = attribute(tag, "id").flatMap { $0.isEmpty ? nil : $0 } ?? "references-\(result.lists.count + 1)"
                    result.lists.append(.init(id: id, group: group, section: section, order: []))
                    list = (result.lists.count - 1, 1)
                    return
                }
            case "li":
                if let l = list, l.depth == 1, let id = attribute(tag, "id"), id.hasPrefix("cite_note") {
                    finishNote()
                    note = Note(id: id, liDepth: 1)
                    return
                }
                if let n = note { n.liDepth += 1 }
            default: break
            }
            if citation != nil, name == "a", citation!.note == nil, let href = attribute(tag, "href"), let hash = href.firstIndex(of: "#") {
                citation!.note = String(href[href.index(after: hash)...])
            }
            guard let n = note else { return }
            if name == "span" && !tag.selfClosing {
                n.spanDepth += 1
                if n.textDepth == nil, n.backSpanDepth == nil {
                    if hasClass(tag, "mw-reference-text") { n.textDepth = n.spanDepth; return }
                    if attribute(tag, "rel", holds: "mw:referencedBy", token: false) { n.backSpanDepth = n.spanDepth; return }
                }
            }
            if n.textDepth == nil {
                if name == "a", let href = attribute(tag, "href"), n.backSpanDepth != nil || attribute(tag, "rel", holds: "mw:referencedBy", token: false),
                   let hash = href.firstIndex(of: "#") {
                    n.backLinks.append(String(href[href.index(after: hash)...]))
                }
                return
            }
            // Inside the reference's text: inline formatting kept, links made absolute, everything else dropped.
            switch name {
            case "br": n.html.append(32); n.plain.append(32)
            case "cite":
                let classes = (attribute(tag, "class") ?? "").split(separator: " ").map(String.init)
                n.cites.append(classes.contains("citation") ? classes.first { ReferenceScanner.kinds.contains($0) } : nil)
                open("cite", "<cite>", n)
            case "i", "b", "span":
                if !tag.selfClosing { open(name, "<\(name)>", n) }
            case "a":
                let url = attribute(tag, "href").flatMap(absolute)
                n.link = (url, n.plain.count)
                if let url, url.hasPrefix("https://") {
                    var a = Array("<a href=\"".utf8)
                    for b in url.utf8 {
                        switch b {
                        case 38: a.append(contentsOf: "&amp;".utf8)
                        case 34: a.append(contentsOf: "&quot;".utf8)
                        case 60: a.append(contentsOf: "&lt;".utf8)
                        default: a.append(b)
                        }
                    }
                    a.append(contentsOf: "\">".utf8)
                    open("a", String(decoding: a, as: UTF8.self), n)
                }
            default: break
            }
        }

        /// Writes an allowed element's start tag, unless the nesting is deeper than Lede keeps.
        func open(_ name: String, _ text: String, _ n: Note) {
            guard n.emitted.count < ReferenceScanner.maxDepth else { return }
            n.emitted.append(name)
            n.html.append(contentsOf: text.utf8)
        }

        mutating func endTag(_ tag: Tag) {
            let name = tag.name
            if let h = heading, name == headingName {
                let t = HTMLText.plain(textContent: h[...])
                section = t.isEmpty ? section : t
                heading = nil
            }
            if name == "sup", var c = citation {
                c.depth -= 1
                citation = c
                if c.depth == 0 { finishCitation() }
                return
            }
            if name == "ol", var l = list {
                l.depth -= 1
                list = l
                if l.depth == 0 { finishNote(); list = nil }
                return
            }
            if name == "li", let n = note {
                n.liDepth -= 1
                if n.liDepth == 0 { finishNote() }
                return
            }
            guard let n = note else { return }
            if name == "span" {
                if n.textDepth == n.spanDepth {
                    closeAll(n)
                    n.textDepth = nil
                } else if n.backSpanDepth == n.spanDepth {
                    n.backSpanDepth = nil
                }
                n.spanDepth = max(0, n.spanDepth - 1)
            }
            guard n.textDepth != nil else { return }
            if name == "a", let link = n.link {
                let text = HTMLText.plain(textContent: n.plain[link.from...])
                if let url = link.url { n.links.append(.init(url: url, text: text)) }
                n.link = nil
            }
            guard ["i", "b", "cite", "span", "a"].contains(name), let at = n.emitted.lastIndex(of: name) else { return }
            while n.emitted.count > at {
                let open = n.emitted.removeLast()
                n.html.append(contentsOf: "</\(open)>".utf8)
            }
        }

        func closeAll(_ n: Note) {
            while let open = n.emitted.popLast() { n.html.append(contentsOf: "</\(open)>".utf8) }
        }

        /// A link's URL as a reader opens it: wiki links against the article's wiki, protocol-relative ones as
        /// https; nil for an in-page anchor or anything but http(s).
        func absolute(_ href: String) -> String? {
            // Only what a URI may hold (Parsoid percent-encodes the rest): no spaces, controls, quotes or non-ASCII.
            guard !href.utf8.contains(where: { $0 <= 32 || $0 >= 127 || $0 == 34 || $0 == 60 || $0 == 62 || $0 == 92 || $0 == 94 || $0 == 96
                                               || $0 == 123 || $0 == 124 || $0 == 125 }) else { return nil }
            if href.hasPrefix("https://") || href.hasPrefix("http://") { return href }
            if href.hasPrefix("//") { return "https:" + href }
            if href.hasPrefix("./") { return wiki + "/wiki/" + href.dropFirst(2) }
            if href.hasPrefix("/wiki/") { return wiki + href }
            return nil
        }

        mutating func finishCitation() {
            guard let c = citation else { return }
            citation = nil
            guard let noteID = c.note, !noteID.isEmpty else { return }
            let label = HTMLText.plain(textContent: c.label[...])
            result.citations.append(.init(anchor: c.anchor, noteId: noteID, label: label))
        }

        mutating func finishNote() {
            guard let n = note, let l = list else { note = nil; return }
            note = nil
            closeAll(n)
            guard noteIndex[n.id] == nil else { return }   // a note id seen before: the first one stands
            let kind = n.cites.count == 1 ? (n.cites[0] ?? "generic") : "generic"
            let labels = n.backLinks.count == 1 ? ["^"] : n.backLinks.indices.map(Self.backLabel)
            noteIndex[n.id] = result.notes.count
            result.notes.append(.init(id: n.id, label: "", text: HTMLText.plain(textContent: n.plain[...]),
                                      html: String(decoding: n.html, as: UTF8.self), kind: kind, links: n.links,
                                      citedFrom: zip(n.backLinks, labels).map { .init(anchor: $0, label: $1) }))
            result.lists[l.index].order.append(n.id)
        }

        /// a, b, … z, aa, ab, … as Wikipedia labels the back links of a note cited more than once.
        static func backLabel(_ i: Int) -> String {
            var i = i, s = ""
            repeat { s = String(UnicodeScalar(UInt8(97 + i % 26))) + s; i = i / 26 - 1 } while i >= 0
            return s
        }
    }
}
