import Foundation
import HTTPServer
import LedeBasics
import TestSupport
import XCTest
@testable import Lede
@testable import Wikimedia

/// Editions written in several scripts (Chinese, Serbian, Kazakh, …): MediaWiki converts a page to the reader's
/// variant. `lang` and `Accept-Language` name the edition and the variant; the variant reaches Wikimedia (REST's
/// `Accept-Language`, the Action API's `variant`), keys every cache, and comes back in `Content-Language`.
final class LanguageVariantTests: FakeUpstreamTestCase {
    func testAVariantNamesItsEditionAndItself() throws {
        let tw = try XCTUnwrap(LanguageCode("zh-tw"))
        XCTAssertEqual(tw.code, "zh"); XCTAssertEqual(tw.variant, "zh-tw"); XCTAssertEqual(tw.tag, "zh-tw")
        XCTAssertEqual(LanguageCode("ZH-TW"), tw)
        XCTAssertEqual(LanguageCode("sr-el")?.code, "sr")
        XCTAssertEqual(LanguageCode("ike-latn")?.code, "iu")
        XCTAssertNil(LanguageCode("zh")?.variant, "the edition alone: its default")
        XCTAssertNil(LanguageCode("de-at"), "not an edition, not a variant")
        XCTAssertNotEqual(LanguageCode("zh-tw"), LanguageCode("zh-cn"))
        XCTAssertNotEqual(LanguageCode("zh-tw")?.key, LanguageCode("zh")?.key)
        XCTAssertEqual(tw.edition, LanguageCode("zh"))
    }

    func testTheBestAcceptLanguageTagPicksTheEditionAndTheVariant() {
        func read(_ header: String) -> String? { LanguageCode.fromAcceptLanguage(header).map { "\($0.code)/\($0.variant ?? "-")" } }
        XCTAssertEqual(read("zh-TW"), "zh/zh-tw")
        XCTAssertEqual(read("zh-Hant-HK, en;q=0.5"), "zh/zh-hk")
        XCTAssertEqual(read("zh-Hant"), "zh/zh-hant")
        XCTAssertEqual(read("zh-Hans-CN"), "zh/zh-cn")
        XCTAssertEqual(read("zh"), "zh/-")
        XCTAssertEqual(read("sr-Latn"), "sr/sr-el")
        XCTAssertEqual(read("sr-Cyrl-RS"), "sr/sr-ec")
        XCTAssertEqual(read("uz-Cyrl"), "uz/uz-cyrl")
        XCTAssertEqual(read("de-CH"), "de/-", "an edition without variants keeps ignoring the region")
        XCTAssertEqual(read("fr;q=0.4, zh-TW;q=0.9"), "zh/zh-tw")
    }

    static let summary = """
    {"type":"standard","title":"臺灣","displaytitle":"<span class=\\"mw-page-title-main\\">臺灣</span>","namespace":{"id":0,"text":""},\
    "wikibase_item":"Q865","titles":{"canonical":"台湾","normalized":"台湾","display":"臺灣"},"pageid":25,"lang":"zh","dir":"ltr",\
    "revision":"90000001","tid":"1","timestamp":"2026-11-20T10:00:00Z","description":"東亞島嶼","description_source":"central",\
    "content_urls":{"desktop":{"page":"https://zh.wikipedia.org/wiki/%E5%8F%B0%E6%B9%BE"},"mobile":{"page":"https://zh.m.wikipedia.org/wiki/%E5%8F%B0%E6%B9%BE"}},\
    "extract":"臺灣是位於東亞的島嶼。","extract_html":"<p>臺灣是位於東亞的島嶼。</p>"}
    """

