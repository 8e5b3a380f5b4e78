import Dispatch
import Foundation
import Synchronization

/// CPU work that can take milliseconds (scanning a 3 MB page), run off the event loops: one serial Dispatch queue per
/// core, each job on the queue with the fewest waiting. At most that many jobs run at once whatever arrives; the
/// loops only hand the job over and are resumed with its result.
public final class Workers: Sendable {
    public static let shared = Workers(count: ProcessInfo.processInfo.activeProcessorCount)

    private let queues: [DispatchQueue]
    private let waiting: Mutex<[Int]>

    public init(count: Int) {
        let n = max(1, count)
        queues = (0..<n).map { DispatchQueue(label: "lede.worker.\($0)") }
        waiting = Mutex([Int](repeating: 0, count: n))
    }

    /// Jobs given and not yet finished.
    public var pending: Int { waiting.withLock { $0.reduce(0, +) } }

    /// `work` on a worker when what it reads is large (`size` bytes, over 64 KiB), else here, at once.
    public func offLoop<T: Sendable>(_ size: Int, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard size > 64 << 10 else { return try work() }
        return try await run { Result { try work() } }.get()
    }

    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        let i = waiting.withLock { w -> Int in
            let i = w.indices.min { w[$0] < w[$1] } ?? 0
            w[i] += 1
            return i
        }
        return await withCheckedContinuation { continuation in
            queues[i].async { [self] in
                let value = work()
                waiting.withLock { $0[i] -= 1 }
                continuation.resume(returning: value)
            }
        }
    }
}
