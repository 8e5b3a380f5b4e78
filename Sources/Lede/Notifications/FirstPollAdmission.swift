import Foundation
import Synchronization
import LedeBasics
import Wikimedia

/// The queue of first polls: when many users open their bells at once (a replica restarted and every device
/// reconnects), each new user's first Echo poll waits its turn here, in order, for up to `maxWait` seconds — not within
/// the ordinary upstream deadline, since a stream is long-lived and its first badge may come seconds later. At most
/// `capacity` first polls run at once (the upstream's own bound, so Echo never sees more than that), and a user whose
/// poll cannot start within `maxWait` is refused with a `Retry-After` spread over several seconds
/// (`NotificationHub.busy`), so the refused clients do not all come back in the same second.
final class FirstPollAdmission: Sendable {
    let capacity: Int
    let maxWait: Double

    private struct Waiter {
        let id: Int
        let resume: CheckedContinuation<Bool, Never>
    }
    private struct State {
        var running = 0
        var waiters: [Waiter] = []
        var head = 0   // waiters before `head` have been resumed (the array is compacted as it drains)
        var nextID = 0
    }
    private let state = Mutex(State())

    init(capacity: Int, maxWait: Double) {
        self.capacity = max(1, capacity)
        self.maxWait = maxWait
    }

    /// First polls running and waiting (metrics, tests).
    var counts: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiters.count - $0.head) } }

    /// Waits for a turn: true once admitted (the caller must `leave()`), false when `maxWait` passed first or the task
    /// was cancelled.
    func enter() async -> Bool {
        let id: Int? = state.withLock { s in
            if s.running < capacity && s.head == s.waiters.count { s.running += 1; return nil }
            s.nextID += 1
            return s.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                state.withLock { s in s.waiters.append(Waiter(id: id, resume: c)) }
                DispatchQueue.global().asyncAfter(deadline: .now() + maxWait) { [self] in give(up: id) }
                admitWaiting()   // a turn freed between the check and the append
            }
        } onCancel: {
            give(up: id)
        }
    }

    /// A turn ended: the longest waiter gets it.
    func leave() {
        state.withLock { $0.running -= 1 }
        admitWaiting()
    }

    private func admitWaiting() {
        var ready: [CheckedContinuation<Bool, Never>] = []
        state.withLock { s in
            while s.running < capacity, s.head < s.waiters.count {
                ready.append(s.waiters[s.head].resume)
                s.head += 1
                s.running += 1
            }
            if s.head > 64 && s.head * 2 > s.waiters.count { s.waiters.removeFirst(s.head); s.head = 0 }
        }
        for r in ready { r.resume(returning: true) }
    }

    /// A waiter's time is up (or its reader left): it leaves the queue unadmitted, unless it was admitted already.
    private func give(up id: Int) {
        let resume: CheckedContinuation<Bool, Never>? = state.withLock { s in
            guard let i = s.waiters[s.head...].firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: i).resume
        }
        resume?.resume(returning: false)
    }
}
