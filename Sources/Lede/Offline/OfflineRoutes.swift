import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// `GET /offline` (the reader's Saved list as the app stores it offline, whole or since a sync token; JSON, or JSON
/// Lines as each article is ready) and `GET /article/{title}/offline` (one article's manifest, immutable per revision).
enum OfflineRoutes {
    static let noStore = "private, no-store"
    /// A manifest of a given revision never changes.
    static let immutable = "public, max-age=31536000, immutable"
    /// The current revision's manifest: until the next edit, which a minute's wait does not hide for long.
    static let current = 60

    static func register(on router: Router, service: OfflineService) {
        router.add("GET", "/offline", cost: Costs.sync, account: BearerAuthorization.required) { ctx in
            let auth = try BearerAuthorization.extract(ctx.credentials)
            let width = try Parameters.int(ctx.request, "width", default: OfflineRules.defaultWidth, range: OfflineRules.widthRange)
            let token = try ctx.request.queryParameter("since").map { raw -> OfflineRules.SyncToken in
                guard let t = OfflineRules.read(raw) else { throw OfflineService.tokenRefused() }
                return t
            }
            let streamed = JSONLines.preferred(by: ctx.request)
            let headers = HTTPHeaders([("Cache-Control", noStore), ("Vary", "Accept, Accept-Encoding, Authorization")])
            return Responses.async {
                let plan = try await service.plan(authorization: auth, since: token)
                if !streamed {
                    var articles = [OfflineRules.Article?](repeating: nil, count: plan.work.count)
                    let whole = try await service.articles(plan, width: width) { i, a in articles[i] = a }
                    let body = Answer(articles: articles.compactMap { $0 }, complete: plan.complete, count: plan.count, removed: plan.removed,
                                      sync: OfflineService.token(plan, whole: whole))
                    return HTTPResponse(status: 200, contentType: "application/json", bytes: JSONLines.encode(body), headers: headers)
                }
                // JSON Lines: what the plan knows at once, each article as it is ready, and the token last (a reader cut
                // off before it keeps its old token, and asks again for what it missed).
                let head = JSONLines.line(JSONLines.encode(Head(articles: plan.work.count, complete: plan.complete, count: plan.count, removed: plan.removed)))
                return .stream(contentType: JSONLines.mediaType, headers: headers) { body in
                    try await body.write(head)
                    let whole = try await service.articles(plan, width: width) { _, article in
                        try await body.write(JSONLines.line(JSONLines.encode(article)))
                    }
                    try await body.write(JSONLines.line(JSONLines.encode(Tail(sync: OfflineService.token(plan, whole: whole)))))
                }
            }
        }

        router.get("/article/{title}/offline") { ctx in
            let lang = try LanguageCode.resolve(ctx.request), title = try Parameters.articleTitle(ctx.parameter("title"))
            let width = try Parameters.int(ctx.request, "width", default: OfflineRules.defaultWidth, range: OfflineRules.widthRange)
            let pinned = try ctx.request.queryParameter("revision").map { _ in try Parameters.int(ctx.request, "revision", default: 0, range: 1...maxRevision) }
            let vary = LanguageCode.named(by: ctx.request) ? Responses.varyByEncoding : Responses.varyByLanguage
            return Responses.async {
                let page: String, revision: Int, timestamp: String?
                if let pinned {
                    (page, revision, timestamp) = (title, pinned, nil)
                } else {
                    guard let r = try await service.revision(lang: lang, title: title), let current = r.revision else {
                        throw UpstreamError.notFound("The page does not exist.")
                    }
                    (page, revision, timestamp) = (r.title, current, r.timestamp)
                }
                let m = try await service.manifest(lang: lang, page: page, revision: revision, timestamp: timestamp, width: width)
                let article = OfflineRules.Article(lang: lang, title: ArticleTitle.display(title), page: page, manifest: m)
                let headers = HTTPHeaders([("Cache-Control", pinned != nil ? immutable : "public, max-age=\(current)"), ("Vary", vary)])
                return .prepared(PreparedBody(contentType: "application/json", bytes: JSONLines.encode(article), headers: headers))
            }
        }
    }

    /// The largest revision id `revision=` takes (English Wikipedia's are past 1.3 billion).
    static let maxRevision = 999_999_999_999

    /// `GET /offline` as one JSON document.
    struct Answer: Encodable {
        var articles: [OfflineRules.Article]
        var complete: Bool
        var count: Int
        var removed: [OfflineRules.Removed]
        var sync: String
    }

    /// The first line of the JSON Lines answer: how many article lines follow.
    struct Head: Encodable {
        var articles: Int
        var complete: Bool
        var count: Int
        var removed: [OfflineRules.Removed]
    }

    /// The last line: the token for the next sync.
    struct Tail: Encodable { var sync: String }
}
