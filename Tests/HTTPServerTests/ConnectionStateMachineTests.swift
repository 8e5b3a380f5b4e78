import XCTest
@testable import HTTPServer

final class ConnectionStateMachineTests: XCTestCase {
    let s: UInt64 = 1_000_000_000
    var timeouts: ConnectionStateMachine.Timeouts { .init(header: 10 * s, idle: 60 * s) }

    func testFreshConnectionMustSendItsHeadWithinTheHeaderTimeout() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        XCTAssertEqual(m.timerFired(now: 9 * s), .none)
        XCTAssertEqual(m.timerFired(now: 10 * s), .close)
        XCTAssertEqual(m.state, .closed)
    }

    func testSlowlorisGets408() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        m.bytesReceived(now: 1 * s, headComplete: false)
        m.bytesReceived(now: 9 * s, headComplete: false)  // trickling bytes do not reset the header clock
        XCTAssertEqual(m.timerFired(now: 10 * s), .none)
        XCTAssertEqual(m.timerFired(now: 11 * s), .timeoutAndClose)
    }

    func testKeepAliveIdleUsesIdleTimeout() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        m.bytesReceived(now: 1 * s, headComplete: false)
        m.requestDispatched(now: 1 * s)
        XCTAssertEqual(m.responseCompleted(now: 2 * s, keepAlive: true, moreBuffered: false), .none)
        XCTAssertEqual(m.state, .idle(since: 2 * s, fresh: false))
        XCTAssertEqual(m.timerFired(now: 30 * s), .none)
        XCTAssertEqual(m.timerFired(now: 62 * s), .close)
    }

    func testConnectionCloseEndsAfterResponse() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        m.requestDispatched(now: 0)
        XCTAssertEqual(m.responseCompleted(now: 1, keepAlive: false, moreBuffered: false), .close)
    }

    func testPipelinedBytesStartTheHeaderClock() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        m.requestDispatched(now: 0)
        XCTAssertEqual(m.responseCompleted(now: 1 * s, keepAlive: true, moreBuffered: true), .none)
        XCTAssertEqual(m.state, .readingHead(since: 1 * s))
    }

    func testSlowBodyIsCutAfterIdleTimeoutWithoutProgress() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        m.bytesReceived(now: 0, headComplete: true)
        m.bytesReceived(now: 50 * s, headComplete: true)
        XCTAssertEqual(m.timerFired(now: 100 * s), .none)
        XCTAssertEqual(m.timerFired(now: 111 * s), .timeoutAndClose)
    }

    func testShutdownClosesIdleAndLetsBusyFinish() {
        var idle = ConnectionStateMachine(now: 0, timeouts: timeouts)
        idle.requestDispatched(now: 0)
        _ = idle.responseCompleted(now: 1, keepAlive: true, moreBuffered: false)
        XCTAssertEqual(idle.shutdownRequested(), .close)

        var fresh = ConnectionStateMachine(now: 0, timeouts: timeouts)
        XCTAssertEqual(fresh.shutdownRequested(), .none, "a just-accepted connection gets to send its request")
        fresh.bytesReceived(now: 1, headComplete: false)
        fresh.requestDispatched(now: 2)
        XCTAssertEqual(fresh.responseCompleted(now: 3, keepAlive: true, moreBuffered: false), .close)
        var silent = ConnectionStateMachine(now: 0, timeouts: timeouts)
        _ = silent.shutdownRequested()
        XCTAssertEqual(silent.timerFired(now: 10 * s), .close, "but not longer than the header timeout")

        var busy = ConnectionStateMachine(now: 0, timeouts: timeouts)
        busy.requestDispatched(now: 0)
        XCTAssertEqual(busy.shutdownRequested(), .none)
        XCTAssertTrue(busy.mustCloseAfterResponse)
        XCTAssertEqual(busy.responseCompleted(now: 1, keepAlive: true, moreBuffered: false), .close)
    }

    func testDrainingStillAnswersPipelinedRequests() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        m.requestDispatched(now: 0)
        _ = m.shutdownRequested()
        XCTAssertEqual(m.responseCompleted(now: 1, keepAlive: true, moreBuffered: true), .none)
        m.requestDispatched(now: 2)
        XCTAssertEqual(m.responseCompleted(now: 3, keepAlive: true, moreBuffered: false), .close)
    }

    func testStalledWriteIsCut() {
        var m = ConnectionStateMachine(now: 0, timeouts: timeouts)
        m.requestDispatched(now: 0)
        m.writeProgressed(now: 30 * s)
        XCTAssertEqual(m.timerFired(now: 80 * s), .none)
        XCTAssertEqual(m.timerFired(now: 91 * s), .close)
    }
}
