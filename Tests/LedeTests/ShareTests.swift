import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import XCTest
import HTTPServer
import Imaging
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore
@testable import Upstream

/// A media origin that answers every path with the bytes a test gives.
final class StubMedia: UpstreamTransport, @unchecked Sendable {   // @unchecked: `bytes` is set before the server starts, then only read
    var bytes: [UInt8] = []
    var status = 200
    func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse { UpstreamResponse(status: status, body: bytes) }
    func baseURL(lang: String) -> String { "https://upload.wikimedia.org" }
}

/// The embedded lead images, counting the fetches.
final class CountingMedia: UpstreamTransport, Sendable {
    let calls = Mutex(0)
    let images = EmbeddedMediaTransport()
    func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        calls.withLock { $0 += 1 }
        return try await images.send(request, deadline: deadline)
    }
    func baseURL(lang: String) -> String { images.baseURL(lang: lang) }
}

/// The PNG's chunks, each checked against its CRC; nil when the signature or a CRC is wrong.
func pngChunks(_ data: [UInt8]) -> [(type: String, data: [UInt8])]? {
    guard data.count > 8, Array(data[0..<8]) == PNG.signature else { return nil }
    var out: [(String, [UInt8])] = []
    var i = 8
    while i + 12 <= data.count {
        let n = Int(data[i]) << 24 | Int(data[i + 1]) << 16 | Int(data[i + 2]) << 8 | Int(data[i + 3])
        guard i + 12 + n <= data.count else { return nil }
        let typed = Array(data[(i + 4)..<(i + 8 + n)])
        let crc = UInt32(data[i + 8 + n]) << 24 | UInt32(data[i + 9 + n]) << 16 | UInt32(data[i + 10 + n]) << 8 | UInt32(data[i + 11 + n])
        guard PNG.crc(typed) == crc else { return nil }
        out.append((String(decoding: typed[0..<4], as: UTF8.self), Array(typed[4...])))
        i += 12 + n
    }
    return i == data.count ? out : nil
}

final class ShareTests: XCTestCase {
    var server: HTTPServer!
    var app: LedeApp!
    var base = ""
    let media = StubMedia()

    func start(media: UpstreamTransport? = nil) throws {
        var options = Options()
        options.server.host = "127.0.0.1"; options.server.port = 0; options.server.loops = 1; options.server.accessLog = false
        options.logLevel = .off
    options.server.clients.rate = 0
        let app = try LedeApp(options: options, mediaTransport: media)
        self.app = app
        server = app.makeServer(logger: Logger(level: .off))
        try server.start()
        base = "http://127.0.0.1:\(server.port)"
    }

    override func tearDown() { server?.shutdown(); server?.waitUntilStopped() }


    override func setUpWithError() throws {
        try XCTSkipIf(FontCatalog.discover() == nil, "Noto Sans is not installed (fonts-noto-core): .ci/run installs it")
    }

    // MARK: - Over HTTP

    func testTheCardIsAValidPNGOf1024By582AtScale2And1536By873AtScale3() async throws {
        try start()
        for (scale, w, h) in [(2, 1024, 582), (3, 1536, 873)] {
            let r1 = try get(server, "/share/Albert_Einstein.png?scale=\(scale)"); let (status, data, http) = (r1.status, r1.data, r1)
            XCTAssertEqual(status, 200)
            XCTAssertEqual(http.header("Content-Type"), "image/png")
            XCTAssertEqual(http.header("Cache-Control"), "public, max-age=86400")
            XCTAssertNotNil(http.header("ETag"))
            let chunks = try XCTUnwrap(pngChunks(Array(data)), "signature and every chunk's CRC")
            XCTAssertEqual(chunks.map(\.type), ["IHDR", "IDAT", "IEND"])
            XCTAssertEqual(ImageHeader.read(Array(data)), ImageHeader(format: .png, width: w, height: h))
            XCTAssertEqual(Array(chunks[0].data[8...12]), [8, 2, 0, 0, 0], "8-bit RGB, deflate, no interlace")
        }
        let r2 = try get(server, "/share/Albert_Einstein.png?scale=4"); let s = r2.status
        XCTAssertEqual(s, 400)
    }

