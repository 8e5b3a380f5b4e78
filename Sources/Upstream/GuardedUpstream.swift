import LedeBasics

/// Exchanges with an origin that is not a wiki's API — upload.wikimedia.org's images for the share card, Reddit's
/// listings for the rgallery screen — made the way every Wikimedia call is (`UpstreamClient`): through the one `UpstreamGuard` (per-origin
/// concurrency, circuit breaker, `Retry-After`), within a deadline, counted in the upstream metrics, redirects followed
/// only within the origin. A feature holds `any GuardedUpstream`, never a transport.
public protocol GuardedUpstream: Sendable {
    /// One GET (redirects followed within the origin) whatever its status: a `429`, or a `503` with `Retry-After`, is
    /// thrown as `UpstreamError.rateLimited` (and that kind of call to that origin waits); a failure to get an answer
    /// is thrown as the `UpstreamError` it is.
    func answer(_ request: UpstreamRequest) async throws -> UpstreamResponse
}
