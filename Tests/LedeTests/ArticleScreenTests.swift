import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPServer
import HTTPClient
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Seed 000, Article View, table of contents, Switching article language, Article Header Image Gallery and Gallery
/// View with Image Metadata, "Read More": `GET /article/{title}` over HTTP against the fake Wikimedia on loopback,
/// which answers each call in its real shape (parse, langlinks, media-list, imageinfo).
final class ArticleScreenTests: FakeUpstreamTestCase {
    func items(_ body: [String: Any], _ part: String) -> [[String: Any]] { ((body[part] as? [String: Any])?["items"] as? [[String: Any]]) ?? [] }
    func status(_ body: [String: Any], _ part: String) -> String? { (body[part] as? [String: Any])?["status"] as? String }

    func testTheWholeScreenInOneCall() async throws {
        let (code, body, http) = try get(server, "/article/Albert_Einstein?lang=en").statusJSONAndResponse
        XCTAssertEqual(code, 200)
        let card = try XCTUnwrap(body["card"] as? [String: Any])
        XCTAssertEqual(card["title"] as? String, "Albert Einstein")
        XCTAssertFalse((card["extract"] as? String ?? "").contains("/ˈaɪnstaɪn/"), "pronunciation stripped from the card")
        // Contents: document order, numbers, markup removed from titles.
        let sections = items(body, "sections")
        XCTAssertEqual(sections.map { $0["number"] as? String }, ["1", "1.1", "1.2", "1.3", "2", "2.1", "2.2", "2.2.1", "3", "4"])
        XCTAssertEqual(sections[2]["title"] as? String, "Annus mirabilis papers")
        XCTAssertEqual(sections[7]["level"] as? Int, 3)
        XCTAssertEqual(sections[0]["anchor"] as? String, "Life_and_career")
        // Gallery: only files shown in the gallery, credits as text.
        let media = items(body, "media")
        XCTAssertEqual(media.map { $0["title"] as? String }, ["File:Albert_Einstein_Head.jpg", "File:Einstein_1921_by_F_Schmutzer_-_restoration.jpg", "File:Einstein_lecture_1934.webm"])
        XCTAssertEqual(media[0]["artist"] as? String, "Orren Jack Turner, Princeton, N.J.")
        XCTAssertEqual(media[0]["credit"] as? String, "Library of Congress")
        XCTAssertEqual(media[0]["description"] as? String, "Albert Einstein, head-and-shoulders portrait, 1947 & later.")
        XCTAssertEqual(media[0]["attributionRequired"] as? Bool, false)
        XCTAssertEqual((media[0]["license"] as? [String: Any])?["name"] as? String, "Public domain")
        XCTAssertEqual((media[0]["original"] as? [String: Any])?["width"] as? Int, 2304)
        XCTAssertEqual((media[0]["thumbnail"] as? [String: Any])?["width"] as? Int, 640)
        XCTAssertEqual(media[2]["type"] as? String, "video")
        XCTAssertEqual(media[2]["artist"] as? String, "Unknown author (Pathé)")
        XCTAssertEqual(media[2]["description"] as? String, "Film of a lecture <1934>")
        XCTAssertEqual((media[2]["license"] as? [String: Any])?["url"] as? String, "https://creativecommons.org/licenses/by-sa/4.0")
        // Read more: like /related — never the article itself, a disambiguation page or another namespace.
        let more = items(body, "readMore")
        XCTAssertFalse(more.isEmpty); XCTAssertLessThanOrEqual(more.count, 3)
        for c in more {
            XCTAssertEqual(c["type"] as? String, "standard"); XCTAssertNotEqual(c["title"] as? String, "Albert Einstein")
            XCTAssertFalse((c["title"] as? String ?? ":").contains(":"))
        }
        let urls = try XCTUnwrap(body["urls"] as? [String: String])
        XCTAssertEqual(urls["mobileHtml"], "https://en.wikipedia.org/api/rest_v1/page/mobile-html/Albert_Einstein")
        XCTAssertEqual(urls["desktop"], "https://en.wikipedia.org/wiki/Albert_Einstein")
        XCTAssertEqual(http.header("Cache-Control"), "public, max-age=300")
        XCTAssertEqual(http.header("Vary"), "Accept, Accept-Encoding, Accept-Language, Authorization")
        XCTAssertEqual(body["editable"] as? Bool, false, "an anonymous reader: this deployment sends no anonymous edits (the default)")
        XCTAssertEqual(fake.requests(kind: "files").count, 1, "the credits of every gallery file in one call")
    }

