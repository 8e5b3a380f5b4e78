import AllocationCounter
import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede

/// Heap allocations of the notification list's whole way on Lede's event loop, as `BadgeAllocationTests` counts the
/// badge's: the request parsed and routed, Echo's list asked of a live (fake) Wikimedia and its answer read by the client
/// on the same loop, decoded and written. The other upstream call kind with a ceiling of its own (issue 71: each call
/// kind's count cannot creep back). A ceiling, not a timing; debug builds box and copy more than the release build.
final class EchoListAllocationTests: XCTestCase {
    func testTheNotificationListThroughALiveUpstreamHasAnAllocationCeiling() throws {
        let fake = try FakeUpstream()
        defer { fake.stop() }
        let server = try armedLedeServer { $0.upstream = fake.template }
        defer { lede_allocations_disarm(); server.shutdown(); server.waitUntilStopped() }

        let c = try RawClient(port: server.port)
        let list = "GET /notifications HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer demo-bob\r\n\r\n"
        let per = allocationsPerRequest(c, list, arm: "/_test/arm", warm: 50, requests: 200) { XCTAssertEqual($0, 200) }
        XCTAssertTrue(fake.requests(kind: "notifications").contains { $0.query?.contains("notprop=list") ?? false }, "Echo's list was asked")
        print("allocations per request, /notifications through a live upstream: \(per)")
        XCTAssertGreaterThan(per, 1, "the loop's thread was armed")
        XCTAssertLessThanOrEqual(per, EchoListAllocationTests.ceiling)
    }

    /// 10,142.2 in every run here (debug build: the demo's list of notifications decoded through `Codable`, each item's
    /// strings and links), plus one and a half per cent.
    static let ceiling = 10_300.0
}
