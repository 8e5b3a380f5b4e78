import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// `GET /article/{title}`: the article screen in one call (JSON, or JSON Lines as its parts are ready), shared between
/// readers and prepared once per edition (and variant) and title; a reader's preferred editions come first in its
/// languages (`EditionOrder`), and a signed-in reader's copy says whether they may edit it.
enum ArticleRoutes {
    /// `anonymousEdits`: whether this deployment sends edits without an account (`--anonymous-edits`); when not, an anonymous
    /// reader's `editable` is false.
    static func register(on router: Router, api: any WikimediaAPI, responses: UpstreamCache, timeout: Double, upstreamTimeout: Double,
                         anonymousEdits: Bool) {
        // The shared answers in readers' orders, apart from the shared cache (orders never push out what readers
        // share): a bounded LRU keyed by the shared answer's ETag and the editions put first.
        let orders = UpstreamCache(limits: .init(maxEntries: 2_000, maxBytes: 32 << 20, staleIfError: 0, notFoundTTL: 0))
        router.get("/article/{title}") { ctx in
            let lang: LanguageCode, title: String, auth: String?
            lang = try LanguageCode.resolve(ctx.request); title = try Parameters.articleTitle(ctx.parameter("title"))
            auth = try BearerAuthorization.optional(ctx.credentials)
            // The picker's order depends on the reader's languages: one shared answer per edition and title, its
            // languages put in the reader's order as it is served.
            let preferred = LanguageCode.preferredEditions(ctx.request.headers["Accept-Language"], limit: 4)
            if JSONLines.preferred(by: ctx.request) {
                return Responses.async {
                    try await ArticleScreen.stream(api: api, responses: responses, lang: lang, title: title, preferred: preferred, timeout: max(timeout, upstreamTimeout),
                                     authorization: auth, anonymousEdits: anonymousEdits)
                }
            }
            let key = "article:\(lang.tag):\(ArticleTitle.normalise(title))"
            /// What the reader's order changes in a shared answer: nil when their editions change nothing; else the
            /// editions to put first, and the key their answer is kept under in `orders`.
            @Sendable func reordering(_ kept: ArticleScreen.Kept, _ body: PreparedBody) -> Reordering? {
                guard let order = kept.order else { return nil }
                let relevant = order.relevant(preferred, own: lang.code)
                return relevant.isEmpty ? nil : Reordering(order: order, relevant: relevant, key: "\(key):\(body.etag):\(relevant.joined(separator: ","))")
            }
            if let auth {
                // A signed-in reader: the shared answer with this user's `editable`, private to them.
                return Responses.async {
                    async let editable = withDeadline(timeout) { try await ArticleScreen.editable(api: api, responses: responses, lang: lang, title: title, authorization: auth,
                                                                                                    anonymousEdits: anonymousEdits) }
                    let kept: ArticleScreen.Kept
                    if let warm = responses.cachedValue(key, as: ArticleScreen.Kept.self) { kept = warm } else {
                        kept = try await ArticleScreen.keep(api: api, lang: lang, title: title, preferred: [], timeout: timeout, responses: responses, key: key, anonymousEdits: anonymousEdits)
                    }
                    var bytes = kept.fresh.identity
                    if let r = reordering(kept, kept.fresh) { bytes = r.order.reordered(bytes, relevant: r.relevant) }
                    var known: Bool?
                    if case .ok(let e) = await editable { known = e }
                    return Responses.json(bytes: ArticleScreen.settingEditable(bytes, known), cacheControl: "private, no-cache",
                                          headers: ["Vary": "Accept, Accept-Encoding, Accept-Language, Authorization", "Content-Language": lang.bcp47])
                }
            }
            /// The shared answer in the reader's order, made off the loops (moved bytes and one compression) and kept in
            /// `orders`.
            @Sendable func reordered(_ body: PreparedBody, _ r: Reordering) async throws -> PreparedBody {
                let made = try await Workers.shared.offLoop(body.identity.count) {
                    PreparedBody(contentType: body.contentType, bytes: r.order.reordered(body.identity, relevant: r.relevant), headers: body.headers)
                }
                orders.insert(r.key, made, cost: Responses.cost(of: made), ttl: Double(ArticleScreen.completeTTL * 2))
                return made
            }
            // Warm, or stale within its window while one rebuild runs in the background: no request waits for it.
            // A stale answer says so with a short lifetime. The refresh has no reader waiting: it is bound by the upstream
            // deadline, not the screen's, and keeps the last good answer when it comes back with a placeholder.
            if let (warm, refresh, stale) = responses.revalidatingValue(key, as: ArticleScreen.Kept.self) {
                if refresh {
                    let trace = ctx.trace   // the refresh's calls belong to the request that set it off
                    Task {
                        await TraceContext.$task.withValue(trace) {
                            do {
                                _ = try await ArticleScreen.prepare(api: api, lang: lang, title: title, preferred: [], timeout: max(timeout, upstreamTimeout),
                                                      responses: responses, key: key, previous: warm, anonymousEdits: anonymousEdits)
                            } catch { responses.refreshFailed(key) }
                        }
                    }
                }
                let body = stale ? warm.stale : warm.fresh
                guard let r = reordering(warm, body) else { return .response(.prepared(body)) }
                if let made = orders.cachedValue(r.key, as: PreparedBody.self) { return .response(.prepared(made)) }
                return Responses.async { .prepared(try await reordered(body, r)) }
            }
            return Responses.async {
                let kept = try await ArticleScreen.keep(api: api, lang: lang, title: title, preferred: [], timeout: timeout, responses: responses, key: key,
                                                        anonymousEdits: anonymousEdits)
                guard let r = reordering(kept, kept.fresh) else { return .prepared(kept.fresh) }
                if let made = orders.cachedValue(r.key, as: PreparedBody.self) { return .prepared(made) }
                return .prepared(try await reordered(kept.fresh, r))
            }
        }
    }
}

/// A shared article answer's reader order: the editions put first and the key of the answer made in that order.
struct Reordering: Sendable {
    let order: EditionOrder
    let relevant: [String]
    let key: String
}
