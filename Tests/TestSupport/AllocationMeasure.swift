import AllocationCounter

/// Heap allocations per request on a server loop's thread, for allocation ceilings: `request` sent `warm` times on
/// `client`'s keep-alive connection (buffers, pools and prepared calls at size), then `arm` — a route whose handler
/// calls `lede_allocations_arm()`, so the loop's own thread is the one counted — and then three runs of `requests`,
/// one at a time as wrk sends them. The fewest of the three: the loop's once-a-second work (the Date field renewed) may
/// fall in a run. `status` is told each answer's status (nil: none came).
public func allocationsPerRequest(_ client: RawClient, _ request: String, arm: String, warm: Int = 200, requests: Int,
                                  status: (Int?) -> Void) -> Double {
    allocationsPerRequest(client, { _ in request }, arm: arm, warm: warm, requests: requests, status: status)
}

/// The same with a request of its own each time (`request(n)`, n counting from 0 over the warming and the runs): a cold
/// answer each time, where a route keeps what it answered.
public func allocationsPerRequest(_ client: RawClient, _ request: (Int) -> String, arm: String, warm: Int = 200, requests: Int,
                                  status: (Int?) -> Void) -> Double {
    var n = 0
    func next() -> String { defer { n += 1 }; return request(n) }
    for _ in 0..<warm { client.send(next()); status(client.readResponse()?.status) }
    client.send("GET \(arm) HTTP/1.1\r\nHost: t\r\n\r\n")
    status(client.readResponse()?.status)
    var per = Double.infinity
    for _ in 0..<3 {
        let before = lede_allocations_counted()
        for _ in 0..<requests { client.send(next()); status(client.readResponse()?.status) }
        per = min(per, Double(lede_allocations_counted() - before) / Double(requests))
    }
    return per
}