    func testASummaryInAVariantAsksWikimediaInItAndSaysSo() async throws {
        fake.set("summary", .answer(200, ["Content-Language": "zh-tw"], Self.summary))
        let (status, body, http) = try get(server, "/summary/%E5%8F%B0%E6%B9%BE?lang=zh-tw").statusJSONAndResponse
        XCTAssertEqual(status, 200, "\(body)")
        XCTAssertEqual(http.header("Content-Language"), "zh-Hant-TW", "BCP 47 outward, as MediaWiki's bcp47() writes it")
        let sent = try XCTUnwrap(fake.requests(kind: "summary").last)
        XCTAssertTrue(sent.path.hasPrefix("/zh/"), "the edition's host: \(sent.path)")
        XCTAssertEqual(sent.headers["Accept-Language"], "zh-tw", "REST converts by Accept-Language")
        // Another variant of the same page is another answer: asked again, kept apart.
        _ = try get(server, "/summary/%E5%8F%B0%E6%B9%BE?lang=zh-cn")
        XCTAssertEqual(fake.requests(kind: "summary").map { $0.headers["Accept-Language"] ?? "-" }, ["zh-tw", "zh-cn"])
        _ = try get(server, "/summary/%E5%8F%B0%E6%B9%BE?lang=zh-tw")
        XCTAssertEqual(fake.requests(kind: "summary").count, 2, "each variant cached on its own")
        // Chosen by the header: the same, and Vary says so.
        let (_, _, byHeader) = try get(server, "/summary/%E5%8F%B0%E6%B9%BE", ["Accept-Language": "zh-TW"]).statusJSONAndResponse
        XCTAssertEqual(byHeader.header("Content-Language"), "zh-Hant-TW")
        XCTAssertTrue(byHeader.header("Vary")?.contains("Accept-Language") ?? false)
        XCTAssertEqual(fake.requests(kind: "summary").count, 2, "the header's zh-tw is the parameter's zh-tw")
    }

    func testAnActionAPIQueryInAVariantSaysVariant() async throws {
        _ = try get(server, "/related/%E5%8F%B0%E6%B9%BE?lang=sr-el")
        let sent = try XCTUnwrap(fake.requests(kind: "related").last)
        XCTAssertTrue(sent.path.hasPrefix("/sr/"))
        XCTAssertTrue((sent.query ?? "").contains("variant=sr-el"), sent.query ?? "")
        _ = try get(server, "/related/%E5%8F%B0%E6%B9%BE?lang=sr")
        XCTAssertFalse((fake.requests(kind: "related").last?.query ?? "").contains("variant="), "the edition's default: no variant")
    }

    func testANameThatIsNeitherIsStillRefused() async throws {
        let (status, body, _) = try get(server, "/summary/Dog?lang=zh-xx").statusJSONAndResponse
        XCTAssertEqual(status, 400)
        XCTAssertEqual(body["type"] as? String, "urn:lede:problem:unsupported-language")
    }
}

/// The reader's interface language reaches Wikimedia as `uselang` on the calls whose answers carry words for the
/// reader: Echo's list, the editor, the save.
final class InterfaceLanguageTests: FakeUpstreamTestCase {
    func testTheInterfaceLanguageIsTheFirstTagOrUselang() throws {
        XCTAssertEqual(InterfaceLanguage.fromAcceptLanguage("de-AT, en;q=0.5"), "de-at", "MediaWiki has Austrian German")
        XCTAssertEqual(InterfaceLanguage.fromAcceptLanguage("*, fr;q=0.8"), "fr", "the wildcard names no language")
        XCTAssertEqual(InterfaceLanguage.fromAcceptLanguage("en;q=0.2, nds;q=0.9"), "nds", "any language MediaWiki may have, not only editions")
        XCTAssertEqual(InterfaceLanguage.fromAcceptLanguage("x-klingon, tlh;q=0.9, fr;q=0.5"), "fr", "tags MediaWiki has no messages for are passed over")
        XCTAssertNil(InterfaceLanguage.fromAcceptLanguage("x, en_US"))
        XCTAssertNil(InterfaceLanguage.fromAcceptLanguage(nil))
        XCTAssertEqual(InterfaceLanguage.normalised("zh-Hant"), "zh-hant")
        XCTAssertEqual(InterfaceLanguage.normalised("be-tarask"), "be-tarask")
        XCTAssertNil(InterfaceLanguage.normalised("de/../x"))
    }