    func testTheJPEGForLinkPreviewsIsUnder300KB() async throws {
        try start()
        let r3 = try get(server, "/share/Rijksmuseum.png?format=jpeg"); let (status, data, http) = (r3.status, r3.data, r3)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(http.header("Content-Type"), "image/jpeg")
        XCTAssertLessThan(data.count, 300_000)
        XCTAssertEqual(ImageHeader.read(Array(data)), ImageHeader(format: .jpeg, width: 1024, height: 582))
        XCTAssertNoThrow(try JPEG.decode(Array(data), maxPixels: 1 << 22))
    }

    func testACardIsKeptAndTheSameOneIsAnsweredAgain() async throws {
        try start()
        let r4 = try get(server, "/share/Albert_Einstein.png?text=Imagination%20is%20more%20important%20than%20knowledge."); let (first, a) = (r4.data, r4)
        let r5 = try get(server, "/share/Albert_Einstein.png?text=Imagination%20is%20more%20important%20than%20knowledge."); let (second, b) = (r5.data, r5)
        XCTAssertEqual(first, second)
        XCTAssertEqual(a.header("ETag"), b.header("ETag"))
        let r6 = try get(server, "/share/Albert_Einstein.png"); let other = r6.data
        XCTAssertNotEqual(first, other, "the text is part of what the card depends on")
    }

    /// Any client can ask for a card of any selection: every card of a page shares one fetch and one decode of its lead
    /// image, and the cards keep to a budget of their own, so a flood of selections leaves the shared answers alone.
    func testManySelectionsOfOnePageFetchItsLeadImageOnceAndLeaveTheSharedAnswersAlone() async throws {
        let counting = CountingMedia()
        try start(media: counting)
        let r7 = try get(server, "/summary/Rijksmuseum"); let s0 = r7.status
        XCTAssertEqual(s0, 200)
        let shared = app.responses.snapshot
        for i in 0..<24 {
            let r8 = try get(server, "/share/Rijksmuseum.png?format=jpeg&text=Selection%20number%20\(i)"); let (status, data) = (r8.status, r8.data)
            XCTAssertEqual(status, 200)
            XCTAssertEqual(ImageHeader.read(Array(data))?.format, .jpeg)
        }
        XCTAssertEqual(counting.calls.withLock { $0 }, 1, "one lead image fetch for every card of the page")
        XCTAssertEqual(app.responses.snapshot.entries, shared.entries, "no card in the shared responses")
        XCTAssertEqual(app.share.cards.snapshot.entries, 24)
        XCTAssertNotEqual(ShareService.digest("a"), ShareService.digest("b"))
        XCTAssertEqual(ShareService.digest("Imagination"), ShareService.digest("Imagination"))
    }

