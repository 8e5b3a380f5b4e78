import Dispatch
import Synchronization

/// One timer for every user's next poll round on this replica: a min-heap of due times and one Dispatch timer armed
/// for the earliest. A user between rounds costs an entry here (about 40 bytes), not a sleeping task of its own.
/// Entries hold their target weakly: a user whose last stream closed is let go at once, and its entry is dropped when
/// it comes due. `fire` is called on the clock's queue, outside its lock, for each live target whose time came.
final class PollClock<Target: AnyObject & Sendable>: Sendable {
    private struct Entry {
        var due: UInt64
        var seq: UInt64
        weak var target: Target?
        func before(_ other: Entry) -> Bool { due != other.due ? due < other.due : seq < other.seq }
    }
    private struct State {
        /// Dispatch's timer (not Sendable): touched only under the lock.
        let timer: any DispatchSourceTimer
        var heap: [Entry] = []
        var seq: UInt64 = 0
        /// The uptime (ns) the timer is armed for; `.max` when it is not.
        var armed: UInt64 = .max
    }
    private let state: Mutex<State>
    private let fire: @Sendable (Target) -> Void

    init(label: String = "lede.poll-clock", fire: @escaping @Sendable (Target) -> Void) {
        self.fire = fire
        state = Mutex(State(timer: DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))))
        state.withLock { s in
            s.timer.setEventHandler { [weak self] in self?.tick() }
            s.timer.schedule(deadline: .distantFuture)
            s.timer.resume()
        }
    }

    deinit { state.withLock { $0.timer.cancel() } }

    /// Entries waiting (tests, metrics).
    var pending: Int { state.withLock { $0.heap.count } }

    /// Calls `fire(target)` once, `seconds` from now (at least a millisecond).
    func schedule(_ target: Target, after seconds: Double) {
        let now = DispatchTime.now().uptimeNanoseconds
        let due = now &+ UInt64(max(0.001, min(seconds, 86_400)) * 1e9)
        state.withLock { s in
            s.seq &+= 1
            Self.push(Entry(due: due, seq: s.seq, target: target), into: &s.heap)
            // Armed under the lock, as the tick re-arms: neither can undo the other's earlier deadline.
            if due < s.armed { arm(&s, for: due) }
        }
    }

    private func arm(_ s: inout State, for due: UInt64) {
        s.armed = due
        s.timer.schedule(deadline: due == .max ? .distantFuture : DispatchTime(uptimeNanoseconds: due), leeway: .milliseconds(5))
    }

    private func tick() {
        let now = DispatchTime.now().uptimeNanoseconds
        var due: [Target] = []
        state.withLock { s in
            while let first = s.heap.first, first.due <= now {
                if let target = Self.pop(&s.heap).target { due.append(target) }
            }
            arm(&s, for: s.heap.first?.due ?? .max)
        }
        for target in due { fire(target) }
    }

    private static func push(_ entry: Entry, into heap: inout [Entry]) {
        heap.append(entry)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].before(heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private static func pop(_ heap: inout [Entry]) -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var least = i
            if l < heap.count, heap[l].before(heap[least]) { least = l }
            if r < heap.count, heap[r].before(heap[least]) { least = r }
            guard least != i else { break }
            heap.swapAt(i, least)
            i = least
        }
        return top
    }
}
