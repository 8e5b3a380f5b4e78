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
/// passes: it goes on in the background and, through the cache, serves the next request. `late`, when given, is
/// told how work that missed its deadline ended (so what was answered in its place can be dropped).
public func withDeadline<T: Sendable>(_ seconds: Double, late: (@Sendable (Outcome<T>) -> Void)? = nil,
                                      _ work: @escaping @Sendable () async throws -> T) async -> Outcome<T> {
    let once = Once()
    let answer = OneShot<Outcome<T>>()
    // A caller that is cancelled (a streamed answer whose client left) stops waiting at once; the work goes on.
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (c: CheckedContinuation<Outcome<T>, Never>) in
            answer.attach(c)
            Task {
                do {
                    let value = try await work()
                    if once.claim() { answer.resume(.ok(value)) } else { late?(.ok(value)) }
                } catch {
                    if once.claim() { answer.resume(.failed(error)) } else { late?(.failed(error)) }
                }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                if once.claim() { answer.resume(.timeout) }
            }
        }
    } onCancel: {
        if once.claim() { answer.resume(.timeout) }
    }
}

/// A continuation resumed once, whichever comes first: its attachment or its value.
final class OneShot<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, value: T?)>((nil, nil))
    func attach(_ c: CheckedContinuation<T, Never>) {
        let ready: T? = state.withLock { s in
            if let v = s.value { return v }
            s.continuation = c
            return nil
        }
        if let ready { c.resume(returning: ready) }
    }
    func resume(_ value: T) {
        let c: CheckedContinuation<T, Never>? = state.withLock { s in
            if let c = s.continuation { s.continuation = nil; return c }
            s.value = value
            return nil
        }
        c?.resume(returning: value)
    }
}

/// A flag that can be claimed once, from any thread.
final class Once: Sendable {
    private let done = Atomic(false)
    init() {}
    func claim() -> Bool { done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged }
    /// Whether it has been claimed.
    var claimed: Bool { done.load(ordering: .acquiring) }
}
