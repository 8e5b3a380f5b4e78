import XCTest
import TestSupport
import HTTPServer
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

final class GeoTests: XCTestCase {
    func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon)! }

    func testDistanceAgainstKnownCityPairs() {
        // Great-circle distances on the mean-radius sphere; published figures round to the km.
        XCTAssertEqual(Geo.distance(c(51.5074, -0.1278), c(48.8566, 2.3522)) / 1000, 343.6, accuracy: 1.0, "London–Paris")
        XCTAssertEqual(Geo.distance(c(40.7128, -74.0060), c(34.0522, -118.2437)) / 1000, 3936, accuracy: 5, "New York–Los Angeles")
        XCTAssertEqual(Geo.distance(c(52.3676, 4.9041), c(55.6761, 12.5683)) / 1000, 622, accuracy: 3, "Amsterdam–Copenhagen")
        XCTAssertEqual(Geo.distance(c(0, 0), c(1, 0)), 111_195, accuracy: 1, "one degree of latitude")
        XCTAssertEqual(Geo.distance(c(0, 0), c(0, 180)), Double.pi * Geo.earthRadius, accuracy: 1, "half the equator")
        XCTAssertEqual(Geo.distance(c(19.0761, 72.8775), c(19.0761, 72.8775)), 0)
    }

    func testInitialBearingAgainstKnownDirections() {
        XCTAssertEqual(Geo.bearing(c(0, 0), c(1, 0)), 0, accuracy: 1e-9, "north")
        XCTAssertEqual(Geo.bearing(c(0, 0), c(0, 1)), 90, accuracy: 1e-9, "east")
        XCTAssertEqual(Geo.bearing(c(0, 0), c(-1, 0)), 180, accuracy: 1e-9, "south")
        XCTAssertEqual(Geo.bearing(c(0, 0), c(0, -1)), 270, accuracy: 1e-9, "west")
        XCTAssertEqual(Geo.bearing(c(51.5074, -0.1278), c(48.8566, 2.3522)), 148.1, accuracy: 0.5, "London to Paris heads south-east")
        XCTAssertEqual(Geo.bearing(c(40.7128, -74.0060), c(34.0522, -118.2437)), 273.7, accuracy: 1, "New York to Los Angeles starts west")
        let b = Geo.bearing(c(10, 10), c(10, 10))
        XCTAssertTrue((0..<360).contains(b))
    }

    func testStrictCoordinateParsing() {
        for ok in ["0", "-0", "52.3547498", "-90", "180", "4.8", "-179.9999999"] { XCTAssertNotNil(Coordinate.parseDecimal(ok), ok) }
        // The exact fast path gives the very double strtod gives (bit for bit), long inputs included.
        var rng = SeededGenerator(state: 31)
        var samples = ["0.1", "0.3", "-0", "89.99999999999999", "52.35474980000000001", "1234567890123456789.5", "0.0000000000000000000001"]
        for _ in 0..<20_000 {
            let whole = Int.random(in: 0...180, using: &rng), places = Int.random(in: 0...17, using: &rng)
            var text = (Bool.random(using: &rng) ? "-" : "") + String(whole)
            if places > 0 { text += "." + String((0..<places).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) }) }
            samples.append(text)
        }
        for text in samples { XCTAssertEqual(Coordinate.parseDecimal(text)?.bitPattern, Double(text)?.bitPattern, text) }
        for bad in ["", "+1", "1e3", "0x10", "52,35", " 52", "52 ", "NaN", "inf", "1.", ".5", "--1", "1.2.3", String(repeating: "1", count: 41)] {
            XCTAssertNil(Coordinate.parseDecimal(bad), bad)
        }
        if case .success = Coordinate.parse(lat: "90.0000001", lon: "0") { XCTFail("just outside") }
        if case .success = Coordinate.parse(lat: "0", lon: "-180.0000001") { XCTFail("just outside") }
        if case .failure = Coordinate.parse(lat: "-90", lon: "180") { XCTFail("boundaries are inside") }
    }
}

final class ContentRulesTests: XCTestCase {
    let en = LanguageCode.english
    func page(_ title: String, ns: Int = 0, disambiguation: Bool = false, at: (Double, Double)? = nil) -> QueryPage {
        QueryPage(pageid: 1, ns: ns, title: title, index: nil, pageprops: disambiguation ? ["disambiguation": ""] : nil, thumbnail: nil,
                  description: nil, extract: "\(title) (/ˈtest/) is a page.", coordinates: at.map { [.init(lat: $0.0, lon: $0.1, dist: nil, primary: true)] }, missing: nil)
    }

