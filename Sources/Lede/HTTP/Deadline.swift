import Dispatch
import Foundation
import LedeBasics
import Wikimedia

/// What became of one section's upstream work within its deadline.
enum DeadlineOutcome<T: Sendable>: Sendable {
    case ok(T)
    case timeout
    case failed(Error)
}

/// Runs `work` and answers within `seconds` whatever happens. The work is not cancelled when the deadline
/// passes: it goes on in the background and, through the cache, serves the next request. `late`, when given, is
/// told how work that missed its deadline ended (so what was answered in its place can be dropped).
func withDeadline<T: Sendable>(_ seconds: Double, late: (@Sendable (DeadlineOutcome<T>) -> Void)? = nil,
                                      _ work: @escaping @Sendable () async throws -> T) async -> DeadlineOutcome<T> {
    let once = Once()
    let answer = OneShot<DeadlineOutcome<T>>()
    // A caller that is cancelled (a streamed answer whose client left) stops waiting at once; the work goes on.
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (c: CheckedContinuation<DeadlineOutcome<T>, Never>) in
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
