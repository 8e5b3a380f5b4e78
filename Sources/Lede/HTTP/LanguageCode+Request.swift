import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

extension LanguageCode {
    /// Language of a request, decided in one place: the `lang` query parameter; else the first
    /// `Accept-Language` tag (by q-value) that names a Wikipedia edition (`de-CH` → `de`); else English.
    /// An explicit `lang` that is not an edition is a 400 problem.
    static func resolve(_ request: HTTPRequest) throws -> LanguageCode {
        try resolve(lang: request.queryParameter("lang"),
                    acceptLanguage: request.mayHaveAcceptLanguage ? request.headers["Accept-Language"] : nil)
    }

    /// Whether the request names its edition (`lang=`): then `Accept-Language` chose nothing of an answer that depends
    /// only on the edition, and its `Vary` leaves that field out.
    static func named(by request: HTTPRequest) -> Bool { request.queryParameter("lang") != nil }

    static func resolve(lang raw: String?, acceptLanguage: String?) throws -> LanguageCode {
        if let raw {
            guard let code = LanguageCode(raw) else { throw LanguageCode.unsupportedProblem(raw) }
            return code
        }
        return fromAcceptLanguage(acceptLanguage) ?? .english
    }

    /// The best `Accept-Language` tag (highest q, then first) that names an edition, by itself or by its primary
    /// subtag. Every mobile request carries this header, so it is read over bytes: no Foundation, no sorting.
    static func fromAcceptLanguage(_ header: String?) -> LanguageCode? { AcceptLanguage.best(header, edition) }

    /// Every edition the header names with q > 0, most preferred first (ties in header order), each once; at most
    /// `limit` (the article screen's language picker puts these first).
    static func preferredEditions(_ header: String?, limit: Int = 8) -> [String] {
        AcceptLanguage.ranked(header, limit: limit, id: \.code, edition).map(\.code)
    }

    static func unsupportedProblem(_ raw: String) -> Problem {
        Problem(status: 400, slug: "unsupported-language", .problemUnsupportedLanguage, String(raw.prefix(40)), String(all.count),
                extensions: [("languages", "\"/languages\"")])
    }
}
