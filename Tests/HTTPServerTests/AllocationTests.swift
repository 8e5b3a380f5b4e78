import AllocationCounter
import Foundation
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

/// Heap allocations per request on the hot path, counted on the event loop's own thread (malloc, calloc and realloc
/// interposed in the test executable, AllocationCounter). Ceilings, not timings: a change that adds an allocation to
/// every request fails here whatever the machine is doing. These are debug builds (what `swift test` runs: unoptimised
/// code boxes and copies more: 6 for a prepared answer here); a release build allocates once for the same request
/// (Benchmarks/callgrind.sh counts them: BENCHMARKS.md). A request's allocations are a whole number, and since the
/// loop's walks are by index they are the same from run to run and under load: 6 / 6 / 11 in every run here, idle
/// or beside two busy processes. (They used to move by one or more from process to process: unoptimised, a generic
/// iterator allocates at each step, and the latency histogram's walk took as many steps as the request's latency
/// reached buckets, the tick's walk one per descriptor slot.) Each ceiling is the measure plus one and a half: one
/// allocation more on every request passes, two fail.
final class AllocationTests: XCTestCase {
    /// Requests on one keep-alive connection, one at a time as wrk sends them; returns allocations per request.
    func allocationsPerRequest(_ path: String, headers: String = "", requests: Int = 1_000) throws -> Double {
        let router = Router()
        router.get("/arm") { _ in lede_allocations_arm(); return .response(.text("armed")) }
        let plain = PreparedBody(contentType: "text/plain", bytes: Array("Hello, World!".utf8))
        router.get("/plaintext") { _ in .response(.prepared(plain)) }
        let json = PreparedBody(contentType: "application/json", bytes: Array(("{\"items\":[" + (0..<400).map { "\"item \($0)\"" }.joined(separator: ",") + "]}").utf8))
        router.get("/json") { _ in .response(.prepared(json)) }
        router.get("/text") { _ in .response(.text("hello")) }
        let server = try startServer(router)
        defer { lede_allocations_disarm(); stop(server) }
        let c = try RawClient(port: server.port)
        let per = TestSupport.allocationsPerRequest(c, "GET \(path) HTTP/1.1\r\nHost: t\r\n\(headers)\r\n", arm: "/arm", requests: requests) {
            XCTAssertEqual($0, 200)
        }
        print("allocations per request, \(path) \(headers.isEmpty ? "" : headers.trimmingCharacters(in: .whitespacesAndNewlines)): \(per)")
        return per
    }

    func testAPreparedAnswerHasAnAllocationCeiling() throws {
        XCTAssertLessThanOrEqual(try allocationsPerRequest("/plaintext"), 7.5)
    }

    func testAGzippedPreparedAnswerHasAnAllocationCeiling() throws {
        XCTAssertLessThanOrEqual(try allocationsPerRequest("/json", headers: "Accept-Encoding: gzip\r\n"), 7.5)
    }

    func testABuiltAnswerHasAnAllocationCeiling() throws {
        XCTAssertLessThanOrEqual(try allocationsPerRequest("/text"), 12.5)
    }
}
