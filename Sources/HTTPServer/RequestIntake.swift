import HTTPCore

/// The first stage of every request, run once when it is dispatched: what the server reads of it before any other
/// stage runs — its id (the client's `X-Request-ID` when well-formed, else the server's), its trace (W3C Trace
/// Context, kept from `traceparent` or fresh), who sent it (the peer, or whom a trusted proxy forwarded for) and its
/// credentials, and the languages it asks words in (read by the app's localizer). Every later stage (the rate limiter, the handler, the problem stage, the access log) reads these.
enum RequestIntake {
    /// Fills `p` (an emptied `Pending`, the connection's own: read in place, never copied) for `request`.
    @inline(__always)
    static func read(_ request: HTTPRequest, into p: inout Connection.Pending, peer: ClientAddress, now: UInt64, core: ServerCore, server: ServerLoop) {
        p.started = now
        p.request = request
        p.keepAlive = request.keepAlive
        if let requestID = request.requestIDField, isValidRequestID(requestID) { p.requestID = RequestID(client: requestID) }
        else { p.requestID = server.nextRequestID() }
        p.trace = server.trace(for: request)
        (p.client, p.viaProxy) = client(request.headers, peer: peer, core: core)
        p.credentials = Credentials.read(request)
        // A language is named by `Accept-Language` or in the URL's query: a request with neither names none, and the
        // app's localizer is not asked (most requests of a benchmark, and every request of a client that sends no header).
        if request.mayHaveAcceptLanguage || request.hasQuery, let localizer = core.localizer { p.language = localizer.language(of: request) }
        else { p.language = .unnamed }
        p.unprovenToken = 0
    }

    /// Who sent a request with these fields: the peer, or whom a trusted proxy forwarded for (and whether it did).
    @inline(__always)
    static func client(_ headers: HTTPHeaders, peer: ClientAddress, core: ServerCore) -> (ClientAddress, viaProxy: Bool) {
        core.forwarding.trusted.isEmpty ? (peer, false) : core.forwarding.client(peer: peer, forwardedFor: headers.values("X-Forwarded-For"))
    }

    /// An `X-Request-ID` worth echoing: 1-128 visible ASCII bytes, no quote or backslash (it goes into JSON and logs).
    static func isValidRequestID(_ id: String) -> Bool {
        let u = id.utf8
        return !u.isEmpty && u.count <= 128 && u.allSatisfy { $0 > 32 && $0 < 127 && $0 != 34 && $0 != 92 }
    }
}