    /// Switching article language: the reader's Accept-Language editions first, the rest by autonym.
    func testTheLanguagePickerPutsTheReadersLanguagesFirstThenSortsByAutonym() async throws {
        let (_, body, _) = try get(server, "/article/Albert_Einstein?lang=en", ["Accept-Language": "ja, de;q=0.8, nl;q=0.5"]).statusJSONAndResponse
        let langs = items(body, "languages").map { $0["lang"] as? String }
        XCTAssertEqual(langs, ["ja", "de", "es", "fr", "it", "ar", "zh"], "ja and de first (nl has no edition); then español, français, italiano, العربية, 中文")
        let ja = items(body, "languages")[0]
        XCTAssertEqual(ja["autonym"] as? String, "日本語")
        XCTAssertEqual(ja["title"] as? String, "アルベルト・アインシュタイン")
        XCTAssertTrue((ja["url"] as? String ?? "").hasPrefix("https://ja.wikipedia.org/wiki/"))
        let (_, plain, _) = try get(server, "/article/Albert_Einstein?lang=en").statusJSONAndResponse
        XCTAssertEqual(items(plain, "languages").map { $0["lang"] as? String }, ["de", "es", "fr", "it", "ar", "zh", "ja"], "by autonym alone (Deutsch, español, …)")
    }

    /// Readers' orders come from one shared answer: random `Accept-Language` orders add no entry to the shared cache
    /// and make no upstream call, and each reader still gets their editions first, in their order.
    func testRandomAcceptLanguageOrdersAddNoSharedEntriesAndCallNoUpstream() throws {
        XCTAssertEqual(try get(server, "/article/Albert_Einstein?lang=en").status, 200)
        let entries = app.responses.snapshot.entries
        let calls = fake.requests.count
        var generator = SeededGenerator(state: 68)
        var seen: Set<String> = []
        for _ in 0..<40 {
            let order = ["ja", "de", "fr", "es", "it", "ar", "zh", "nl"].shuffled(using: &generator).prefix(4)
            let header = order.enumerated().map { i, l in i == 0 ? l : "\(l);q=0.\(9 - i)" }.joined(separator: ", ")
            let (status, body, response) = try get(server, "/article/Albert_Einstein?lang=en", ["Accept-Language": header]).statusJSONAndResponse
            XCTAssertEqual(status, 200)
            XCTAssertEqual(response.header("Vary"), "Accept, Accept-Encoding, Accept-Language, Authorization")
            let langs = items(body, "languages").compactMap { $0["lang"] as? String }
            let wanted = order.filter { $0 != "nl" }   // nl has no edition of this article
            XCTAssertEqual(Array(langs.prefix(wanted.count)), Array(wanted), header)
            XCTAssertEqual(Set(langs), ["ja", "de", "es", "fr", "it", "ar", "zh"], "every edition once")
            seen.insert(header)
        }
        XCTAssertGreaterThan(seen.count, 20)
        XCTAssertEqual(app.responses.snapshot.entries, entries, "no shared entry per order")
        XCTAssertEqual(fake.requests.count, calls, "no upstream call per order")
    }

    func testAnArticleWithNoImagesHasAnEmptyGalleryNotAPlaceholder() async throws {
        let (code, body, _) = try get(server, "/article/Dam_Square").statusJSONAndResponse
        XCTAssertEqual(code, 200)
        XCTAssertEqual(status(body, "media"), "ok")
        XCTAssertEqual(items(body, "media").count, 0)
        XCTAssertEqual(fake.requests(kind: "files").count, 0, "no credits call for an empty gallery")
    }

    func testOnePartFailingIsAPlaceholderAndTheRestArrive() async throws {
        fake.set("languages", .status(503, "{}"))
        let (code, body, http) = try get(server, "/article/Amsterdam").statusJSONAndResponse
        XCTAssertEqual(code, 200)
        XCTAssertEqual(status(body, "languages"), "placeholder")
        XCTAssertEqual((body["languages"] as? [String: Any])?["reason"] as? String, "upstream-error")
        XCTAssertNotNil((body["languages"] as? [String: Any])?["retryAfterSeconds"] as? Int)
        XCTAssertEqual(status(body, "sections"), "ok"); XCTAssertEqual(status(body, "media"), "ok"); XCTAssertEqual(status(body, "readMore"), "ok")
        XCTAssertFalse(items(body, "sections").isEmpty)
        XCTAssertEqual(http.header("Cache-Control"), "public, max-age=5", "an answer with a placeholder is kept briefly")
        fake.set("files", .hang)
        let (_, slow, _) = try get(server, "/article/Mumbai").statusJSONAndResponse
        XCTAssertEqual(status(slow, "media"), "placeholder")
        XCTAssertEqual((slow["media"] as? [String: Any])?["reason"] as? String, "timeout")
    }

