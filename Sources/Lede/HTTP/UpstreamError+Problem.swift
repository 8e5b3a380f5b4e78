import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// An upstream failure answers as the client should read it: a thrown `UpstreamError` becomes this problem.
/// The workers' queues are full: a spread `Retry-After`, so refused clients do not all return in the same second.
extension Workers.Busy: ProblemConvertible {
    public var problem: Problem {
        Problem(status: 503, slug: "busy", .problemBusy,
                headers: ["Retry-After": String(Int.random(in: 1...5)), "Cache-Control": "no-store"])
    }
}

extension UpstreamError: ProblemConvertible {
    public var problem: Problem { Problem(upstream: self) }
}

extension Problem {
    /// Upstream failures as the client sees them.
    init(upstream e: UpstreamError) {
        switch e {
        case .timeout:
            self.init(status: 504, slug: "upstream-timeout", .problemUpstreamTimeout, headers: ["Retry-After": "5"])
        case .unavailable(let status):
            if status == 0 { self.init(status: 502, slug: "upstream-unavailable", .problemUpstreamUnreachable, headers: ["Retry-After": "5"]) }
            else { self.init(status: 502, slug: "upstream-unavailable", .problemUpstreamError, String(status), headers: ["Retry-After": "5"]) }
        case .malformed:
            self.init(status: 502, slug: "upstream-malformed", .problemUpstreamMalformed)
        case .tooLarge:
            self.init(status: 502, slug: "upstream-too-large", .problemUpstreamTooLarge)
        case .untrusted(let why):
            self.init(status: 502, slug: "upstream-certificate", .problemUpstreamCertificate, why)
        case .notAuthorised:
            self.init(status: 401, slug: "not-authorised", .problemUpstreamNotAuthorised, headers: ["WWW-Authenticate": BearerAuthorization.challenge])
        case .notFound(let detail):
            // Wikipedia's own account in English; the catalogue's in other languages.
            self.init(status: 404, slug: "not-found", detail: detail, message: ProblemMessage(MessageKey.problemUpstreamNotFound.rawValue))
        case .rateLimited(let seconds):
            self.init(status: 503, slug: "upstream-rate-limited", .problemUpstreamRateLimited, String(seconds), headers: ["Retry-After": "\(seconds)"])
        case .rejected(let parameter, let code):
            if let parameter {
                self.init(status: 400, slug: "invalid-parameter", .problemUpstreamRefusedParameter, parameter, code,
                          extensions: [("parameter", JSONText.quote(parameter))])
            } else {
                self.init(status: 400, slug: "invalid-parameter", .problemUpstreamRefusedValue, code)
            }
        case .circuitOpen(let seconds):
            self.init(status: 503, slug: "upstream-circuit-open", .problemUpstreamCircuitOpen, String(seconds), headers: ["Retry-After": "\(seconds)"])
        }
    }
}
