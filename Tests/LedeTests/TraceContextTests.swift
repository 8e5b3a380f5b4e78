import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore

/// W3C Trace Context: a `traceparent` that comes in is kept for the request (its upstream calls carry children of it,
/// its problems and its access-log line name it), one is made when none comes, and a malformed one is replaced,
/// never passed on.
final class TraceContextTests: FakeUpstreamTestCase {
    static let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    func testTheSpecificationsExamplesAndItsRefusals() {
        let ok = TraceContext.parse(Self.incoming)
        XCTAssertEqual(ok?.high, 0x4bf92f3577b34da6)
        XCTAssertEqual(ok?.low, 0xa3ce929d0e0e4736)
        XCTAssertEqual(ok?.parent, 0x00f067aa0ba902b7)
        XCTAssertEqual(ok?.flags, 1)
        // A later version is read by its first four fields.
        XCTAssertNotNil(TraceContext.parse("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds"))
        let refused = [
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",        // version ff
            "0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",        // version not hex
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",        // all-zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",        // all-zero parent id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // version 00 is exactly 55 characters
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",         // a digit short
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",        // upper case
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",        // separators
            "", "00",
        ]
        for r in refused { XCTAssertNil(TraceContext.parse(r), r) }
        var rng = SplitMix64(seed: 7)
        let fresh = TraceContext.make(traceparent: refused[2], tracestate: "vendor=1", span: 9, fresh: { (rng.next(), rng.next()) })
        XCTAssertNil(fresh.parentID)
        XCTAssertNil(fresh.state, "a tracestate never goes on without its valid traceparent")
        XCTAssertNotEqual(fresh.traceID, "00000000000000000000000000000000")
        XCTAssertEqual(fresh.child(span: 5), "00-\(fresh.traceID)-0000000000000005-00")
        XCTAssertNotNil(TraceContext.parse(fresh.child(span: 5)))
    }

    private func upstreamTraceparents() -> [String] { fake.requests.compactMap { $0.headers["traceparent"] } }


    func testUpstreamCallsCarryChildrenOfTheIncomingTrace() async throws {
        let (status, _) = try get(server, "/article/Albert_Einstein", ["traceparent": Self.incoming, "tracestate": "lede=t61rcWkgMzE"]).statusAndJSON
        XCTAssertEqual(status, 200)
        let sent = upstreamTraceparents()
        XCTAssertGreaterThanOrEqual(sent.count, 4, "every upstream call of the screen carries a traceparent")
        let parsed = sent.compactMap { TraceContext.parse($0) }
        XCTAssertEqual(parsed.count, sent.count, "each one well-formed: \(sent)")
        XCTAssertTrue(parsed.allSatisfy { $0.high == 0x4bf92f3577b34da6 && $0.low == 0xa3ce929d0e0e4736 && $0.flags == 1 }, "the same trace")
        XCTAssertFalse(parsed.contains { $0.parent == 0x00f067aa0ba902b7 }, "new parent ids, not the caller's")
        XCTAssertEqual(Set(parsed.map(\.parent)).count, parsed.count, "a span id per call")
        XCTAssertTrue(fake.requests.allSatisfy { $0.headers["tracestate"] == "lede=t61rcWkgMzE" })
    }

    func testWithoutATraceOrWithAMalformedOneAFreshTraceIsMadeAndTheBadOneNeverPassedOn() async throws {
        _ = try get(server, "/summary/Amsterdam")
        let first = try XCTUnwrap(upstreamTraceparents().first.flatMap { TraceContext.parse($0) })
        let malformed = "00-00000000000000000000000000000000-00f067aa0ba902b7-01"
        _ = try get(server, "/summary/Mumbai", ["traceparent": malformed, "tracestate": "leak=1"])
        let all = upstreamTraceparents()
        XCTAssertEqual(all.count, 2)
        let second = try XCTUnwrap(TraceContext.parse(all[1]))
        XCTAssertFalse(all.contains(malformed))
        XCTAssertFalse(second.high == first.high && second.low == first.low, "each request its own fresh trace")
        XCTAssertNil(fake.requests[1].headers["tracestate"])
    }

    func testAProblemAndTheAccessLogNameTheTrace() async throws {
        let (status, problem) = try get(server, "/no/such/route", ["traceparent": Self.incoming]).statusAndJSON
        XCTAssertEqual(status, 404)
        XCTAssertEqual(problem["traceId"] as? String, "4bf92f3577b34da6a3ce929d0e0e4736")
        let (badStatus, bad) = try get(server, "/summary/%5Bbad%5D").statusAndJSON
        XCTAssertEqual(badStatus, 400)
        XCTAssertEqual((bad["traceId"] as? String)?.count, 32)
        var line: [UInt8] = []
        let trace = TraceContext.make(traceparent: Self.incoming, tracestate: nil, span: 0xabc, fresh: { (1, 2) })
        AccessLog.append(to: &line, method: "GET", route: "/x", path: "/x", status: 200, bytes: 1, micros: 2, requestID: "r", trace: trace)
        let logged = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        XCTAssertEqual(logged["trace_id"] as? String, "4bf92f3577b34da6a3ce929d0e0e4736")
        XCTAssertEqual(logged["span_id"] as? String, "0000000000000abc")
        XCTAssertEqual(logged["parent_span_id"] as? String, "00f067aa0ba902b7")
        XCTAssertEqual(logged["request_id"] as? String, "r")
    }
}
