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

    /// Stamps may come from a fresher clock reading than the timer's (a wake-up's cached time against a reading taken
    /// later in it, or the other way round): a stamp ahead of the check is no time passed, never a wrapped-around
    /// eternity that closes a live connection.
    func testAStampAheadOfTheTimersClockIsNoTimePassed() {
        var m = ConnectionStateMachine(now: 5 * s, timeouts: timeouts)
        XCTAssertEqual(m.timerFired(now: 5 * s - 1), .none)
        m.bytesReceived(now: 6 * s, headComplete: false)
        XCTAssertEqual(m.timerFired(now: 6 * s - 1), .none)
        m.requestDispatched(now: 7 * s)
        XCTAssertEqual(m.timerFired(now: 7 * s - 1), .none)
        XCTAssertEqual(m.responseCompleted(now: 8 * s, keepAlive: true, moreBuffered: false), .none)
        XCTAssertEqual(m.timerFired(now: 8 * s - 1), .none)
        XCTAssertEqual(m.state, .idle(since: 8 * s, fresh: false))
        XCTAssertEqual(m.timerFired(now: 68 * s), .close)
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

    // MARK: - Streams

    func testAStreamIsNotCutByHeaderOrIdleTimeoutsOnlyByAStall() {
        var m = ConnectionStateMachine(now: 0, timeouts: .init(header: 10 * s, idle: 60 * s, stall: 30 * s, heartbeat: 25 * s))
        m.requestDispatched(now: 0)
        m.streamStarted(now: 0, heartbeats: false)
        m.streamOutput(pending: false, progressed: true, now: 0)
        XCTAssertEqual(m.timerFired(now: 600 * s), .none, "a quiet raw stream with nothing waiting lives on")
        // Bytes wait from 600 s; the client takes some at 620 s, then none.
        m.streamWrote(now: 600 * s)
        m.streamOutput(pending: true, progressed: false, now: 600 * s)
        m.streamOutput(pending: true, progressed: false, now: 610 * s)   // no progress: the clock keeps 600 s
        XCTAssertEqual(m.timerFired(now: 620 * s), .none)
        m.streamOutput(pending: true, progressed: true, now: 620 * s)
        XCTAssertEqual(m.timerFired(now: 649 * s), .none)
        XCTAssertEqual(m.timerFired(now: 650 * s), .closeStalled)
        XCTAssertEqual(m.state, .closed)
    }

    func testAQuietEventStreamGetsHeartbeatsAndAWriteResetsTheirClock() {
        var m = ConnectionStateMachine(now: 0, timeouts: .init(header: 10 * s, idle: 60 * s, stall: 30 * s, heartbeat: 25 * s))
        m.requestDispatched(now: 0)
        m.streamStarted(now: 0, heartbeats: true)
        XCTAssertEqual(m.timerFired(now: 24 * s), .none)
        XCTAssertEqual(m.timerFired(now: 25 * s), .heartbeat)
        XCTAssertEqual(m.timerFired(now: 26 * s), .none, "the heartbeat counts as a write")
        m.streamWrote(now: 40 * s)
        XCTAssertEqual(m.timerFired(now: 50 * s), .none)
        XCTAssertEqual(m.timerFired(now: 65 * s), .heartbeat)
        // While bytes wait, no heartbeat piles up behind them.
        m.streamOutput(pending: true, progressed: false, now: 66 * s)
        XCTAssertEqual(m.timerFired(now: 91 * s), .none)
        // The stream ends; the connection is kept alive as after any response.
        XCTAssertEqual(m.responseCompleted(now: 92 * s, keepAlive: true, moreBuffered: false), .none)
        XCTAssertEqual(m.state, .idle(since: 92 * s, fresh: false))
    }
}
