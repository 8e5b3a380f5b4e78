import AllocationCounter
import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede

/// Heap allocations of a problem answer on Lede's event loop (AllocationCounter, as `FeedAllocationTests` counts the
/// feed's): the catalogue stays off the path of a problem said in English, and its lookup costs nothing beyond the
/// words themselves in another language. A flood's 429s and a scanner's 404s are answered this way.
final class ProblemAllocationTests: XCTestCase {
    func allocations(_ target: String, _ headers: String = "", status: Int) throws -> Double {
        let server = try armedLedeServer()
        defer { lede_allocations_disarm(); server.shutdown(); server.waitUntilStopped() }
        let c = try RawClient(port: server.port)
        let per = allocationsPerRequest(c, "GET \(target) HTTP/1.1\r\nHost: t\r\n\(headers)\r\n", arm: "/_test/arm", requests: 300) {
            XCTAssertTrue($0 == status || $0 == 200, "\($0.map(String.init) ?? "no answer")")   // the arming request answers 200
        }
        print("allocations per request, \(target) \(headers.trimmingCharacters(in: .whitespacesAndNewlines)): \(per)")
        XCTAssertGreaterThan(per, 0.5, "the loop's thread was armed")
        return per
    }

    func testAProblemInEnglishHasAnAllocationCeiling() throws {
        XCTAssertLessThanOrEqual(try allocations("/no/such/route", status: 404), Self.noRouteCeiling)
        XCTAssertLessThanOrEqual(try allocations("/summary/Dog?lang=zz", status: 400), Self.routeProblemCeiling)
    }

    /// In German the title and the detail are looked up and the problem encoded once more: its own words' worth.
    func testAProblemInAnotherLanguageHasAnAllocationCeiling() throws {
        XCTAssertLessThanOrEqual(try allocations("/no/such/route", "Accept-Language: de\r\n", status: 404), Self.noRouteGermanCeiling)
    }

    /// Debug builds, plus one and a half. Before the catalogue gave problems their details (636b603): 75.0 and 89.0;
    /// with it, and the problem's member names encoded once rather than per problem: 71.0 and 87.0; messages found by
    /// a dictionary rather than `init(rawValue:)`: 71.0 and 84.0; issue 68's budgets (a request's budget a struct, the
    /// limiter no longer looked up twice): 68.0 and 80.0; issue 70's two routes made it 71.0 and 81.0 (every patterned
    /// route of the path's length was copied with a dictionary of its own before its literals were compared); the
    /// router comparing in place first: 44.0 and 50.0.
    static let noRouteCeiling = 45.5
    static let routeProblemCeiling = 51.5
    /// 95.0: the words looked up along one fallback chain, `$N` replaced over bytes, the problem encoded again (101.0
    /// with a `Character` walk and Foundation's `contains`); 89.0 with issue 69's reading (every tag by q-value, as
    /// MediaWiki's code, the catalogue's languages a set made once; a first version walking each tag's chain: 102.0);
    /// 65.0 with the router comparing a route's literals in place.
    static let noRouteGermanCeiling = 66.5
}