    /// Seed 000, Explore feed "Because you read": recommendations never include disambiguation pages, pages
    /// outside the main namespace, or the article itself.
    func testBecauseYouReadNeverRecommendsDisambiguationOrNonArticlesOrTheSource() {
        let r = QueryResult(pages: [page("Mercury (planet)"), page("Mercury", disambiguation: true), page("Talk:Mercury", ns: 1),
                                    page("Venus"), page("Portal:Space", ns: 100), page("Mars"), page("Jupiter"), page("Venus")], redirects: [])
        let cards = ContentRules.related(r, source: "Mercury_(planet)", lang: en, limit: 3)
        XCTAssertEqual(cards.map(\.title), ["Venus", "Mars", "Jupiter"])
        XCTAssertEqual(cards.first?.extract, "Venus is a page.", "extracts are cleaned everywhere")
        XCTAssertEqual(ContentRules.related(r, source: "Mercury (planet)", lang: en, limit: 1).count, 1)
    }

    /// Seed 000, Random article: never a disambiguation page or a non-main-namespace page.
    func testRandomArticleIsNeverADisambiguationPage() {
        let r = QueryResult(pages: [page("A", disambiguation: true), page("B"), page("C", ns: 2), page("D", disambiguation: true)], redirects: [])
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 { XCTAssertEqual(ContentRules.randomPick(r, using: &rng)?.title, "B") }
        XCTAssertNil(ContentRules.randomPick(QueryResult(pages: [page("X", disambiguation: true)], redirects: []), using: &rng))
    }

    /// Seed 000, Nearby: distance and compass direction per article, nearest first.
    func testNearbyCardsCarryDistanceAndBearingNearestFirst() {
        let user = Coordinate(latitude: 52.3547498, longitude: 4.8339215)!
        let r = QueryResult(pages: [page("Dam Square", at: (52.3731, 4.8926)), page("Vondelpark", at: (52.358, 4.8686)),
                                    page("Amsterdam (disambiguation)", disambiguation: true, at: (52.37, 4.89)), page("North", at: (52.4, 4.8339215))], redirects: [])
        let cards = ContentRules.nearby(r, from: user, lang: en)
        XCTAssertEqual(cards.map(\.title), ["Vondelpark", "Dam Square", "North"])
        XCTAssertEqual(cards.last?.bearingDegrees, 0)
        XCTAssertEqual(cards[0].distanceMeters!, 2383, accuracy: 2)
        XCTAssertTrue(cards.allSatisfy { (0..<360).contains($0.bearingDegrees!) })
    }

    /// Seed 000, Search: "Redirected from $query"; disambiguation results marked with the standard description.
    func testSearchPutsPrefixFirstAppendsFullTextWithoutDuplicatesAndMarksRedirects() {
        let prefix = QueryResult(pages: [page("Mumbai"), page("Bomb (disambiguation)", disambiguation: true)], redirects: [.init(from: "Bombay", to: "Mumbai")])
        let full = QueryResult(pages: [page("Mumbai"), page("Bombardier"), page("Talk:Bomb", ns: 1)], redirects: [])
        let cards = ContentRules.search(prefix: prefix, fullText: full, lang: en)
        XCTAssertEqual(cards.map(\.title), ["Mumbai", "Bomb (disambiguation)", "Bombardier"])
        XCTAssertEqual(cards[0].redirectedFrom, "Bombay")
        XCTAssertEqual(cards[1].isDisambiguation, true)
        XCTAssertEqual(cards[1].description, "Wikipedia disambiguation page")
        XCTAssertEqual(cards[2].isDisambiguation, false)
    }

    /// Seed 000, Link previews: "Given the article summary has an IPA … Then the IPA and enclosing parentheses should be removed".
    func testLinkPreviewCardHasIPARemovedFromExtractAndHTML() {
        let s = EmbeddedTransport.summary(EmbeddedArticles.byLanguage["en"]!.first { $0.title == "Albert Einstein" }!, lang: "en")
        let card = Card(summary: s, lang: en)
        XCTAssertTrue(card.extract.hasPrefix("Albert Einstein was a German-born theoretical physicist"))
        XCTAssertTrue(card.extractHtml.hasPrefix("<p><b>Albert Einstein</b> was a German-born"), card.extractHtml)
        XCTAssertEqual(card.url, "https://en.wikipedia.org/wiki/Albert_Einstein")
        XCTAssertEqual(card.title, "Albert Einstein")
    }
}