    func testAMissingPageIs404AndATextOver500CharactersIs400() async throws {
        try start()
        let r9 = try get(server, "/share/No_such_page_at_all_here.png"); let (missing, body) = (r9.status, r9.data)
        XCTAssertEqual(missing, 404)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["type"] as? String, "urn:lede:problem:not-found")
        let long = String(repeating: "word ", count: 101).addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let r10 = try get(server, "/share/Albert_Einstein.png?text=\(long)"); let tooLong = r10.status
        XCTAssertEqual(tooLong, 400)
    }

    func testA40MegapixelLeadImageIsRefusedFromItsHeaderUndecoded() async throws {
        // SOI, then a baseline frame header of 8000 × 5000 and nothing more: only the header is ever read.
        media.bytes = [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x13, 0x88, 0x1F, 0x40, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
        try start(media: media)
        let r11 = try get(server, "/share/Albert_Einstein.png"); let (status, body) = (r11.status, r11.data)
        XCTAssertEqual(status, 502)
        let problem = try XCTUnwrap(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        XCTAssertEqual(problem["type"] as? String, "urn:lede:problem:share-image-refused")
        XCTAssertTrue((problem["detail"] as? String ?? "").contains("8000 × 5000"))
    }

    func testATruncatedLeadImageIsRefusedCleanly() async throws {
        let whole = JPEG.encode(EmbeddedMediaTransport.picture(seed: "x"), quality: 80)
        media.bytes = Array(whole.prefix(whole.count / 2))
        try start(media: media)
        let r12 = try get(server, "/share/Albert_Einstein.png"); let (status, body) = (r12.status, r12.data)
        XCTAssertEqual(status, 502)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: body) as? [String: Any])?["type"] as? String, "urn:lede:problem:share-image-refused")
        let r13 = try get(server, "/healthz"); let health = r13.status
        XCTAssertEqual(health, 200, "the server goes on")
    }

    /// The page as a hostile page would be (issue 68): its links only to the article's own Wikipedia over https
    /// whatever upstream names, no bidirectional control from the selection or upstream in any text or tag, and
    /// headers that allow no script, no framing, no sniffing.
    func testThePageTrustsNoLinkUpstreamNamesNoBidiControlAndAllowsNoScript() async throws {
        let json = #"{"title":"Albert Einstein","extract":"A physicist.","lang":"en","content_urls":{"desktop":{"page":"javascript:alert(document.domain)"}}}"#
        let summary = try UpstreamJSONDecoder().decode(PageSummary.self, from: Array(json.utf8))
        let card = Card(summary: summary, lang: .english)
        XCTAssertEqual(card.url, "javascript:alert(document.domain)", "what upstream named")
        let html = ShareRoutes.page(card: card, text: "evil \u{202E}txet \u{2066}x\u{2069}", selection: nil, lang: .english, base: "http://t")
        XCTAssertFalse(html.contains("javascript:"), html)
        XCTAssertTrue(html.contains("href=\"https://en.wikipedia.org/wiki/Albert_Einstein\""))
        XCTAssertTrue(html.contains("<meta property=\"og:url\" content=\"https://en.wikipedia.org/wiki/Albert_Einstein\">"))
        XCTAssertFalse(html.unicodeScalars.contains { ShareCard.isHidden($0) }, "no bidi control or invisible format character")
        func link(_ url: String) -> String {
            var c = card
            c.url = url
            return ShareRoutes.articleLink(c, lang: .english)
        }
        let built = "https://en.wikipedia.org/wiki/Albert_Einstein"
        for bad in ["http://en.wikipedia.org/wiki/A", "https://evil.example/wiki/A", "https://en.wikipedia.org@evil.example/wiki/A",
                    "https://en.wikipedia.org:8443/wiki/A", "https://de.wikipedia.org/wiki/A", "//en.wikipedia.org/wiki/A", "data:text/html,x"] {
            XCTAssertEqual(link(bad), built, bad)
        }
        XCTAssertEqual(link("https://en.m.wikipedia.org/wiki/Albert_Einstein"), "https://en.m.wikipedia.org/wiki/Albert_Einstein")
        XCTAssertEqual(ShareCard.selection("a\u{202E}b\u{200D}c"), "ab\u{200D}c", "the joiner stays, the override goes")

        try start()
        let r = try get(server, "/share/Albert_Einstein?text=Rock%20%E2%80%AEkcor")
        XCTAssertEqual(r.status, 200)
        XCTAssertFalse(r.text.unicodeScalars.contains { $0.value == 0x202E }, "the selection's override is gone from the quote and the tags")
        XCTAssertEqual(r.header("Content-Security-Policy"),
                       "default-src 'none'; img-src 'self' http://127.0.0.1:\(server.port); style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
        XCTAssertEqual(r.header("X-Content-Type-Options"), "nosniff")
        XCTAssertEqual(r.header("Referrer-Policy"), "strict-origin-when-cross-origin")
        XCTAssertEqual(r.header("X-Frame-Options"), "DENY")
        XCTAssertEqual(try get(server, "/summary/Albert_Einstein").header("X-Content-Type-Options"), "nosniff", "JSON answers too")
    }

    func testThePreviewPageNamesTheCardAndEscapesTheSelection() async throws {
        try start()
        let r14 = try get(server, "/share/Albert_Einstein?text=%3Cscript%3Ealert(%22x%22)%3C/script%3E%20%26%20'more'"); let (status, data, http) = (r14.status, r14.data, r14)
        XCTAssertEqual(status, 200)
        XCTAssertEqual(http.header("Content-Type"), "text/html; charset=utf-8")
        let html = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(html.contains("<meta property=\"og:title\" content=\"Albert Einstein\">"))
        XCTAssertTrue(html.contains("<meta name=\"twitter:card\" content=\"summary_large_image\">"))
        XCTAssertTrue(html.contains("<meta property=\"og:image:width\" content=\"1024\">"))
        XCTAssertTrue(html.contains("<meta property=\"og:image:height\" content=\"582\">"))
        XCTAssertTrue(html.contains("<meta property=\"og:description\" content=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;more&#39;\">"))
        XCTAssertFalse(html.contains("<script"), "markup in the selection shows as text")
        let image = try XCTUnwrap(html.range(of: "og:image\" content=\"").map { html[$0.upperBound...].prefix { $0 != "\"" } })
        XCTAssertTrue(image.hasPrefix("\(base)/share/Albert_Einstein.png?lang=en&amp;format=jpeg&amp;text=%3Cscript%3E"), String(image))
        XCTAssertTrue(html.contains("href=\"https://en.wikipedia.org/wiki/Albert_Einstein\""))
        // The card it names is there.
        let url = String(image).replacingOccurrences(of: "&amp;", with: "&").dropFirst(base.count)
        let r15 = try get(server, String(url)); let (card, jpeg) = (r15.status, r15.data)
        XCTAssertEqual(card, 200); XCTAssertLessThan(jpeg.count, 300_000)
    }

    /// The page a person lands on from a shared link (issue 61): the card itself, the title, the text, a real link to
    /// the article, the licence; inline style only, a dark scheme, no script, nothing fetched from elsewhere, under
    /// 16 KB.
    func testTheSharedLinksPageShowsTheCardAndLinksToTheArticle() async throws {
        try start()
        let r16 = try get(server, "/share/Albert_Einstein"); let (status, data) = (r16.status, r16.data)
        XCTAssertEqual(status, 200)
        let html = String(decoding: data, as: UTF8.self)
        XCTAssertLessThan(data.count, 16 * 1024, "under 16 KB")
        let image = try XCTUnwrap(html.range(of: "og:image\" content=\"").map { String(html[$0.upperBound...].prefix { $0 != "\"" }) })
        XCTAssertTrue(html.contains("<img src=\"\(image)\" alt=\""), "the card og:image names, shown")
        XCTAssertTrue(html.contains("width=\"1024\" height=\"582\""))
        XCTAssertTrue(html.contains("<h1>Albert Einstein</h1>"))
        XCTAssertTrue(html.contains("<a class=\"read\" href=\"https://en.wikipedia.org/wiki/Albert_Einstein\">Read on Wikipedia</a>"))
        XCTAssertTrue(html.contains("<footer>Text CC BY-SA 4.0</footer>"))
        XCTAssertTrue(html.contains("<style>") && html.contains("prefers-color-scheme:dark"), "inline style with a dark scheme")
        XCTAssertFalse(html.contains("<script"), "no script")
        XCTAssertFalse(html.contains("<link rel=\"stylesheet\""), "no style from elsewhere")
        XCTAssertEqual(html.components(separatedBy: "src=\"").count - 1, 1, "one resource: the card, from this server")
        XCTAssertTrue(html.contains("<html lang=\"en\" dir=\"ltr\">"))
    }

    // MARK: - The drawing, without sockets

    func render(_ text: String, title: String = "Title", image: RGBImage?) throws -> RGBImage {
        let pool = TypesetterPool(catalog: try XCTUnwrap(FontCatalog.discover()))
        let content = ShareCard.Content(text: text, title: title, language: "en", image: image, imageLicense: "CC BY-SA 4.0", imageAuthor: "Someone")
        return pool.with { ShareCard.render(content, scale: 2, typesetter: $0) }
    }

    /// Dark pixels (text) in a rectangle.
    func ink(_ image: RGBImage, x: Range<Int>, y: Range<Int>) -> Int {
        var n = 0
        for yy in y { for xx in x { let p = image.pixel(xx, yy); if Int(p.r) + Int(p.g) + Int(p.b) < 200 { n += 1 } } }
        return n
    }

    func testTheTextAreaHoldsTextAndTheImageHalfTheImage() throws {
        let red = RGBImage(width: 64, height: 48, fill: RGB(220, 20, 30))
        let card = try render("Imagination is more important than knowledge.", image: red)
        XCTAssertGreaterThan(ink(card, x: 40..<500, y: 40..<300), 2_000, "the selection is drawn")
        XCTAssertEqual(card.pixel(900, 300), RGB(220, 20, 30), "the image fills its half")
        XCTAssertEqual(card.pixel(1020, 5), RGB(220, 20, 30))
        XCTAssertEqual(ink(card, x: 600..<1024, y: 0..<582), 0, "no text over the image")
        let plain = try render("Imagination is more important than knowledge.", image: nil)
        XCTAssertEqual(plain.pixel(900, 300), .white, "without an image the text takes the whole width")
    }

    func testAnArabicCardIsLaidOutRightToLeft() throws {
        let red = RGBImage(width: 64, height: 48, fill: RGB(220, 20, 30))
        let card = try render("ألبرت أينشتاين هو عالم فيزياء نظرية ألماني المولد", title: "ألبرت أينشتاين", image: red)
        XCTAssertEqual(card.pixel(100, 300), RGB(220, 20, 30), "the image on the left")
        XCTAssertEqual(ink(card, x: 0..<500, y: 0..<582), 0, "no text over it")
        // The first line ends at the right margin (right-aligned) and its start is not at the left of the text area.
        let lineBand = 40..<90
        XCTAssertGreaterThan(ink(card, x: 900..<976, y: lineBand), 50, "ink at the right edge of the text area")
        XCTAssertGreaterThan(ink(card, x: 536..<1000, y: lineBand), 500)
    }

    /// The card's own words (the wordmark's line, the licence line) are in the article's language: an Arabic card's label
    /// band is not the English card's, while the same quote and title draw the same pixels above it.
    func testAnArabicCardsLabelsAreInArabic() throws {
        let pool = TypesetterPool(catalog: try XCTUnwrap(FontCatalog.discover()))
        func card(_ words: String) -> RGBImage {
            let content = ShareCard.Content(text: "ألبرت أينشتاين هو عالم فيزياء نظرية ألماني المولد", title: "ألبرت أينشتاين", language: "ar",
                                            image: nil, wordsLanguage: words)
            return pool.with { ShareCard.render(content, scale: 2, typesetter: $0) }
        }
        let arabic = card("ar"), english = card("en")
        func differing(_ y: Range<Int>) -> Int {
            var n = 0
            for yy in y { for xx in 0..<arabic.width where arabic.pixel(xx, yy) != english.pixel(xx, yy) { n += 1 } }
            return n
        }
        let h = arabic.height
        XCTAssertEqual(differing(0..<(h / 2)), 0, "the quote and the title are the same")
        XCTAssertGreaterThan(differing((h - h / 5)..<h), 500, "the label band differs: Arabic words, not English ones")
        XCTAssertEqual(Messages.shared.text(.shareMadeWith, in: "ar") == Messages.shared.text(.shareMadeWith, in: "en"), false)
    }

    func testLongTextStepsTheSizeDownAndEndsWithAnEllipsisWhenItCannotFit() throws {
        let pool = TypesetterPool(catalog: try XCTUnwrap(FontCatalog.discover()))
        let style = TextStyle(size: 40, color: RGB(0, 0, 0))
        pool.with { t in
            let block = t.layout(String(repeating: "relativity ", count: 60), style: style, maxWidth: 400, maxLines: 3)
            XCTAssertTrue(block.truncated)
            XCTAssertEqual(block.lines.count, 3)
            XCTAssertLessThanOrEqual(block.lines.map(\.width).max() ?? 0, 400)
            let short = t.layout("Short text.", style: style, maxWidth: 400, maxLines: 3)
            XCTAssertFalse(short.truncated); XCTAssertEqual(short.lines.count, 1)
            // CJK breaks between characters; an emoji no font has is left out (no box).
            let cjk = t.layout(String(repeating: "東京都は日本の首都である。", count: 4), style: style, maxWidth: 300, maxLines: 10)
            XCTAssertGreaterThan(cjk.lines.count, 3)
            XCTAssertEqual(t.layout("😀", style: style, maxWidth: 300, maxLines: 1).lines.first?.glyphs.count ?? 0, 0)
        }
    }

    func testPastItsQueueTheRenderPoolAnswers503WithRetryAfter() async throws {
        let pool = TypesetterPool(catalog: try XCTUnwrap(FontCatalog.discover()))
        var settings = ShareService.Settings()
        settings.queueBound = 0   // only as many renders as cores at once
        let service = ShareService(api: WikimediaClient(transport: EmbeddedTransport()), media: UpstreamClient(transport: EmbeddedMediaTransport()), settings: settings)
        let content = ShareCard.Content(text: "A card", title: "Title", language: "en", image: nil)
        let outcomes = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    do { _ = try await service.render(content, scale: 3, format: .png, typesetters: pool); return 200 } catch let p as Problem {
                        XCTAssertNotNil(p.headers["Retry-After"]); XCTAssertEqual(p.slug, "share-busy")
                        return p.status
                    } catch { return 500 }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertTrue(outcomes.contains(503), "\(outcomes)")
        XCTAssertTrue(outcomes.contains(200))
        XCTAssertEqual(Set(outcomes), [200, 503])
    }

    // MARK: - Rules

    func testTheHeaderReaderReadsSizesWithoutDecoding() {
        let jpeg = JPEG.encode(RGBImage(width: 33, height: 17, fill: .white), quality: 80)
        XCTAssertEqual(ImageHeader.read(jpeg), ImageHeader(format: .jpeg, width: 33, height: 17))
        XCTAssertEqual(ImageHeader.read(PNG.encode(RGBImage(width: 5, height: 9, fill: .white))), ImageHeader(format: .png, width: 5, height: 9))
        XCTAssertNil(ImageHeader.read(Array(jpeg.prefix(6))))
        XCTAssertNil(ImageHeader.read([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x01]), "a length shorter than itself")
        XCTAssertNil(ImageHeader.read(Array("<html>".utf8)))
    }

    func testTheFirstSentenceAndTheThumbnailPath() {
        XCTAssertEqual(ShareCard.firstSentence("J. R. R. Tolkien was an English writer and philologist. He wrote The Hobbit."),
                       "J. R. R. Tolkien was an English writer and philologist.")
        XCTAssertEqual(ShareCard.firstSentence("東京都は日本の首都である。人口は多い。"), "東京都は日本の首都である。")
        XCTAssertEqual(ShareService.thumbnailPath("https://upload.wikimedia.org/wikipedia/commons/thumb/a/ab/Name.jpg/320px-Name.jpg", width: 640),
                       "/wikipedia/commons/thumb/a/ab/Name.jpg/640px-Name.jpg")
        XCTAssertEqual(ShareService.thumbnailPath("https://upload.wikimedia.org/wikipedia/commons/a/ab/Name.jpg", width: 640),
                       "/wikipedia/commons/thumb/a/ab/Name.jpg/640px-Name.jpg")
        XCTAssertNil(ShareService.thumbnailPath("https://example.org/a/ab/Name.jpg", width: 640))
        XCTAssertEqual(ShareService.fileName("https://upload.wikimedia.org/wikipedia/commons/thumb/a/ab/Caf%C3%A9.jpg/320px-Caf%C3%A9.jpg"), "Café.jpg")
    }
}
