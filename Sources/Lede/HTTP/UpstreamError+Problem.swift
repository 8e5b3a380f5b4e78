import HTTPServer
import LedeBasics
import Wikimedia

/// An upstream failure answers as the client should read it: a thrown `UpstreamError` becomes this problem.
/// The workers' queues are full: a spread `Retry-After`, so refused clients do not all return in the same second.
extension Workers.Busy: ProblemConvertible {
    public var problem: Problem {
        Problem(status: 503, slug: "busy", detail: "The server has as much work queued as it takes at once; retry in a moment.",
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
            self.init(status: 504, slug: "upstream-timeout", detail: "Wikipedia did not answer in time. Retry shortly.", headers: ["Retry-After": "5"])
        case .unavailable(let status):
            self.init(status: 502, slug: "upstream-unavailable",
                      detail: status == 0 ? "Wikipedia could not be reached." : "Wikipedia answered with an error (HTTP \(status)).", headers: ["Retry-After": "5"])
        case .malformed:
            self.init(status: 502, slug: "upstream-malformed", detail: "Wikipedia's answer could not be read.")
        case .tooLarge:
            self.init(status: 502, slug: "upstream-too-large", detail: "Wikipedia's answer was larger than Lede accepts.")
        case .untrusted(let why):
            self.init(status: 502, slug: "upstream-certificate",
                      detail: "The upstream server's certificate could not be verified (\(why)); Lede does not call it unverified.")
        case .notAuthorised:
            self.init(status: 401, slug: "not-authorised", detail: "Wikipedia did not accept the credentials.", headers: ["WWW-Authenticate": "Bearer"])
        case .notFound(let detail):
            self.init(status: 404, slug: "not-found", detail: detail)
        case .rateLimited(let seconds):
            self.init(status: 503, slug: "upstream-rate-limited",
                      detail: "Wikipedia asked Lede to slow down; retry after \(seconds) s.", headers: ["Retry-After": "\(seconds)"])
        case .rejected(let parameter, let code):
            let what = parameter.map { "the value of `\($0)`" } ?? "a value of this request"
            self.init(status: 400, slug: "invalid-parameter", detail: "Wikipedia refused \(what) (\(code)); correct it and try again.",
                      extensions: parameter.map { [("parameter", JSONText.quote($0))] } ?? [])
        case .circuitOpen(let seconds):
            self.init(status: 503, slug: "upstream-circuit-open",
                      detail: "Wikipedia has been failing; Lede is not calling it for \(seconds) s.", headers: ["Retry-After": "\(seconds)"])
        }
    }
}