    func testEchoIsAskedInTheReadersLanguage() async throws {
        let alice = ["Authorization": "Bearer demo-alice"]
        _ = try get(server, "/notifications", alice.merging(["Accept-Language": "de-DE, en;q=0.5"]) { a, _ in a })
        let first = fake.requests(kind: "notifications").last?.query ?? ""
        XCTAssertTrue(first.contains("uselang=de&") || first.hasSuffix("uselang=de"), "de-DE is MediaWiki's de: \(first)")
        // The phones' own headers, as MediaWiki's codes.
        for (header, code) in [("de-DE,de;q=0.9", "de"), ("pt-BR,pt;q=0.9", "pt-br"), ("zh-Hant-TW", "zh-tw"), ("en-US,en;q=0.9", "en"),
                               ("sr-Latn-RS", "sr-el"), ("es-MX", "es"), ("zh-Hans-CN", "zh-cn")] {
            _ = try get(server, "/notifications", alice.merging(["Accept-Language": header]) { a, _ in a })
            let query = fake.requests(kind: "notifications").last?.query ?? ""
            XCTAssertTrue(query.contains("uselang=\(code)&") || query.hasSuffix("uselang=\(code)"), "\(header) → \(code): \(query)")
        }
        _ = try get(server, "/notifications?uselang=pt-BR", alice.merging(["Accept-Language": "de"]) { a, _ in a })
        XCTAssertTrue((fake.requests(kind: "notifications").last?.query ?? "").contains("uselang=pt-br"), "the parameter wins")
        // Without Accept-Language (URLSession always sends one; a raw request does not).
        _ = try TestHTTPResponse(port: server.port, request: "GET /notifications HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer demo-alice\r\nConnection: close\r\n\r\n")
        XCTAssertFalse((fake.requests(kind: "notifications").last?.query ?? "").contains("uselang"), "no language asked: nothing sent")
        let (status, body, _) = try get(server, "/notifications?uselang=en_US", alice).statusJSONAndResponse
        XCTAssertEqual(status, 400); XCTAssertEqual(body["type"] as? String, "urn:lede:problem:invalid-parameter")
    }

    func testTheEditorIsAskedInTheReadersLanguage() async throws {
        _ = try get(server, "/article/Amsterdam/edit?uselang=fr", ["Authorization": "Bearer demo-alice"])
        XCTAssertTrue((fake.requests(kind: "editor").last?.query ?? "").contains("uselang=fr"))
    }
}

/// The embedded default's Chinese edition, read in either script (`swift run` with no network answers a variant).
final class EmbeddedVariantTests: XCTestCase {
    func testAZhTwSummaryIsInTraditionalCharactersAndAZhCnOneInSimplified() throws {
        let server = try startLede()
        defer { server.shutdown(); server.waitUntilStopped() }
        func summary(_ path: String, _ headers: String = "") throws -> (TestHTTPResponse, [String: Any]) {
            let r = try TestHTTPResponse(port: server.port, request: "GET \(path) HTTP/1.1\r\nHost: t\r\n\(headers)Connection: close\r\n\r\n")
            return (r, (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:])
        }
        let (tw, twBody) = try summary("/summary/%E5%8F%B0%E6%B9%BE?lang=zh-tw")
        XCTAssertEqual(tw.status, 200)
        XCTAssertEqual(tw.headers["content-language"], "zh-Hant-TW")
        XCTAssertTrue((twBody["extract"] as? String ?? "").hasPrefix("臺灣是位於東亞的島嶼"), "\(twBody)")
        let (cn, cnBody) = try summary("/summary/%E5%8F%B0%E6%B9%BE", "Accept-Language: zh-CN\r\n")
        XCTAssertEqual(cn.headers["content-language"], "zh-Hans-CN")
        XCTAssertTrue((cnBody["extract"] as? String ?? "").hasPrefix("台湾是位于东亚的岛屿"), "\(cnBody)")
        // The feed: each variant its own prepared answer (the default's simplified one is never served to zh-tw).
        let (zhFeed, _) = try summary("/feed?lang=zh")
        let (twFeed, _) = try summary("/feed?lang=zh-tw")
        XCTAssertEqual(zhFeed.headers["content-language"], "zh"); XCTAssertEqual(twFeed.headers["content-language"], "zh-Hant-TW")
        let zhText = String(decoding: zhFeed.body, as: UTF8.self), twText = String(decoding: twFeed.body, as: UTF8.self)
        XCTAssertTrue(zhText.contains("台湾是位于东亚") && !zhText.contains("臺灣是位於東亞"), "the default's feed is as stored")
        // Every section converted, the Action API's (random, nearby) as the REST API's: `variant=`.
        XCTAssertTrue(twText.contains("臺灣是位於東亞"), "the zh-tw feed's sections are in traditional characters")
        for simplified in ["台湾是位于东亚", "阿姆斯特丹是荷兰", "阿尔伯特·爱因斯坦是出生于德国"] {
            XCTAssertFalse(twText.contains(simplified), "no simplified text in the zh-tw feed: \(simplified)")
        }
        // A title in traditional characters finds the page stored in simplified ones.
        let (byTraditional, body) = try summary("/summary/%E8%87%BA%E7%81%A3?lang=zh-hk")
        XCTAssertEqual(byTraditional.status, 200)
        XCTAssertTrue((body["extract"] as? String ?? "").hasPrefix("臺灣"))
    }

