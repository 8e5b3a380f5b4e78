import Foundation
import XCTest
import TestSupport
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// The reference scanner on Parsoid HTML shaped as Parsoid writes it (the sup/ol/li/span structure of
/// `GET /w/rest.php/v1/page/{title}/html`, with its `data-mw`, `about` and `typeof` attributes).
final class ReferencesTests: XCTestCase {
    /// Shaped as Parsoid writes a page: five citations of one note, a `note` group, a citation of a note that does not
    /// exist, a citation inside a script, back links as one `<a>` and as a `<span>` of them, `data-mw` everywhere.
    static let page = try! String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/parsoid/references.html"), encoding: .utf8)

    func scan(_ html: String, lang: String = "en") -> ArticleReferences {
        ReferenceScanner.scan(Array(html.utf8), lang: LanguageCode(lang)!)
    }

    func testEveryListNoteAndCitationOfAParsoidPage() throws {
        let r = scan(Self.page)
        XCTAssertEqual(r.lists.map(\.group), ["note", ""])
        XCTAssertEqual(r.lists.map(\.section), ["Notes", "References (cited)"])
        XCTAssertEqual(r.lists[1].id, "refs-main")
        XCTAssertEqual(r.lists[0].order, ["cite_note-n1"])
        XCTAssertEqual(r.lists[1].order, ["cite_note-Born-1", "cite_note-2", "cite_note-3", "cite_note-4", "cite_note-5"])
        XCTAssertEqual(r.count, 6)
        // Citations in document order, the one whose note is missing dropped, the one in a <script> never read.
        XCTAssertEqual(r.citations.map(\.anchor), (0..<5).map { "cite_ref-Born_1-\($0)" } + ["cite_ref-2", "cite_ref-3", "cite_ref-4", "cite_ref-n1"])
        XCTAssertEqual(r.citations.map(\.label), ["[1]", "[1]", "[1]", "[1]", "[1]", "[2]", "[3]", "[4]", "[note 1]"])
        XCTAssertEqual(r.citations.first?.noteId, "cite_note-Born-1")

        let born = try XCTUnwrap(r.notes.first { $0.id == "cite_note-Born-1" })
        XCTAssertEqual(born.label, "[1]")
        XCTAssertEqual(born.citedFrom.map(\.label), ["a", "b", "c", "d", "e"])
        XCTAssertEqual(born.citedFrom.map(\.anchor), (0..<5).map { "cite_ref-Born_1-\($0)" })
        XCTAssertEqual(born.kind, "web")
        XCTAssertEqual(born.text, "\"Albert Einstein – Facts\". NobelPrize.org. Retrieved 2026.")
        XCTAssertEqual(born.links, [.init(url: "https://www.nobelprize.org/prizes/physics/1921/einstein/facts/?a=1&b=2", text: "Albert Einstein – Facts")])
        XCTAssertEqual(born.html, #"<cite>"<a href="https://www.nobelprize.org/prizes/physics/1921/einstein/facts/?a=1&amp;b=2">Albert Einstein – Facts</a>". <i>NobelPrize.org</i>. Retrieved 2026.</cite><span></span>"#,
                       "inline formatting only: no class, id, data-mw, title or style, and the style element's text gone")

        let book = try XCTUnwrap(r.notes.first { $0.id == "cite_note-2" })
        XCTAssertEqual(book.kind, "book")
        XCTAssertEqual(book.citedFrom, [.init(anchor: "cite_ref-2", label: "^")], "one back link as an <a>")
        XCTAssertEqual(book.links.map(\.url), ["https://en.wikipedia.org/wiki/Abraham_Pais", "https://archive.org/details/subtle"])
        XCTAssertEqual(book.html, #"<cite><a href="https://en.wikipedia.org/wiki/Abraham_Pais">Pais, Abraham</a> (1982). <i><b>Subtle is the Lord</b></i>. <a href="https://archive.org/details/subtle">archive</a>.</cite>"#)

        let two = try XCTUnwrap(r.notes.first { $0.id == "cite_note-3" })
        XCTAssertEqual(two.kind, "generic", "two cites")
        XCTAssertFalse(two.html.contains("alert"), two.html)
        XCTAssertFalse(two.html.contains("javascript"), two.html)
        XCTAssertEqual(two.links, [], "a javascript: link is no link")

        let plain = try XCTUnwrap(r.notes.first { $0.id == "cite_note-4" })
        XCTAssertEqual(plain.kind, "generic")
        XCTAssertEqual(plain.text, "Whittaker 1955, p. 37. See Whittaker.")
        let uncited = try XCTUnwrap(r.notes.first { $0.id == "cite_note-5" })
        XCTAssertEqual(uncited.label, "[5]", "its number in its list")
        XCTAssertEqual(uncited.citedFrom, [])
        let note = try XCTUnwrap(r.notes.first { $0.id == "cite_note-n1" })
        XCTAssertEqual(note.label, "[note 1]")
        XCTAssertEqual(note.text, "Einstein's annus mirabilis & its papers.")
        XCTAssertEqual(note.html, "Einstein's <i>annus mirabilis</i> &amp; its papers.")
    }

    func testRelativeLinksAreMadeAbsoluteAgainstTheArticlesOwnWiki() {
        let html = ##"<ol class="mw-references references"><li id="cite_note-1"><span class="mw-reference-text"><a href="./K%C3%B6nig">K</a> <a href="/wiki/X">X</a> <a href="#cite_note-2">in page</a></span></li></ol>"##
        let r = scan(html, lang: "de")
        XCTAssertEqual(r.notes.first?.links.map(\.url), ["https://de.wikipedia.org/wiki/K%C3%B6nig", "https://de.wikipedia.org/wiki/X"])
        XCTAssertEqual(r.notes.first?.html, #"<a href="https://de.wikipedia.org/wiki/K%C3%B6nig">K</a> <a href="https://de.wikipedia.org/wiki/X">X</a> in page"#)
    }

    func testPlainTextOverBytesIsHTMLTextsPlainForText() {
        for t in ["  a  b ", "a &nbsp;b", "x&amp;y &lt;z&gt;", "p.\u{A0}12–15\u{3000}x", "\u{2003}em\u{2009}thin\u{202F}", "&#233;&#xE9;&#0;&bogus; &", "é \t\n x",
                  "Zur Elektrodynamik bewegter Körper", "", "&nbsp;", "a&#32;b"] {
            XCTAssertEqual(HTMLText.plain(textContent: Array(t.utf8)[...]), HTMLText.plain(t), t.debugDescription)
        }
    }

    /// Fuzz finding: an href with spaces in it was kept as a link.
    func testAnHrefThatIsNoURIIsNoLink() {
        let html = ##"<ol class="mw-references references"><li id="cite_note-1"><span class="mw-reference-text"><a href="./A b">x</a> <a href="https://e.org/ü">y</a> <a href="https://e.org/%C3%BC">z</a></span></li></ol>"##
        let r = scan(html)
        XCTAssertEqual(r.notes.first?.links.map(\.url), ["https://e.org/%C3%BC"])
        XCTAssertEqual(r.notes.first?.html, #"x y <a href="https://e.org/%C3%BC">z</a>"#)
    }

    func testMalformedHTMLKeepsTheWellFormedNotesAndNeverStops() {
        var html = #"</ol></li><ol class="mw-references references">"#
        html += #"<li id="cite_note-1"><span class="mw-reference-text">One <b>bold <i>open"#   // unclosed tags, no </li>
        html += #"<li id="cite_note-2"><span class="mw-reference-text">Two</span></li>"#
        html += #"</span></span></span></ol></ol><li id="cite_note-stray"><span class="mw-reference-text">outside</span></li>"#
        html += #"<ol class="mw-references references"><li id="cite_note-3"><span class="mw-reference-text">Three <a href="https://x.org/"#   // a tag open at the end
        let r = scan(html)
        XCTAssertEqual(r.lists.count, 2)
        XCTAssertEqual(r.lists[0].order, ["cite_note-1", "cite_note-2"])
        XCTAssertEqual(r.notes.first?.html, "One <b>bold <i>open</i></b>", "every open element closed")
        XCTAssertEqual(r.notes[1].text, "Two")
        XCTAssertFalse(r.notes.contains { $0.id == "cite_note-stray" }, "a note outside any list is not a note")
        XCTAssertEqual(r.lists[1].order, ["cite_note-3"])
        XCTAssertEqual(r.notes.last?.text, "Three <a href=\"https://x.org/", "a tag that never closes is text")
        // No references at all, and nothing.
        XCTAssertEqual(scan("<p>No references here.</p>"), ArticleReferences())
        XCTAssertEqual(scan(""), ArticleReferences())
        XCTAssertEqual(scan("<!-- unclosed comment <ol class=\"mw-references\">").count, 0)
    }

    func testDeepNestingIsBoundedAndTheOutputIsValidJSON() throws {
        let deep = String(repeating: "<b>", count: 10_000) + "x" + String(repeating: "</b>", count: 10_000)
        let r = scan(#"<ol class="mw-references references"><li id="cite_note-1"><span class="mw-reference-text">"# + deep + "</span></li></ol>")
        XCTAssertEqual(r.notes.first?.text, "x")
        XCTAssertEqual(r.notes.first?.html.components(separatedBy: "<b>").count, ReferenceScanner.maxDepth + 1)
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(r.jsonBytes)))
        XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(scan(Self.page).jsonBytes)))
    }
}

