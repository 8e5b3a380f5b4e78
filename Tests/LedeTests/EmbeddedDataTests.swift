import HTTPCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

final class EmbeddedDataTests: XCTestCase {
    let api = WikimediaClient(transport: EmbeddedTransport())

    func testEveryEmbeddedResponseDecodes() async throws {
        for lang in EmbeddedTransport.languages.compactMap(LanguageCode.init) {
            for offset in -8...1 {
                let feed = try await api.featuredFeed(lang: lang, date: EmbeddedTransport.referenceDate.adding(days: offset))
                XCTAssertNotNil(feed.mostread); XCTAssertNotNil(feed.image); XCTAssertFalse(feed.onthisday?.isEmpty ?? true)
            }
            for article in EmbeddedArticles.byLanguage[lang.code]! where article.ns == 0 {
                let s = try await api.summary(lang: lang, title: article.title)
                XCTAssertEqual(s.titles?.normalized, article.title)
                XCTAssertNotNil(s.extractHTML)
                _ = try await api.related(lang: lang, title: article.title)
            }
            _ = try await api.randomCandidates(lang: lang)
            _ = try await api.prefixSearch(lang: lang, query: "A")
            _ = try await api.fullTextSearch(lang: lang, query: "the")
        }
    }

    func testFeedsCoverTheWeekUpToTheReferenceDateAndFallBackToItsSnapshot() async throws {
        let en = LanguageCode.english
        var tfas = Set<String>()
        for offset in -6...0 {
            let f = try await api.featuredFeed(lang: en, date: EmbeddedTransport.referenceDate.adding(days: offset))
            if let t = f.tfa?.title { tfas.insert(t) }
            XCTAssertEqual(f.news != nil, offset == 0, "news only for the reference day")
        }
        XCTAssertGreaterThanOrEqual(tfas.count, 5, "each day has its own content")
        let snapshot = try await api.featuredFeed(lang: en, date: FeedDate("2024-02-29")!)
        let reference = try await api.featuredFeed(lang: en, date: EmbeddedTransport.referenceDate)
        XCTAssertEqual(snapshot, reference)
        XCTAssertEqual(reference.mostread?.date, "2026-11-19Z")
        XCTAssertEqual(reference.mostread?.articles.map { $0.rank ?? 0 }, [1, 2, 3, 4, 5])
    }

    func testSummariesCarryIPAParentheticals() async throws {
        let s = try await api.summary(lang: .english, title: "Albert_Einstein")
        XCTAssertTrue(s.extract!.contains("(/ˈaɪnstaɪn/ EYEN-styne; German: [ˈalbɛɐt ˈʔaɪnʃtaɪn] ⓘ; 14 March 1879 – 18 April 1955)"))
        let de = try await api.summary(lang: LanguageCode("de")!, title: "Kopenhagen")
        XCTAssertTrue(de.extract!.contains("[kʰøb̥m̩ˈhɑʊ̯ˀn]"))
        let it = try await api.summary(lang: LanguageCode("it")!, title: "Amsterdam")
        XCTAssertTrue(it.extract!.contains("AFI:"))
        let redirected = try await api.summary(lang: .english, title: "Bombay")
        XCTAssertEqual(redirected.titles?.normalized, "Mumbai")
    }

    func testMorelikeMixesInDisambiguationPagesAndOtherNamespaces() async throws {
        let r = try await api.related(lang: .english, title: "Mercury (planet)")
        XCTAssertTrue(r.pages.contains { $0.isDisambiguation })
        XCTAssertTrue(r.pages.contains { $0.title == "Mercury (planet)" }, "the source itself comes back too")
        let nl = try await api.related(lang: .english, title: "Amsterdam")
        XCTAssertTrue(nl.pages.contains { $0.ns != 0 })
        XCTAssertTrue(nl.pages.contains { $0.isDisambiguation })
    }

    func testRandomCandidatesIncludeDisambiguationPages() async throws {
        var sawDisambiguation = false
        for _ in 0..<10 { if try await api.randomCandidates(lang: .english).pages.contains(where: { $0.isDisambiguation }) { sawDisambiguation = true } }
        XCTAssertTrue(sawDisambiguation)
    }

