import Foundation
import Synchronization
import HTTPCore

/// The embedded wiki's clock: the machine's, in whole seconds, as MediaWiki stamps revisions, reading-list changes and
/// `curtimestamp`. One clock for all of them, so that what the embedded default says changed "since" a time it gave is
/// what a live wiki would say. A test may hold it at a time of its own.
public final class EmbeddedClock: Sendable {
    public static let shared = EmbeddedClock()
    private let held = Mutex<Int?>(nil)

    public init() {}

    /// Seconds since 1970, now (or the time the clock is held at).
    public func seconds() -> Int { held.withLock { $0 } ?? Int(Date().timeIntervalSince1970) }

    /// Now as RFC 3339 (`2026-11-29T08:30:00Z`).
    public func stamp() -> String { Timestamp.rfc3339(seconds: seconds()) }

    /// Holds the clock at `seconds` (nil: the machine's time again).
    public func hold(at seconds: Int?) { held.withLock { $0 = seconds } }
}