    func testTheCardFailingIsTheWholeAnswer() async throws {
        let (missing, problem, _) = try get(server, "/article/No_such_article_anywhere").statusJSONAndResponse
        XCTAssertEqual(missing, 404); XCTAssertEqual(problem["status"] as? Int, 404)
        fake.set("summary", .status(500, "{}"))
        let (broken, _, _) = try get(server, "/article/Copenhagen").statusJSONAndResponse
        XCTAssertEqual(broken, 502)
    }

    func testARedirectAnswersForItsTarget() async throws {
        let (code, body, _) = try get(server, "/article/Bombay").statusJSONAndResponse
        XCTAssertEqual(code, 200)
        let card = try XCTUnwrap(body["card"] as? [String: Any])
        XCTAssertEqual(card["title"] as? String, "Mumbai"); XCTAssertEqual(card["redirectedFrom"] as? String, "Bombay")
        XCTAssertEqual(items(body, "sections").first?["title"] as? String, "Etymology")
        XCTAssertEqual((body["urls"] as? [String: String])?["desktop"], "https://en.wikipedia.org/wiki/Mumbai")
    }

    func testInvalidInputIsA400WithoutAnUpstreamCall() async throws {
        for path in ["/article/A%7CB", "/article/%20", "/article/X?lang=zz", "/article/" + String(repeating: "x", count: 256)] {
            let (code, problem, _) = try get(server, path).statusJSONAndResponse
            XCTAssertEqual(code, 400, path); XCTAssertEqual(problem["status"] as? Int, 400, path)
        }
        XCTAssertEqual(fake.requests.count, 0)
    }

    func testAWarmArticleIsPreparedOnceWithETagGzipAnd304() throws {
        let first = try TestHTTPResponse(port: server.port, request: "GET /article/Rijksmuseum HTTP/1.1\r\nHost: t\r\n\r\n")
        let calls = fake.requests.count
        let again = try TestHTTPResponse(port: server.port, request: "GET /article/Rijksmuseum HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertEqual(first.body, again.body)
        XCTAssertEqual(fake.requests.count, calls, "the warm answer makes no upstream call")
        let tag = try XCTUnwrap(again.headers["etag"])
        XCTAssertEqual(try TestHTTPResponse(port: server.port, request: "GET /article/Rijksmuseum HTTP/1.1\r\nHost: t\r\nIf-None-Match: \(tag)\r\n\r\n").status, 304)
        let zipped = try TestHTTPResponse(port: server.port, request: "GET /article/Rijksmuseum HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n")
        XCTAssertEqual(zipped.headers["content-encoding"], "gzip")
        XCTAssertEqual(Inflater.decompress(zipped.body), first.body)
    }
}

/// The article screen's pure rules, without sockets.
final class ArticleRulesTests: XCTestCase {
    func testHTMLIsReducedToPlainText() {
        XCTAssertEqual(HTMLText.plain("<a href=\"//commons.wikimedia.org/wiki/User:X\" title=\"a > b\">Jane Doe</a>"), "Jane Doe")
        XCTAssertEqual(HTMLText.plain("Line one<br/>line two<p>para</p>"), "Line one line two para")
        XCTAssertEqual(HTMLText.plain("Fish &amp; chips &lt;3 &#233;t&#xE9; &nbsp; x&hellip;"), "Fish & chips <3 été x…")
        // A tag left open to the end makes the rest text (linear: no later `<` is searched to the end again).
        let unclosed = String(repeating: "<a ", count: 2_000)
        XCTAssertEqual(HTMLText.plain(unclosed), String(unclosed.dropLast()))
        XCTAssertEqual(HTMLText.plain("<b>bold</b> then <a title=\"x <i>italic</i>"), "bold then <a title=\"x <i>italic</i>",
                       "a quote never closed: the tag runs to the end, so the rest is text")
        XCTAssertEqual(HTMLText.plain("a<script>x</b y<z></script>b"), "ab", "script skipped over tags found inside it")
        XCTAssertEqual(HTMLText.plain("<i>The Night Watch</i> (1642)"), "The Night Watch (1642)")
        XCTAssertEqual(HTMLText.plain("a<script>alert(1)</script>b<style>.x{}</style>c"), "abc")
        XCTAssertEqual(HTMLText.plain("5 < 6 and &bogus; & done"), "5 < 6 and &bogus; & done", "text that is not markup stays")
        XCTAssertEqual(HTMLText.plain("  \n spaced \t out  "), "spaced out")
        XCTAssertEqual(HTMLText.plain("<span class=\"fn\">unterminated"), "unterminated")
        XCTAssertEqual(HTMLText.plain("<b unterminated"), "<b unterminated")
    }

