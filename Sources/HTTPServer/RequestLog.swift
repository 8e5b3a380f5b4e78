/// The stage after a response is queued: its route's counters and latency in the metrics, and its access-log line.
enum RequestLog {
    /// `bytes`: all the response queued (head and body); `bodyBytes`: its body's, as the access log says it.
    @inline(__always)
    static func record(_ p: inout Connection.Pending, status: Int, bytes: Int, bodyBytes: Int, now: UInt64, core: ServerCore, server: ServerLoop) {
        core.metrics.record(loop: server.id, route: p.route, status: status, seconds: Double(now &- p.started) / 1e9, bytes: bytes)
        if core.configuration.accessLog {
            AccessLog.append(to: &server.logBuffer, method: p.method, route: p.route < 0 ? (p.route == -1 ? "unmatched" : "invalid") : core.router.routes[p.route].pattern,
                             path: p.path, status: status, bytes: bodyBytes, micros: Int((now &- p.started) / 1000), requestID: p.requestID.string,
                             trace: p.trace, client: p.client)
        }
    }
}
