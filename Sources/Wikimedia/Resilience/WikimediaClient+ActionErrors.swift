import EventLoops
import Foundation
import LedeBasics
import Upstream

// What the Action API's `{"error":{"code","info"}}` means: not authorised, the client's own parameter, back off,
// unavailable, or malformed.
extension WikimediaClient {
    static let authErrorCodes: Set<String> = ["notloggedin", "login-required", "mwoauth-invalid-authorization", "badtoken", "permissiondenied"]



    /// Wikimedia's parameter names → the client's (Lede's) names.
    static let clientParameters: [String: String] = [
        "continue": "continue", "notcontinue": "continue", "notfilter": "filter", "notlimit": "limit", "notwikis": "lang",
        "titles": "title", "title": "title", "page": "title", "gsrsearch": "q", "srsearch": "q", "gpssearch": "q", "pssearch": "q",
        "gsrlimit": "limit", "gpslimit": "limit", "srlimit": "limit", "ggscoord": "lat", "ggsradius": "radius", "list": "ids",
    ]

    /// The client's parameter an Action API error is about: from the code (`badcontinue`) or from the `parameter "x"`
    /// its info names.
    static func clientParameter(code: String, info: String?) -> String? {
        if code == "badcontinue" { return "continue" }
        guard let info, let r = info.range(of: "parameter \"") else {
            return code == "invalidtitle" || code == "notitle" ? "title" : nil
        }
        let name = info[r.upperBound...].prefix { $0 != "\"" }
        return clientParameters[String(name)] ?? (name.isEmpty ? nil : String(name))
    }

    /// What an Action API `{"error":{"code","info"}}` means; always throws.
    func actionError(_ code: String, info: String?, _ req: UpstreamRequest, _ response: UpstreamResponse) throws -> Never {
        if Self.authErrorCodes.contains(code) || code.hasPrefix("mwoauth-invalid-authorization") { throw UpstreamError.notAuthorised }
        if UpstreamError.clientErrorCodes.contains(code) { throw UpstreamError.rejected(parameter: Self.clientParameter(code: code, info: info), code: code) }
        if code == "ratelimited" || code == "maxlag" {
            // The Action API's own back-pressure, with HTTP 200 (maxlag also sends Retry-After).
            let origin = self.origin(lang: req.lang)
            let wait = guards.backOff(origin: origin, kind: req.kind.rawValue, user: req.authorization,
                                      seconds: guards.retryAfterSeconds(response.headers["retry-after"]) ?? guards.settings.defaultRetryAfter)
            logger.warning("upstream asked to back off", [("origin", origin), ("kind", req.kind.rawValue), ("error", code), ("retry_after", "\(wait)")])
            throw UpstreamError.rateLimited(retryAfter: wait)
        }
        if code == "readonly" || code.hasPrefix("internal_api_error") {
            throw UpstreamError.unavailable(status: 503)
        }
        throw UpstreamError.malformed("upstream API error '\(code)'")
    }
}