final class ArticleTitleTests: XCTestCase {
    /// The byte path for ASCII titles must give exactly what the general (Foundation) path gives.
    func testASCIINormalisationMatchesTheGeneralRules() {
        let titles = ["albert Einstein", "  Albert   Einstein \t", "Albert__Einstein", "_leading", "trailing_ ", "a", "", " ",
                      "iPhone", "1984 (novel)", "\tTab\tinside", "x  _ y", "Talk:Foo bar", "ABC", "zebra crossing"]
        for t in titles {
            XCTAssertEqual(ArticleTitle.normaliseASCII(t), ArticleTitle.normaliseUnicode(t), "'\(t)'")
        }
        XCTAssertNil(ArticleTitle.normaliseASCII("Café"))
        XCTAssertEqual(ArticleTitle.normalise("éclair au chocolat"), "Éclair_au_chocolat")
        XCTAssertEqual(ArticleTitle.normalise("São Paulo"), "São_Paulo")
    }

    /// The feed reads `because` and `continue` in one pass over an ASCII title's bytes: the same title (or the same
    /// problem) as the title rules followed by the database form.
    func testANormalisedArticleTitleIsTheTitleRulesThenTheDatabaseForm() {
        let titles = ["albert Einstein", "  Albert   Einstein ", "Albert__Einstein", "_leading", "a", "", " ", "   ", "iPhone",
                      "1984 (novel)", "\tTab", "x  _ y", "Talk:Foo bar", "zebra crossing", "café au lait", "a#b", "a|b", "{x}",
                      String(repeating: "a", count: 255), String(repeating: "a", count: 256), "\u{00A0}São Paulo ", "e\u{0}",
                      "Tab\t", " \t x", "a\u{7F}b", "[[x]]", "a<b>", "  _  ", "x\u{1F}"]
        for t in titles {
            let expected = Result { ArticleTitle.normalise(try Parameters.articleTitle(t)) }
            let got = Result { try Parameters.normalisedArticleTitle(t) }
            switch (expected, got) {
            case (.success(let a), .success(let b)): XCTAssertEqual(a, b, "'\(t)'")
            case (.failure(let a as Problem), .failure(let b as Problem)): XCTAssertEqual(a.slug, b.slug, "'\(t)'")
            default: XCTFail("'\(t)': \(expected) against \(got)")
            }
        }
        XCTAssertEqual(try Parameters.normalisedArticleTitle(" albert  einstein "), "Albert_einstein")
    }

    /// The feed's cache keys: equal exactly when they name the same thing; kinds, languages, days, titles and cells
    /// never share one.
    func testFeedKeysAreEqualExactlyWhenTheyNameTheSameThing() {
        let en = LanguageCode("en")!, de = LanguageCode("de")!, ja = LanguageCode("ja")!
        let keys: [FeedKey] = [
            .shared(lang: en, day: 20419, isToday: true), .shared(lang: en, day: 20419, isToday: false),
            .shared(lang: de, day: 20419, isToday: true), .shared(lang: en, day: 20420, isToday: true),
            FeedKey(.because, lang: en, title: "Albert_Einstein"), FeedKey(.continueReading, lang: en, title: "Albert_Einstein"),
            FeedKey(.because, lang: ja, title: "Albert_Einstein"), FeedKey(.because, lang: en, title: "東京"),
            FeedKey(.because, lang: en, title: ""), FeedKey(.nearby, lang: en, 5235, 483), FeedKey(.nearby, lang: en, 483, 5235),
            FeedKey(.nearby, lang: en, 0, 0), FeedKey(.nearby, lang: de, 5235, 483),
        ]
        XCTAssertEqual(Set(keys).count, keys.count)
        let editions = [en.index: en, de.index: de, ja.index: ja]
        for key in keys where !key.title.isEmpty {
            XCTAssertNotEqual(FeedKey(key.kind, lang: editions[key.lang]!, title: key.title + "x"), key)
        }
        var titled = "Albert"; titled += "_Einstein"   // built, not a literal
        XCTAssertEqual(FeedKey(.because, lang: en, title: titled), keys[4])
        XCTAssertEqual(FeedKey(.because, lang: en, title: titled).hashValue, keys[4].hashValue)
        XCTAssertEqual(FeedKey(.because, lang: LanguageCode("EN")!, title: titled), keys[4])
        // Every edition has its own number.
        XCTAssertEqual(Set(LanguageCode.all.map { LanguageCode($0)!.index }).count, LanguageCode.all.count)
    }

    func testTrimmingSpacesMatchesFoundationWhitespaces() {
        for s in ["", " ", "a", " a ", "\ta\t", "\u{00A0}Café\u{2003}", "a b", "\u{3000}東京\u{3000}", "\n x \n"] {
            XCTAssertEqual(ArticleTitle.trimmingSpaces(s), s.trimmingCharacters(in: .whitespaces), "'\(s)'")
        }
    }
}
