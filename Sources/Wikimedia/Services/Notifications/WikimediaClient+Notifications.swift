import EventLoops
import Foundation
import LedeBasics
import Upstream

// Echo: the notification list, the unread count (the badge), CSRF tokens and mark-read (docs/UPSTREAM.md,
// "Notifications").
extension WikimediaClient {
    static func notificationsRequest(_ lang: LanguageCode, _ auth: String, _ filter: NotificationFilter, _ limit: Int, _ cont: String?,
                                     uselang: String? = nil) -> UpstreamRequest {
        var q: [(String, String)] = [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("meta", "notifications"),
            ("notformat", "model"), ("notprop", "list|count"), ("notfilter", filter.upstreamValue), ("notlimit", "\(limit)"),
        ]
        if let cont { q.append(("notcontinue", cont)) }
        // Echo writes each notification's header and body in this language.
        if let uselang { q.append(("uselang", uselang)) }
        return UpstreamRequest(lang: lang, path: "/w/api.php", query: q, authorization: auth, kind: .notifications)
    }

    /// The badge's call: Echo's unread count alone (`notprop=count`). Echo then fetches and renders no notification
    /// (a `list|count` call with `notlimit=1` made it load and format the newest unread one, which the badge threw
    /// away): it answers `query.notifications{rawcount, count}` from its cached per-user count.
    static func unreadCountRequest(_ lang: LanguageCode, _ auth: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("meta", "notifications"), ("notprop", "count"),
        ], authorization: auth, kind: .notifications)
    }

    static func tokenRequest(_ lang: LanguageCode, _ auth: String?) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("meta", "tokens"), ("type", "csrf"),
        ], authorization: auth, kind: .token)
    }

    static func markReadRequest(_ lang: LanguageCode, _ auth: String, _ ids: [Int]?, _ token: String) -> UpstreamRequest {
        var form: [(String, String)] = [("action", "echomarkread"), ("format", "json"), ("formatversion", "2")]
        if let ids { form.append(("list", ids.map(String.init).joined(separator: "|"))) } else { form.append(("all", "1")) }
        form.append(("token", token))
        return UpstreamRequest(method: .post, lang: lang, path: "/w/api.php", form: form, authorization: auth, kind: .markread)
    }

    public func notifications(lang: LanguageCode, authorization: String, filter: NotificationFilter, limit: Int, continueFrom: String?,
                              uselang: String?) async throws -> NotificationPage {
        let (q, _) = try await action(Self.notificationsRequest(lang, authorization, filter, limit, continueFrom, uselang: uselang), as: NotificationsQuery.self)
        guard let n = q.notifications else { throw UpstreamError.malformed("no query.notifications in the answer") }
        return NotificationPage(list: n.list ?? [], count: n.count, rawcount: n.rawcount ?? 0, continue: n.continue)
    }

    /// The badge's call: the whole answer is validated, but only `rawcount` (and an `error`) is read out of it,
    /// with no `Codable` machinery — this runs on every app open.
    public func unreadCount(lang: LanguageCode, authorization: String) async throws -> Int {
        let (req, _) = unreadRequest(lang, authorization)
        return try unread(in: try await actionAnswer(req), of: req)
    }

    /// The badge's count through a callback: without a task when the call can start on this loop
    /// (`UpstreamClient.exchange(_:gate:owner:reading:completion:)`), the steps of `actionAnswer` and `unreadCount` in the one callback.
    public func unreadCount(lang: LanguageCode, authorization: String, completion: @escaping @Sendable (Result<Int, any Error>) -> Void) {
        let (req, gate) = unreadRequest(lang, authorization)
        // A closure that captures nothing: no context is made for it.
        upstream.exchange(req, gate: gate, owner: self, reading: { owner, response, req in
            try unsafeDowncast(owner, to: WikimediaClient.self).unread(in: try WikimediaClient.actionStatus(response), of: req)   // the owner is this client
        }, completion: completion)
    }

    /// The badge's call is the same for every user of a language but for the credentials: made ready once.
    func unreadRequest(_ lang: LanguageCode, _ authorization: String) -> (UpstreamRequest, UpstreamGuard.Gate) {
        var (req, gate) = preparedUnread(lang)
        req.authorization = authorization
        return (req, gate)
    }

    /// The unread count in an answer to the badge's call (an Action API error thrown as what it means).
    func unread(in response: UpstreamResponse, of req: UpstreamRequest) throws -> Int {
        let found: JSONPaths.Found
        do { found = try Self.unreadQuery.read(response.body) } catch {
            throw UpstreamError.malformed("\(req.kind): the answer is not the expected JSON shape")
        }
        if let error = found[0] {
            guard error.kind == .object, let code = found[1], code.kind == .string else {
                throw UpstreamError.malformed("\(req.kind): the answer is not the expected JSON shape")
            }
            try actionError(code.text, info: found[2]?.text, req, response)
        }
        guard found[3]?.kind == .object else { throw UpstreamError.malformed("no query.notifications in the answer") }
        return found[4]?.lenientInt ?? 0
    }

    /// The badge's request for `lang` (no credentials), as the transport prepared it, with its origin's guard
    /// handle: one lookup in the language's table per call.
    func preparedUnread(_ lang: LanguageCode) -> (UpstreamRequest, UpstreamGuard.Gate) {
        let at = Int(lang.index)
        if let known = languages.withLock({ at < $0.count ? $0[at] : nil }) { return (known.unread, known.gate) }
        let gate = originGate(lang: lang.code)
        // The edition's own request (no variant): the count is the same in every script.
        let ready = transport.prepare(Self.unreadCountRequest(LanguageCode(verified: (lang.code, lang.index)), ""))
        languages.withLock { table in
            if table.count <= at { table.append(contentsOf: repeatElement(nil, count: at + 1 - table.count)) }
            table[at] = Language(gate: gate, unread: ready)
        }
        return (ready, gate)
    }

    /// error, error.code, error.info, query.notifications, query.notifications.rawcount — read by index above.
    static let unreadPaths = [["error"], ["error", "code"], ["error", "info"], ["query", "notifications"], ["query", "notifications", "rawcount"]]
    static let unreadQuery = JSONPaths.Query(unreadPaths)

    public func csrfToken(lang: LanguageCode, authorization: String) async throws -> String {
        let (q, _) = try await action(Self.tokenRequest(lang, authorization), as: TokensQuery.self)
        guard let token = q.tokens?.csrftoken, !token.isEmpty else { throw UpstreamError.malformed("no csrf token in the answer") }
        // An anonymous session gets the token "+\\": the credentials were not accepted.
        if token == "+\\" { throw UpstreamError.notAuthorised }
        return token
    }

    public func markRead(lang: LanguageCode, authorization: String, ids: [Int]?, token: String) async throws {
        if let ids { precondition(ids.count <= 50, "callers batch mark-read by 50") }
        let (q, _) = try await action(Self.markReadRequest(lang, authorization, ids, token), as: MarkReadQuery.self)
        guard q.echomarkread?.result == "success" else { throw UpstreamError.malformed("echomarkread did not report success") }
    }
}