    func testEditionsSkipUnknownCodesAndFallBackToNames() {
        let links = [LanguageLink(lang: "de", title: "X", url: nil, langname: "German", autonym: "Deutsch"),
                     LanguageLink(lang: "xx-unknown", title: "X", url: nil, langname: nil, autonym: "Nope"),
                     LanguageLink(lang: "fr", title: "X", url: "https://fr.wikipedia.org/wiki/X", langname: "French", autonym: nil),
                     LanguageLink(lang: "de", title: "Dup", url: nil, langname: nil, autonym: "Deutsch")]
        let e = ArticleScreen.editions(links, preferred: ["fr"])
        XCTAssertEqual(e.map(\.lang), ["fr", "de"])
        XCTAssertEqual(e[0].autonym, "French"); XCTAssertEqual(e[1].url, "https://de.wikipedia.org/wiki/X")
    }

    func testRealShapedAnswersDecodeLeniently() throws {
        let client = WikimediaClient(transport: EmbeddedTransport())
        let parse = #"{"parse":{"title":"T","displaytitle":"T","sections":[{"toclevel":1,"level":"2","line":"<b>A</b>","number":"1","index":"1","anchor":"A"},{"toclevel":"x"},{"toclevel":2,"level":3,"line":"B","number":"1.1","index":"T-1","anchor":"B"}]}}"#
        let p = try client.decode(ParseAnswer.self, Array(parse.utf8), kind: .contents)
        XCTAssertEqual(p.parse?.sections?.count, 2, "one unreadable section skipped")
        XCTAssertEqual(p.parse?.sections?[1].level, 3)
        let sections = ArticleScreen.sections(ArticleContents(title: "T", displayTitle: nil, sections: p.parse!.sections!))
        XCTAssertEqual(sections.map(\.id), [1, 2], "a transcluded section's index is not a number: its position")
        XCTAssertEqual(sections[0].title, "A")
        let files = #"{"query":{"pages":[{"ns":6,"title":"File:A b.jpg","missing":true,"known":true,"imageinfo":[{"url":"https://u/a.jpg","width":"100","height":50,"extmetadata":{"Artist":{"value":"<i>Me</i>"},"AttributionRequired":{"value":true},"Odd":{"value":{"x":1}}}}]}]}}"#
        let f = try XCTUnwrap(try client.decode(ActionEnvelope<ImageInfoQuery>.self, Array(files.utf8), kind: .files).query)
        XCTAssertEqual(f.pages?.first?.width, 100, "a number sent as a string")
        XCTAssertEqual(f.pages?.first?.metadata["Artist"], "<i>Me</i>")
        XCTAssertEqual(f.pages?.first?.metadata["AttributionRequired"], "true", "a boolean sent as a boolean")
        XCTAssertNil(f.pages?.first?.metadata["Odd"], "a value of another shape is absent")
        let media = #"{"items":[{"title":"File:A.jpg","type":"image","showInGallery":false},{"type":"image"},{"title":"File:B.jpg","srcset":[{"src":"//u/b.jpg","scale":"1x"}]}]}"#
        let m = try client.decode(MediaListAnswer.self, Array(media.utf8), kind: .media)
        XCTAssertEqual(ArticleScreen.galleryFiles(m.items ?? []).map(\.title), ["File:B.jpg"])
        XCTAssertEqual(ArticleScreen.media(m.items![1], nil).thumbnail?.source, "https://u/b.jpg")
    }

