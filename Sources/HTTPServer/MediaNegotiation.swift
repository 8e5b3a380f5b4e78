import HTTPCore

/// Proactive negotiation between two media types on `Accept` (RFC 9110 §12.5.1): the more specific range wins for
/// each type (`type/subtype` over `type/*` over `*/*`); no `Accept` accepts everything.
public enum MediaNegotiation {
    /// The weight (thousandths) `Accept` gives `mediaType` (lower-case `type/subtype`).
    public static func weight(of mediaType: String, in headers: HTTPHeaders) -> Int {
        let fields = headers.values("Accept")
        if fields.isEmpty { return 1000 }
        let type = mediaType.split(separator: "/").first.map(String.init) ?? mediaType
        var exact: Int?, typeWide: Int?, any: Int?
        for value in fields {
            WeightedList.forEach(value) { range, q in
                let r = String(decoding: range.map(ASCII.lower), as: UTF8.self)
                let w = q ?? 0
                if r == mediaType { exact = max(exact ?? 0, w) }
                else if r == type + "/*" { typeWide = max(typeWide ?? 0, w) }
                else if r == "*/*" { any = max(any ?? 0, w) }
                return true
            }
        }
        return exact ?? typeWide ?? any ?? 0
    }

    /// Whether `Accept` asks for `preferred` rather than `fallback`: `preferred` weighs more (a tie keeps the fallback).
    public static func prefers(_ preferred: String, over fallback: String, in headers: HTTPHeaders) -> Bool {
        let p = weight(of: preferred, in: headers)
        return p > 0 && p > weight(of: fallback, in: headers)
    }
}
