import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// `GET /article/{title}`: the article screen in one call (JSON, or JSON Lines as its parts are ready), shared between
/// readers and prepared once per edition, title and preferred editions; a signed-in reader's copy says whether they may
/// edit it.
enum ArticleRoutes {
    /// `anonymousEdits`: whether this deployment sends edits without an account (`--anonymous-edits`); when not, an anonymous
    /// reader's `editable` is false.
    static func register(on router: Router, api: any WikimediaAPI, responses: UpstreamCache, timeout: Double, upstreamTimeout: Double,
                         anonymousEdits: Bool) {
        router.get("/article/{title}") { ctx in
            let lang: LanguageCode, title: String, auth: String?
            lang = try LanguageCode.resolve(ctx.request); title = try Parameters.articleTitle(ctx.parameter("title"))
            auth = try BearerAuthorization.optional(ctx.credentials)
            // The picker's order depends on the reader's languages: one prepared answer per language, title and
            // preferred editions (bounded LRU with the other prepared answers).
            let preferred = LanguageCode.preferredEditions(ctx.request.headers["Accept-Language"], limit: 4)
            if JSONLines.preferred(by: ctx.request) {
                return Responses.async {
                    try await ArticleScreen.stream(api: api, responses: responses, lang: lang, title: title, preferred: preferred, timeout: max(timeout, upstreamTimeout),
                                     authorization: auth, anonymousEdits: anonymousEdits)
                }
            }
            let key = "article:\(lang.tag):\(ArticleTitle.normalise(title)):\(preferred.joined(separator: ","))"
            if let auth {
                // A signed-in reader: the shared answer with this user's `editable`, private to them.
                return Responses.async {
                    async let editable = withDeadline(timeout) { try await ArticleScreen.editable(api: api, responses: responses, lang: lang, title: title, authorization: auth,
                                                                                                    anonymousEdits: anonymousEdits) }
                    let shared: PreparedBody
                    if let warm = responses.cachedValue(key, as: ArticleScreen.Kept.self) { shared = warm.fresh } else {
                        shared = try await ArticleScreen.prepare(api: api, lang: lang, title: title, preferred: preferred, timeout: timeout, responses: responses, key: key, anonymousEdits: anonymousEdits)
                    }
                    var known: Bool?
                    if case .ok(let e) = await editable { known = e }
                    return Responses.json(bytes: ArticleScreen.settingEditable(shared.identity, known), cacheControl: "private, no-cache",
                                          headers: ["Vary": "Accept, Accept-Encoding, Accept-Language, Authorization", "Content-Language": lang.tag])
                }
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
                                _ = try await ArticleScreen.prepare(api: api, lang: lang, title: title, preferred: preferred, timeout: max(timeout, upstreamTimeout),
                                                      responses: responses, key: key, previous: warm, anonymousEdits: anonymousEdits)
                            } catch { responses.refreshFailed(key) }
                        }
                    }
                }
                return .response(.prepared(stale ? warm.stale : warm.fresh))
            }
            return Responses.async {
                .prepared(try await ArticleScreen.prepare(api: api, lang: lang, title: title, preferred: preferred, timeout: timeout, responses: responses, key: key, anonymousEdits: anonymousEdits))
            }
        }
    }
}