    func testGeosearchAnswersAroundTheFourCities() async throws {
        let cities: [(String, Double, Double)] = [("Amsterdam", 52.3547498, 4.8339215), ("Mumbai", 19.0822507, 72.8812041),
                                                  ("Copenhagen", 55.6713442, 12.5237848), ("Madrid", 40.4380638, -3.7495758)]
        for (name, lat, lon) in cities {
            let r = try await api.nearby(lang: .english, latitude: lat, longitude: lon, radiusMeters: 10_000)
            XCTAssertGreaterThanOrEqual(r.pages.count, 3, name)
            let d = r.pages.compactMap { $0.coordinates?.first?.dist }
            XCTAssertEqual(d, d.sorted(), name)
        }
    }

    func testDemoUsersHaveTheirOwnNotificationsAndUnknownTokensAreRefused() async throws {
        let alice = try await api.notifications(lang: .english, authorization: "Bearer demo-alice", filter: .unread, limit: 50, continueFrom: nil)
        XCTAssertEqual(alice.rawcount, 120)
        XCTAssertEqual(alice.count, "99+")
        XCTAssertEqual(alice.list.count, 50)
        XCTAssertNotNil(alice.continue)
        let next = try await api.notifications(lang: .english, authorization: "Bearer demo-alice", filter: .unread, limit: 50, continueFrom: alice.continue)
        XCTAssertTrue(Set(next.list.map(\.id)).isDisjoint(with: alice.list.map(\.id)))
        let bob = try await api.notifications(lang: .english, authorization: "Bearer demo-bob", filter: .all, limit: 50, continueFrom: nil)
        XCTAssertEqual(bob.rawcount, 3)
        XCTAssertEqual(bob.list.count, 9)
        XCTAssertTrue(Set(bob.list.map(\.id)).isDisjoint(with: alice.list.map(\.id)))
        XCTAssertEqual(Set(bob.list.map(\.type)).count > 3, true)
        do { _ = try await api.notifications(lang: .english, authorization: "Bearer demo-mallory", filter: .all, limit: 5, continueFrom: nil); XCTFail() }
        catch { XCTAssertEqual(error as? UpstreamError, .notAuthorised) }
    }

    func testALanguageWithoutEmbeddedDataAnswersLikeAMissingPage() async throws {
        do { _ = try await api.summary(lang: LanguageCode("fr")!, title: "Paris"); XCTFail() } catch let UpstreamError.notFound(detail) {
            XCTAssertTrue(detail.contains("does not cover language 'fr'"), detail)
        }
    }
}

final class LanguageCodeTests: XCTestCase {
    func request(_ target: String, _ headers: HTTPHeaders = HTTPHeaders()) -> HTTPRequest {
        var p = RequestParser()
        var text = "GET \(target) HTTP/1.1\r\nHost: t\r\n"
        for (n, v) in headers { text += "\(n): \(v)\r\n" }
        p.append(Array((text + "\r\n").utf8))
        guard case .request(let r) = p.next() else { fatalError() }
        return r
    }

    func testResolutionOrder() throws {
        XCTAssertEqual(try LanguageCode.resolve(request("/feed?lang=de", ["Accept-Language": "it"])).code, "de")
        XCTAssertEqual(try LanguageCode.resolve(request("/feed", ["Accept-Language": "xx, de-CH;q=0.9, it;q=0.95"])).code, "it")
        XCTAssertEqual(try LanguageCode.resolve(request("/feed", ["Accept-Language": "de-CH, en;q=0.5"])).code, "de")
        XCTAssertEqual(try LanguageCode.resolve(request("/feed", ["Accept-Language": "pt-BR"])).code, "pt")
        XCTAssertEqual(try LanguageCode.resolve(request("/feed", ["Accept-Language": "zh-yue"])).code, "zh-yue")
        XCTAssertEqual(try LanguageCode.resolve(request("/feed", ["Accept-Language": "*, xx;q=0.3"])).code, "en")
        XCTAssertEqual(try LanguageCode.resolve(request("/feed")).code, "en")
    }

    func testEveryEditionCodeIsFoundInAnyCaseAndNothingElse() {
        for code in LanguageCode.all {
            XCTAssertEqual(LanguageCode(code)?.code, code)
            XCTAssertEqual(LanguageCode(code.uppercased())?.code, code)
        }
        for bad in ["", "e", "eng", "en-", "-en", "pt-br", "zh-min", "zh-min-nanx", "en ", "énglish", "EN\u{0}", String(repeating: "a", count: 40)] {
            XCTAssertNil(LanguageCode(bad), bad)
        }
    }

