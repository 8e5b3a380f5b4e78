import Foundation
import HTTPServer
import LedeBasics
import XCTest
@testable import Lede

/// The workers that take CPU work off the event loops hold a bounded queue: past it a job is refused at once, and the
/// client is told to come back (503 busy, a spread Retry-After) rather than left waiting behind seconds of others.
final class WorkersTests: XCTestCase {
    func testAFullQueueRefusesAtOnceAndTheRefusalIsA503WithRetryAfter() async throws {
        let workers = Workers(count: 1, maxQueued: 2)
        let gate = DispatchSemaphore(value: 0)
        // Two jobs hold the worker (one running, blocked on the gate; one waiting).
        let held = (0..<2).map { _ in Task { try await workers.run { gate.wait(); return 1 } } }
        while workers.pending < 2 { try await Task.sleep(nanoseconds: 1_000_000) }
        do {
            _ = try await workers.run { 3 }
            XCTFail("a third job is refused")
        } catch let busy as Workers.Busy {
            let problem = busy.problem
            XCTAssertEqual(problem.status, 503)
            XCTAssertEqual(problem.slug, "busy")
            XCTAssertTrue((1...5).contains(Int(problem.headers["Retry-After"] ?? "") ?? 0))
        }
        gate.signal(); gate.signal()
        for t in held { _ = try await t.value }
        let after = try await workers.run { 4 }
        XCTAssertEqual(after, 4, "once the queue drains, jobs are taken again")
    }
}
