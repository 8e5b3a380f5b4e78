import HTTPCore

/// The stage every answer passes on its way out (`Connection.respond`): a problem is encoded once for the request it
/// answers (the app's type base, its words in the request's language, the request's trace); a problem some handler
/// encoded itself names the trace too.
enum ProblemStage {
    /// A problem encoded for the request it answers, once: `type` from the app's base, its standard title and its
    /// catalogued detail in the request's language (with `Content-Language`, and `Vary: Accept-Language` when the header
    /// chose it), the request's trace as its last member.
    static func rendered(_ response: HTTPResponse, _ problem: Problem, _ language: RequestLanguage, _ trace: TraceContext?, typeBase: String,
                         localizer: (any ProblemLocalizer)?) -> HTTPResponse {
        var problem = problem
        var r = response
        if let localizer, let words = localizer.words(for: problem, language: language), words.title != nil || words.detail != nil {
            if let title = words.title { problem.title = title }
            if let detail = words.detail { problem.detail = detail }
            r.headers.set("Content-Language", words.language)
            if words.byHeader {
                let vary = r.headers["Vary"] ?? ""
                if !FieldList.lists(vary, "accept-language") { r.headers.set("Vary", vary.isEmpty ? "Accept-Language" : vary + ", Accept-Language") }
            }
        }
        r.body = .bytes(problem.jsonBytes(typeBase: typeBase, trace: trace))
        return r
    }

    /// A problem (`application/problem+json`) names the request's trace: `"traceId"` added as its last member unless its
    /// maker wrote one.
    static func withTraceID(_ response: HTTPResponse, _ trace: TraceContext?) -> HTTPResponse {
        guard response.status >= 400, let trace else { return response }
        guard case .bytes(var body) = response.body else { return response }
        guard body.last == 125,
              response.headers["Content-Type"] == "application/problem+json", !Problem.namesTrace(body) else { return response }
        body.removeLast()
        Problem.appendTraceMember(trace, to: &body)
        body.append(125)
        var r = response
        r.body = .bytes(body)
        return r
    }
}
