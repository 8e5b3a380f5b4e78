import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// Every reference of an article as the citation drawer reads it, from Parsoid's HTML of the page: the reference lists
/// (`<ol class="mw-references">`, a group each), their notes in displayed order (`<li id="cite_note-…">`: back links,
/// the text in `<span class="mw-reference-text">`, its `<cite>` kind), and the in-text citations in document order
/// (`<sup class="mw-ref reference" id="cite_ref-…">`).
struct ArticleReferences: Sendable, Equatable {
    struct List: Sendable, Equatable {
        var id: String, group: String, section: String?, order: [String]
    }
    struct Link: Sendable, Equatable { var url: String, text: String }
    struct BackLink: Sendable, Equatable { var anchor: String, label: String }
    struct Note: Sendable, Equatable {
        var id: String, label: String, text: String, html: String, kind: String
        var links: [Link], citedFrom: [BackLink]
    }
    struct Citation: Sendable, Equatable { var anchor: String, noteId: String, label: String }

    var lists: [List] = []
    /// Every note, in the order of the lists.
    var notes: [Note] = []
    var citations: [Citation] = []

    var count: Int { notes.count }

    /// `{"citations":[…],"lists":[…],"references":{noteId:{…}}}`, keys sorted.
    var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + notes.reduce(0) { $0 + $1.html.utf8.count + $1.text.utf8.count + 160 } + citations.count * 80)
        out.append(contentsOf: "{\"citations\":[".utf8)
        for (i, c) in citations.enumerated() {
            if i > 0 { out.append(44) }
            member("{\"anchor\":", c.anchor, &out); member(",\"label\":", c.label, &out); member(",\"noteId\":", c.noteId, &out); out.append(125)
        }
        out.append(contentsOf: "],\"lists\":[".utf8)
        for (i, l) in lists.enumerated() {
            if i > 0 { out.append(44) }
            member("{\"group\":", l.group, &out); member(",\"id\":", l.id, &out)
            out.append(contentsOf: ",\"order\":[".utf8)
            for (j, id) in l.order.enumerated() { if j > 0 { out.append(44) }; JSONText.appendQuoted(id, to: &out) }
            out.append(contentsOf: "],\"section\":".utf8)
            if let s = l.section { JSONText.appendQuoted(s, to: &out) } else { out.append(contentsOf: "null".utf8) }
            out.append(125)
        }
        out.append(contentsOf: "],\"references\":{".utf8)
        for (i, n) in notes.enumerated() {
            if i > 0 { out.append(44) }
            JSONText.appendQuoted(n.id, to: &out)
            out.append(contentsOf: ":{\"citedFrom\":[".utf8)
            for (j, b) in n.citedFrom.enumerated() {
                if j > 0 { out.append(44) }
                member("{\"anchor\":", b.anchor, &out); member(",\"label\":", b.label, &out); out.append(125)
            }
            out.append(93)
            member(",\"html\":", n.html, &out); member(",\"kind\":", n.kind, &out); member(",\"label\":", n.label, &out)
            out.append(contentsOf: ",\"links\":[".utf8)
            for (j, l) in n.links.enumerated() {
                if j > 0 { out.append(44) }
                member("{\"text\":", l.text, &out); member(",\"url\":", l.url, &out); out.append(125)
            }
            out.append(93)
            member(",\"text\":", n.text, &out)
            out.append(125)
        }
        out.append(contentsOf: "}}".utf8)
        return out
    }

    private func member(_ key: String, _ value: String, _ out: inout [UInt8]) {
        out.append(contentsOf: key.utf8)
        JSONText.appendQuoted(value, to: &out)
    }
}
