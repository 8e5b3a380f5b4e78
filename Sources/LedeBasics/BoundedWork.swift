import Synchronization

/// "N at once, the next started as one lands": `work` for each index of `0..<count`, at most `concurrency` running,
/// each result handed to `landed` in the order they land (on the caller's task, one at a time). When `landed` throws,
/// the work not yet landed is cancelled and the error is thrown once the children have ended.
///
/// The children hand the group only their index; their results wait in a table until `landed` takes them. (A task
/// group whose children returned tuples holding large structs crashed release builds; an `Int` child result does not.)
public enum BoundedWork {
    public static func run<T: Sendable, E: Error>(count: Int, concurrency: Int, _ work: @escaping @Sendable (Int) async -> T,
                                                   landed: (Int, T) async throws(E) -> Void) async throws(E) {
        guard count > 0 else { return }
        let results = Results<T>()
        let failure: E? = await withTaskGroup(of: Int.self) { group in
            var next = 0
            func start() {
                guard next < count else { return }
                let i = next
                next += 1
                group.addTask { results.put(i, await work(i)); return i }
            }
            for _ in 0..<min(max(1, concurrency), count) { start() }
            for await i in group {
                guard let value = results.take(i) else { continue }
                do throws(E) { try await landed(i, value) } catch {
                    group.cancelAll()
                    return error
                }
                start()
            }
            return nil
        }
        if let failure { throw failure }
    }

    /// The children's results, by index, until taken.
    final class Results<T: Sendable>: Sendable {
        private let kept = Mutex<[Int: T]>([:])
        func put(_ i: Int, _ value: T) { kept.withLock { $0[i] = value } }
        func take(_ i: Int) -> T? { kept.withLock { $0.removeValue(forKey: i) } }
    }
}