    /// Seed 000, Image Gallery: "Then I shouldn't see the images smaller than 30x30" — by the file's real size.
    func testTheGalleryLeavesOutImagesSmallerThan30x30() {
        func item(_ title: String, _ type: String = "image") -> MediaListItem {
            MediaListItem(title: title, type: type, showInGallery: true, leadImage: false, captionHTML: nil, captionText: nil, src: nil)
        }
        func info(_ w: Int?, _ h: Int?) -> FileInfo {
            FileInfo(title: "", url: nil, width: w, height: h, thumbURL: nil, thumbWidth: 640, thumbHeight: 640, descriptionURL: nil, metadata: [:])
        }
        XCTAssertFalse(ArticleScreen.isLargeEnough(item("File:Icon.png"), info(24, 24)))
        XCTAssertTrue(ArticleScreen.isLargeEnough(item("File:Square.png"), info(30, 30)), "a 30×30 image stays")
        XCTAssertTrue(ArticleScreen.isLargeEnough(item("File:Photo.jpg"), info(640, 480)))
        XCTAssertFalse(ArticleScreen.isLargeEnough(item("File:Strip.png"), info(640, 20)), "narrower or shorter")
        XCTAssertTrue(ArticleScreen.isLargeEnough(item("File:Clip.webm", "video"), info(16, 16)), "video is unaffected")
        XCTAssertTrue(ArticleScreen.isLargeEnough(item("File:Sound.ogg", "audio"), info(nil, nil)), "audio is unaffected")
        XCTAssertTrue(ArticleScreen.isLargeEnough(item("File:Unknown.jpg"), nil), "a file of unknown size is shown")
    }
}

/// Seed 000, Toolbar: "Given … the article is a main page … Then I should not see the table of contents toolbar item".
/// Which page is the main page comes from Wikimedia's siteinfo, per edition.
final class MainPageTests: FakeUpstreamTestCase {
    static func summary(_ title: String, lang: String, ns: Int) -> String {
        let key = title.replacingOccurrences(of: " ", with: "_")
        return "{\"type\":\"standard\",\"title\":\"\(key)\",\"displaytitle\":\"\(title)\",\"namespace\":{\"id\":\(ns),\"text\":\"\"},"
            + "\"titles\":{\"canonical\":\"\(key)\",\"normalized\":\"\(title)\",\"display\":\"\(title)\"},\"pageid\":7,\"lang\":\"\(lang)\",\"dir\":\"ltr\","
            + "\"extract\":\"A page.\",\"extract_html\":\"<p>A page.</p>\",\"content_urls\":{\"desktop\":{\"page\":\"https://\(lang).wikipedia.org/wiki/\(key)\"}}}"
    }
    static func siteinfo(_ main: String) -> String { "{\"batchcomplete\":true,\"query\":{\"general\":{\"mainpage\":\"\(main)\"}}}" }
    static let contents = #"{"parse":{"title":"T","displaytitle":"T","sections":[{"toclevel":1,"level":"2","line":"A","number":"1","index":"1","anchor":"A"}]}}"#

    func article(_ path: String) async throws -> [String: Any] {
        let (status, body, _) = try get(server, path).statusJSONAndResponse
        XCTAssertEqual(status, 200, path)
        return body
    }

    func testTheMainPagesOfEachEditionHaveNoContentsAndSaySo() async throws {
        fake.set("contents", .body(Self.contents))
        for (lang, main, ns) in [("en", "Main Page", 0), ("de", "Wikipedia:Hauptseite", 4), ("fr", "Wikipédia:Accueil principal", 4), ("it", "Pagina principale", 0)] {
            fake.set("siteinfo", .body(Self.siteinfo(main)))
            fake.set("summary", .body(Self.summary(main, lang: lang, ns: ns)))
            let path = "/article/\(main.replacingOccurrences(of: " ", with: "_").addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)!)?lang=\(lang)"
            let body = try await article(path)
            XCTAssertEqual(body["mainPage"] as? Bool, true, lang)
            let sections = try XCTUnwrap(body["sections"] as? [String: Any])
            XCTAssertEqual(sections["status"] as? String, "ok", lang)
            XCTAssertEqual((sections["items"] as? [Any])?.count, 0, "\(lang): no table of contents")
        }
        // siteinfo once per edition, however many articles.
        _ = try await article("/article/Amsterdam?lang=en")
        XCTAssertEqual(fake.requests(kind: "siteinfo").count, 4)
    }

    func testMainPageOnDeIsAnOrdinaryArticle() async throws {
        fake.set("siteinfo", .body(Self.siteinfo("Wikipedia:Hauptseite")))
        fake.set("summary", .body(Self.summary("Main Page", lang: "de", ns: 0)))
        fake.set("contents", .body(Self.contents))
        let body = try await article("/article/Main_Page?lang=de")
        XCTAssertEqual(body["mainPage"] as? Bool, false)
        XCTAssertEqual(((body["sections"] as? [String: Any])?["items"] as? [Any])?.count, 1, "its contents stay")
    }
}
