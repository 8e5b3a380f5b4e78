import Synchronization

/// A continuation resumed once, whichever comes first: its attachment or its value.
public final class OneShot<T: Sendable>: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<T, Never>?, value: T?)>((nil, nil))
    public init() {}
    public func attach(_ c: CheckedContinuation<T, Never>) {
        let ready: T? = state.withLock { s in
            if let v = s.value { return v }
            s.continuation = c
            return nil
        }
        if let ready { c.resume(returning: ready) }
    }
    public func resume(_ value: T) {
        let c: CheckedContinuation<T, Never>? = state.withLock { s in
            if let c = s.continuation { s.continuation = nil; return c }
            s.value = value
            return nil
        }
        c?.resume(returning: value)
    }
}

/// A flag that can be claimed once, from any thread.
public final class Once: Sendable {
    private let done = Atomic(false)
    public init() {}
    public func claim() -> Bool { done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged }
    /// Whether it has been claimed.
    public var claimed: Bool { done.load(ordering: .acquiring) }
}
