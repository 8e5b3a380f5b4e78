import Foundation
import HTTPServer
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

/// `/random` and the feed's random card from a pool per language.
final class RandomPoolTests: XCTestCase {
    var en: LanguageCode { .english }

    /// A batch of `readable` articles named after the call number, mixed with pages the pool must never serve.
    static func batch(call: Int, readable: Int) -> QueryResult {
        var pages: [String] = [
            "{\"ns\":0,\"title\":\"Mercury \(call)\",\"pageprops\":{\"disambiguation\":\"\"}}",
            "{\"ns\":4,\"title\":\"Wikipedia:Sandbox \(call)\"}",
            "{\"ns\":0,\"title\":\"Gone \(call)\",\"missing\":true}",
        ]
        pages += (0..<readable).map { "{\"ns\":0,\"title\":\"Article \(call)-\($0)\",\"extract\":\"Text.\"}" }
        let json = "[" + pages.joined(separator: ",") + "]"
        return QueryResult(pages: try! JSONDecoder().decode([QueryPage].self, from: Data(json.utf8)), redirects: [])
    }

    func pool(_ api: StubAPI, lowWater: Int = 6) -> RandomPool {
        var settings = RandomPool.Settings()
        settings.lowWater = lowWater
        return RandomPool(api: api, settings: settings)
    }

    func testThePoolNeverServesADisambiguationPageOrAnotherNamespace() async throws {
        let api = StubAPI()
        api.randomBatch = { call in Self.batch(call: call, readable: 4) }
        let p = pool(api, lowWater: 2)
        for _ in 0..<60 {
            let card = try await p.card(lang: en).card
            XCTAssertTrue(card.title.hasPrefix("Article "), card.title)
            XCTAssertEqual(card.type, "standard")
        }
    }

    func testOneUpstreamCallFillsAnEmptyPoolFor100ConcurrentRequests() async throws {
        let api = StubAPI()
        api.delays["random"] = 0.2
        api.randomBatch = { call in Self.batch(call: call, readable: 20) }
        let p = pool(api, lowWater: 0)
        let titles = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 { group.addTask { try await p.card(lang: .english).card.title } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(titles.count, 100)
        XCTAssertEqual(p.refillCount(lang: en), 2, "every waiter shares one refill; emptying its 20 cards starts one more (the low-water crossing)")
        XCTAssertLessThanOrEqual(api.count("random"), 2)
        XCTAssertEqual(Set(titles).count, 20, "20 fresh cards, then the served ones rotate")
    }

    func testCrossingTheLowWaterMarkStartsOneRefillUnderConcurrency() async throws {
        let api = StubAPI()
        api.randomBatch = { call in Self.batch(call: call, readable: 20) }
        let p = pool(api, lowWater: 6)
        _ = try await p.card(lang: en)   // the first fill
        XCTAssertEqual(api.count("random"), 1)
        api.delays["random"] = 0.3   // the refill stays in flight while the requests below arrive
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { _ = p.next(lang: .english) } }
        }
        XCTAssertEqual(p.refillCount(lang: en), 2, "one refill for the crossing")
        try await Task.sleep(nanoseconds: 600_000_000)
        XCTAssertEqual(api.count("random"), 2, "one upstream call for it")
        let after = try XCTUnwrap(p.next(lang: en))
        XCTAssertTrue(after.card.title.hasPrefix("Article 2-"), "fresh cards of the refill are served first")
    }

    func testCardsRotateWithoutConsecutiveRepeatsWhileNoNewOnesArrive() async throws {
        let api = StubAPI()
        api.randomBatch = { call in
            if call > 1 { throw UpstreamError.unavailable(status: 500) }
            return Self.batch(call: call, readable: 3)
        }
        let p = pool(api, lowWater: 1)
        var seen: [String] = []
        for _ in 0..<12 { seen.append(try await p.card(lang: en).card.title) }
        for (a, b) in zip(seen, seen.dropFirst()) { XCTAssertNotEqual(a, b) }
        XCTAssertEqual(Set(seen), ["Article 1-0", "Article 1-1", "Article 1-2"])
        XCTAssertLessThanOrEqual(api.count("random"), 3, "a failed refill is not retried on every request")
    }

    func testAnEmptyPoolWhoseRefillFailsThrowsTheRefillsError() async throws {
        let api = StubAPI()
        api.randomBatch = { call in Self.batch(call: call, readable: 0) }
        let p = pool(api)
        do { _ = try await p.card(lang: en); XCTFail() } catch let problem as Problem {
            XCTAssertEqual(problem.status, 503)
            XCTAssertEqual(problem.slug, "no-random-article")
        }
        XCTAssertEqual(api.count("random"), 3, "bounded draws")
        api.randomBatch = { _ in throw UpstreamError.timeout }
        do { _ = try await p.card(lang: en); XCTFail() } catch { XCTAssertEqual(error as? UpstreamError, .timeout) }
    }

    func testTheFeedsRandomCardComesFromThePool() async throws {
        let api = StubAPI()
        let random = RandomPool(api: api)
        let service = FeedService(api: api, random: random)
        _ = try await service.feed(try feedRequest("sections=random"))
        XCTAssertEqual(random.refillCount(lang: en), 1)
    }
}
