import Dispatch
import Foundation
import Synchronization

/// What became of one section's upstream work within its deadline.
public enum Outcome<T: Sendable>: Sendable {
    case ok(T)
    case timeout
    case failed(Error)
}

/// Runs `work` and answers within `seconds` whatever happens. The work is not cancelled when the deadline
/// passes: it goes on in the background and, through the cache, serves the next request.
public func withDeadline<T: Sendable>(_ seconds: Double, _ work: @escaping @Sendable () async throws -> T) async -> Outcome<T> {
    let once = Once()
    return await withCheckedContinuation { (c: CheckedContinuation<Outcome<T>, Never>) in
        Task {
            do {
                let value = try await work()
                if once.claim() { c.resume(returning: .ok(value)) }
            } catch {
                if once.claim() { c.resume(returning: .failed(error)) }
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            if once.claim() { c.resume(returning: .timeout) }
        }
    }
}

/// A flag that can be claimed once, from any thread.
final class Once: Sendable {
    private let done = Atomic(false)
    init() {}
    func claim() -> Bool { done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged }
}