    func testAcceptLanguageQValuesTiesAndCase() {
        func lang(_ h: String) -> String? { LanguageCode.fromAcceptLanguage(h)?.code }
        XCTAssertEqual(lang("de;q=0, en;q=0.1"), "en")                 // q=0: not acceptable
        XCTAssertEqual(lang("fr;Q=0.8, it ; q=0.9"), "it")             // parameter names are case-insensitive
        XCTAssertEqual(lang("es-419;q=0.7, xx"), "es")                 // primary subtag
        XCTAssertEqual(lang("nl;q=0.5, sv;q=0.5"), "nl")               // a tie goes to the first
        XCTAssertEqual(lang("EN-gb,en;q=0.9"), "en")
        XCTAssertEqual(lang("ZH-YUE"), "zh-yue")
        XCTAssertEqual(lang("de;q=abc, fr;q=0.2"), "fr")               // a malformed q counts as 0
        XCTAssertEqual(lang("de;q=0.0001, fr;q=0.2"), "fr")            // more than three decimals: malformed
        XCTAssertNil(lang("*"))
        XCTAssertNil(lang(" , ;q=1,"))
        XCTAssertNil(lang("xx-yy, qq"))
        XCTAssertNil(lang(String(repeating: "a", count: 5000)))
    }

    func testUnsupportedLangIsA400ThatSaysWhereTheListIs() {
        XCTAssertThrowsError(try LanguageCode.resolve(request("/feed?lang=pt-br"))) { error in
            let p = error as! Problem
            XCTAssertEqual(p.status, 400)
            XCTAssertTrue(p.detail.contains("/languages"))
            XCTAssertLessThan(p.detail.count, 200, "no list of 340 codes in the detail")
        }
        XCTAssertGreaterThan(LanguageCode.all.count, 320)
        XCTAssertNil(LanguageCode("pt-br"))
        XCTAssertNotNil(LanguageCode("simple"))
    }
}

final class AppRoutesTests: XCTestCase {
    func testLanguagesRouteAndUpstreamMetricsOverHTTP() async throws {
        let (app, server) = try startLedeApp()
        defer { server.shutdown(); server.waitUntilStopped() }
        _ = try await app.api.summary(lang: .english, title: "Amsterdam")
        let languages = try get(server, "/languages")
        XCTAssertEqual(languages.status, 200)
        let obj = languages.json
        XCTAssertEqual(obj["embedded"] as? [String], ["en", "de", "it", "zh"])
        let variants = try XCTUnwrap(obj["variants"] as? [String: [String]])
        XCTAssertEqual(variants["zh"]?.contains("zh-tw"), true)
        XCTAssertEqual(variants["sr"], ["sr-ec", "sr-el"])
        for (edition, list) in variants {
            for v in list { XCTAssertEqual(LanguageCode(v)?.code, edition, "\(v) is accepted as lang, naming \(edition)") }
        }
        XCTAssertTrue((obj["languages"] as? [String])?.contains("simple") == true)
        let text = try get(server, "/metrics").text
        XCTAssertTrue(text.contains("lede_upstream_calls_total{kind=\"summary\",outcome=\"ok\"} 1"), text)
        XCTAssertTrue(text.contains("lede_cache_misses_total 1"))
    }
}

final class PreparedResponsesTests: XCTestCase {
    func testCacheableContentIsEncodedAndCompressedOnce() throws {
        let (app, server) = try startLedeApp()
        defer { server.shutdown(); server.waitUntilStopped() }
        let request = "GET /related/Amsterdam?limit=10 HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\n"   // ~6 KB: above the 1 KiB gzip threshold
        let a = try TestHTTPResponse(port: server.port, request: request)
        let b = try TestHTTPResponse(port: server.port, request: request)
        XCTAssertEqual(a.headers["content-encoding"], "gzip")
        XCTAssertEqual(a.headers["etag"], b.headers["etag"])
        XCTAssertEqual(a.body, b.body)
        XCTAssertEqual(app.responses.snapshot.misses, 1)
        XCTAssertEqual(app.responses.snapshot.hits, 1, "the second answer is the prepared body, not a new encoding")
    }
}
