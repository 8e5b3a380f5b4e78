import LedeBasics
/// How an upstream call failed. One place (`Problem+Upstream`) turns these into responses.
public enum UpstreamError: CacheableFailure, Equatable {
    /// No complete answer within the deadline (also: a hung connection).
    case timeout
    /// The upstream answered with an error status, or could not be reached (status 0).
    case unavailable(status: Int)
    /// The user's credentials were refused (`mwoauth-invalid-authorization*`, `notloggedin`, `login-required`, 401/403).
    case notAuthorised
    /// The page (or the language's data in the embedded default) does not exist.
    case notFound(String)
    /// The body could not be decoded as the expected shape, or the Action API returned `{"error":…}`.
    case malformed(String)
    /// The body exceeded the response size cap.
    case tooLarge
    /// Wikimedia asked Lede to wait (429, or 503 with `Retry-After`): no call of this kind goes to that origin
    /// for `retryAfter` seconds.
    case rateLimited(retryAfter: Int)
    /// The upstream's TLS certificate could not be verified (chain, expiry or host name). Lede never falls
    /// back to an unverified connection.
    case untrusted(String)
    /// The origin's circuit breaker is open after a run of failures: calls fail fast for `retryAfter` seconds.
    case circuitOpen(retryAfter: Int)
    /// The Action API refused what the client sent (`badcontinue`, `badvalue`…): the client's parameter, by Lede's name
    /// when known, and Wikimedia's error code.
    case rejected(parameter: String?, code: String)

    /// Action API errors caused by what the client sent: a 400 naming the parameter, never Wikimedia's fault.
    public static let clientErrorCodes: Set<String> = ["badcontinue", "badvalue", "baddatatype", "toomanyvalues", "missingparam", "paramempty",
                                                       "invalidparammix", "invalidtitle", "notitle", "badinteger", "integeroutofrange"]

    public var isNotFound: Bool { if case .notFound = self { return true } else { return false } }

    /// Whether serving a stale cached value is a sensible answer to this failure.
    public var allowsStale: Bool {
        switch self {
        case .timeout, .unavailable, .malformed, .tooLarge, .rateLimited, .circuitOpen, .untrusted: return true
        case .notAuthorised, .notFound, .rejected: return false
        }
    }

    /// Label for metrics.
    package var outcome: String {
        switch self {
        case .timeout: return "timeout"
        case .unavailable: return "unavailable"
        case .notAuthorised: return "not_authorised"
        case .notFound: return "not_found"
        case .malformed: return "malformed"
        case .tooLarge: return "too_large"
        case .rateLimited: return "rate_limited"
        case .circuitOpen: return "circuit_open"
        case .untrusted: return "untrusted"
        case .rejected: return "rejected"
        }
    }

    /// Seconds Wikimedia (or the breaker) asked to wait, when it said.
    public var retryAfter: Int? {
        switch self {
        case .rateLimited(let s), .circuitOpen(let s): return s
        default: return nil
        }
    }
}
