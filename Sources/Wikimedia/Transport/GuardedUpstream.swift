import LedeBasics

/// Exchanges with an origin that is not a wiki's API — upload.wikimedia.org's images for the share card, Reddit's
/// listings for the rgallery screen — made the way every Wikimedia call is: through the one `UpstreamGuard` (per-origin
/// concurrency, circuit breaker, `Retry-After`), within a deadline, counted in the upstream metrics, redirects followed
/// only within the origin. A feature holds `any GuardedUpstream`, never a transport.
public protocol GuardedUpstream: Sendable {
    /// One GET (redirects followed within the origin) whatever its status: a `429`, or a `503` with `Retry-After`, is
    /// thrown as `UpstreamError.rateLimited` (and that kind of call to that origin waits); a failure to get an answer
    /// is thrown as the `UpstreamError` it is.
    func answer(_ request: UpstreamRequest) async throws -> UpstreamResponse
}

extension WikimediaClient: GuardedUpstream {
    public func answer(_ request: UpstreamRequest) async throws -> UpstreamResponse { try await restAnswer(request) }

    /// A client for another origin (`transport`'s) sharing this one's guard, cache, metrics and logger, with its own
    /// per-call `deadline`.
    public func sharing(transport: UpstreamTransport, deadline: Double) -> WikimediaClient {
        WikimediaClient(transport: transport, cache: cache, metrics: metrics, guards: guards, deadline: deadline, ttls: ttls, logger: logger)
    }
}