/// The route over HTTP, against a fake Wikimedia that serves the embedded default's Parsoid HTML.
final class ReferencesRouteTests: FakeUpstreamTestCase {
    /// No test here is about a deadline: a generous one, so a 9 MB page built, compressed and sent by the fake in a debug
    /// build on a busy machine is refused for its size (what the test asserts), never for its time.
    override func configure(_ options: inout Options) {
        super.configure(&options)
        options.upstreamTimeout = 30
    }

    func testTheDrawersDataInOneCallKeptPerTitleAndAnswered304() async throws {
        let (status, body, http) = try get(server, "/article/Albert_Einstein/references?lang=en").statusJSONAndResponse
        XCTAssertEqual(status, 200)
        XCTAssertEqual(http.header("Cache-Control"), "public, max-age=600")
        XCTAssertEqual((body["lists"] as? [[String: Any]])?.map { $0["group"] as? String }, ["note", ""])
        XCTAssertEqual((body["citations"] as? [Any])?.count, 6)
        let nobel = (body["references"] as? [String: Any])?["cite_note-Nobel-1"] as? [String: Any]
        XCTAssertEqual((nobel?["citedFrom"] as? [[String: Any]])?.map { $0["label"] as? String }, ["a", "b", "c"])
        XCTAssertEqual(nobel?["kind"] as? String, "web")
        XCTAssertEqual(fake.requests(kind: "html").count, 1)
        XCTAssertTrue(fake.requests(kind: "html")[0].path.hasSuffix("/w/rest.php/v1/page/Albert_Einstein/html"))
        let tag = try XCTUnwrap(http.header("ETag"))
        let (again, _, _) = try get(server, "/article/Albert_Einstein/references?lang=en").statusJSONAndResponse
        XCTAssertEqual(again, 200)
        XCTAssertEqual(fake.requests(kind: "html").count, 1, "kept: not fetched nor scanned again")
        let raw = try RawClient(port: server.port)
        raw.send("GET /article/Albert_Einstein/references?lang=en HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tag)\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(raw.readResponse()?.status, 304)
    }

    func testAPageWithoutReferencesAMissingPageAndAnOversizedOne() async throws {
        let (none, body, _) = try get(server, "/article/Vondelpark/references").statusJSONAndResponse
        XCTAssertEqual(none, 200)
        XCTAssertEqual((body["lists"] as? [Any])?.count, 0)
        let (missing, problem, _) = try get(server, "/article/No_such_page/references").statusJSONAndResponse
        XCTAssertEqual(missing, 404)
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:not-found")
        fake.set("html", .oversized(9 << 20))
        let (large, tooLarge, _) = try get(server, "/article/Amsterdam/references").statusJSONAndResponse
        XCTAssertEqual(large, 502)
        XCTAssertEqual(tooLarge["type"] as? String, "urn:lede:problem:upstream-too-large")
        let (bad, _, _) = try get(server, "/article/A%7CB/references").statusJSONAndResponse
        XCTAssertEqual(bad, 400)
    }
}