    /// MediaWiki finds a page by a title in any variant (`converttitles`): the editor and the article's languages,
    /// asked with a traditional title on the zh edition, answer for the page stored under its simplified one.
    func testATitleInTheOtherScriptFindsThePageThroughTheActionAPI() throws {
        let server = try startLede()
        defer { server.shutdown(); server.waitUntilStopped() }
        let r = try TestHTTPResponse(port: server.port, request: "GET /article/%E8%87%BA%E7%81%A3/edit?lang=zh-tw HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        let body = (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:]
        XCTAssertEqual(body["title"] as? String, "台湾", "the page's canonical title, which a save names")
        let zh = try XCTUnwrap(LanguageCode("zh-tw")), en = try XCTUnwrap(LanguageCode("en"))
        XCTAssertTrue(WikimediaClient.editorRequest(zh, "臺灣", section: nil, nil).query.contains { $0 == ("converttitles", "1") })
        XCTAssertTrue(WikimediaClient.languagesRequest(zh, "臺灣").query.contains { $0 == ("converttitles", "1") })
        XCTAssertFalse(WikimediaClient.editorRequest(en, "Dog", section: nil, nil).query.contains { $0.0 == "converttitles" },
                       "an edition in one script asks as before")
    }
}

/// The variants the wikis list, read from siteinfo (issue 69): a converter a wiki adds is accepted without a release,
/// and the built-in table is MediaWiki's (tg has no tg-cyrl: tg is Cyrillic; mni-beng, zgh-latn and Balinese's).
final class WikiVariantTests: FakeUpstreamTestCase {
    static let siteinfo = """
    {"batchcomplete":true,"query":{"languagevariants":{"en":{"en":{"fallbacks":[]},"en-x-piglatin":{"fallbacks":[]}},\
    "zh":{"zh":{"fallbacks":[]},"zh-hans":{"fallbacks":["zh"]},"zh-hant":{"fallbacks":["zh"]}},"xx":{"xx-yy":{"fallbacks":[]}}}}}
    """

    override func configure(_ options: inout Options) {
        super.configure(&options)
        fake.set("siteinfo", .body(Self.siteinfo))
        options.wikiVariants = true
    }

    func testAVariantTheWikisListIsAcceptedAndAskedFor() throws {
        for _ in 0..<300 where LanguageCode("en-x-piglatin") == nil { usleep(10_000) }
        XCTAssertNotNil(LanguageCode("en-x-piglatin"), "learned from siteinfo")
        XCTAssertTrue((fake.requests(kind: "siteinfo").first?.query ?? "").contains("siprop=languagevariants"))
        let (status, _, http) = try get(server, "/summary/Copenhagen?lang=en-x-piglatin").statusJSONAndResponse
        XCTAssertEqual(status, 200)
        XCTAssertEqual(http.header("Content-Language"), "en-x-piglatin")
        XCTAssertEqual(fake.requests(kind: "summary").last?.headers["Accept-Language"], "en-x-piglatin", "REST converts by Accept-Language")
        XCTAssertEqual(try get(server, "/summary/Copenhagen?lang=en-x-klingon").status, 400, "a variant no wiki lists is still refused")
        XCTAssertNil(LanguageCode("xx-yy"), "an edition Lede does not know learns nothing")
    }

    func testTheTableIsMediaWikis() {
        XCTAssertNil(LanguageCode("tg-cyrl"), "tg itself is the Cyrillic default")
        XCTAssertEqual(LanguageCode("tg-latn")?.code, "tg")
        XCTAssertEqual(LanguageCode("mni-beng")?.code, "mni")
        XCTAssertEqual(LanguageCode("zgh-latn")?.code, "zgh")
        XCTAssertEqual(LanguageCode("ban-x-pku")?.code, "ban")
    }
}
