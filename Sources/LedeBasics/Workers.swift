import Dispatch
import Foundation
import Synchronization

/// CPU work that can take milliseconds (scanning a 3 MB page), run off the event loops: one serial Dispatch queue per
/// core, each job on the queue with the fewest waiting. At most that many jobs run at once whatever arrives; the
/// loops only hand the job over and are resumed with its result. The queues are bounded: past `maxQueued` jobs
/// waiting on a worker, a new job is refused at once (`Workers.Busy`, answered 503 with a spread `Retry-After`)
/// rather than waiting behind seconds of others.
public final class Workers: Sendable {
    public static let shared = Workers(count: ProcessInfo.processInfo.activeProcessorCount)

    private let queues: [DispatchQueue]
    private let waiting: Mutex<[Int]>
    /// Jobs a worker holds (running and waiting) before new ones are refused.
    public let maxQueued: Int

    /// The workers are full: the job was not queued.
    public struct Busy: Error, Sendable {}

    public init(count: Int, maxQueued: Int = 32) {
        let n = max(1, count)
        queues = (0..<n).map { DispatchQueue(label: "lede.worker.\($0)") }
        waiting = Mutex([Int](repeating: 0, count: n))
        self.maxQueued = max(1, maxQueued)
    }

    /// Jobs given and not yet finished.
    public var pending: Int { waiting.withLock { $0.reduce(0, +) } }

    /// `work` on a worker when what it reads is large (`size` bytes, over 64 KiB), else here, at once.
    public func offLoop<T: Sendable>(_ size: Int, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard size > 64 << 10 else { return try work() }
        return try await run { Result { try work() } }.get()
    }

    /// `work` on the worker with the fewest jobs; throws `Busy` when even that one holds `maxQueued`.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        let limit = maxQueued
        let i = waiting.withLock { w -> Int? in
            let i = w.indices.min { w[$0] < w[$1] } ?? 0
            if w[i] >= limit { return nil }
            w[i] += 1
            return i
        }
        guard let i else { throw Busy() }
        return await withCheckedContinuation { continuation in
            queues[i].async { [self] in
                let value = work()
                waiting.withLock { $0[i] -= 1 }
                continuation.resume(returning: value)
            }
        }
    }
}
