import Foundation
import Glibc
import Synchronization
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

/// A client that pipelines and reads nothing holds no more of the server than `limits.maxUnsentBytes` of answers (and
/// the kernel's buffers): the connection stops reading and parsing until the client takes what it was sent (issue 68).
final class BackPressureOnAnswersTests: XCTestCase {
    func testAPipeliningClientThatReadsNothingIsAnsweredOnlyAsFastAsItReads() throws {
        let answered = Atomic<Int>(0)
        let big = PreparedBody(contentType: "application/octet-stream", bytes: [UInt8](repeating: 97, count: 16 * 1024))
        let router = Router()
        router.get("/big/{n}") { _ in
            answered.wrappingAdd(1, ordering: .relaxed)
            return .response(.prepared(big))
        }
        let server = try startServer(router)
        defer { server.shutdown(); server.waitUntilStopped() }
        let c = try RawClient(port: server.port, timeout: 10, receiveBuffer: 4096)
        let requests = 1_000   // 16 MB of answers; the requests themselves, 40 KB, fit the server's receive buffer
        var text = ""
        for i in 0..<requests { text += "GET /big/\(i) HTTP/1.1\r\nHost: t\r\n\r\n" }
        c.send(text)
        // Whatever the server could queue: its own bound and the kernel's send buffer (a few MB at most).
        var before = -1
        for _ in 0..<50 {
            Thread.sleep(forTimeInterval: 0.05)
            let now = answered.load(ordering: .relaxed)
            if now == before { break }
            before = now
        }
        let held = answered.load(ordering: .relaxed)
        XCTAssertLessThan(held, requests / 2, "the server stopped answering a client that reads nothing: \(held) of \(requests)")
        XCTAssertGreaterThan(held, 0)
        // Reading, the client gets every answer, in order.
        for i in 0..<requests {
            guard let r = c.readResponse() else { return XCTFail("answer \(i) missing") }
            XCTAssertEqual(r.status, 200)
            XCTAssertEqual(r.body.count, 16 * 1024)
        }
        XCTAssertEqual(answered.load(ordering: .relaxed), requests)
    }
}
