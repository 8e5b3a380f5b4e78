import Foundation
import HTTPServer
import Synchronization
import LedeBasics
import Wikimedia
import HTTPCore

/// `/notifications/badge`, `/notifications`, `POST /notifications/read`. Everything here is user-bound: the
/// client's Authorization goes to upstream unchanged, nothing is cached, responses are `private, no-store`.
enum NotificationRoutes {
    struct ListBody: Encodable {
        var badge: Badge
        var notifications: [NotificationItem]
        var `continue`: String?
        enum CodingKeys: String, CodingKey { case badge, notifications, `continue` }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(badge, forKey: .badge); try c.encode(notifications, forKey: .notifications); try c.encode(self.continue, forKey: .continue)
        }

        /// What `encode(to:)` gives with sorted keys, written by hand (per-user answers are encoded per request).
        var jsonBytes: [UInt8] {
            var out = Array("{\"badge\":".utf8)
            out.reserveCapacity(512 * notifications.count + 256)
            out.append(contentsOf: badge.jsonBytes)
            out.append(contentsOf: ",\"continue\":".utf8)
            if let c = self.continue { JSONText.appendQuoted(c, to: &out) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: ",\"notifications\":[".utf8)
            for (i, n) in notifications.enumerated() {
                if i > 0 { out.append(44) }
                n.appendJSON(to: &out)
            }
            out.append(contentsOf: "]}".utf8)
            return out
        }
    }

    static let noStore = "private, no-store"

    /// The badge as an answer: for the counts most users have, prepared once (its bytes, entity tag and fields
    /// rendered when the routes are registered), so answering copies bytes; the same bytes and fields as
    /// `Responses.json` would write, which answers the rest.
    final class BadgeAnswers: Sendable {
        /// Counts below this are prepared, with the Explore feed on and off.
        static let prepared = 256
        private let bodies: [PreparedBody]

        init() {
            bodies = (0..<(2 * Self.prepared)).map { i in
                PreparedBody(contentType: "application/json", bytes: Badge(unread: i / 2, exploreFeedOn: i % 2 == 1).jsonBytes,
                             headers: HTTPHeaders([("Cache-Control", NotificationRoutes.noStore)]))
            }
        }

        func response(unread: Int, feedOn: Bool) -> HTTPResponse {
            if unread >= 0 && unread < Self.prepared { return .prepared(bodies[2 * unread + (feedOn ? 1 : 0)]) }
            return Responses.json(bytes: Badge(unread: unread, exploreFeedOn: feedOn).jsonBytes, cacheControl: noStore)
        }
    }

    /// `Last-Event-ID` as this stream's ids are written (1-19 digits); nil when absent. Anything else is refused: the
    /// header only ever carries back an id the stream sent.
    static func lastEventID(_ raw: String?) throws -> Int? {
        guard let raw else { return nil }
        let t = raw.trimmingCharacters(in: .whitespaces)
        guard (1...19).contains(t.utf8.count), t.utf8.allSatisfy({ (48...57).contains($0) }), let id = Int(t) else {
            throw bad(.problemLastEventId, "Last-Event-ID", String(raw.prefix(40)))
        }
        return id
    }

    /// The reconnection delay a stream hints at its start (ms).
    static let streamRetry = 3000

    static func register(on router: Router, api: any WikimediaAPI, hub: NotificationHub) {
        let badges = BadgeAnswers()
        // The live bell: the badge at once and on every change, each new unread notification, resumable on any replica.
        router.add("GET", "/notifications/stream", account: BearerAuthorization.required) { ctx in
            let auth: String, lang: LanguageCode, feedOn: Bool, resumeAfter: Int?
            (auth, lang, feedOn) = try userRequest(ctx)
            // Resume after the newest notification the client saw (an id of Wikimedia's, valid on every replica).
            resumeAfter = try lastEventID(ctx.request.headers["Last-Event-ID"])
            // Echo's words (each notification's header) in the reader's interface language: one poll per language.
            let uselang = try InterfaceLanguage.resolve(ctx)
            // No task per stream, opening or open: the subscription waits for the user's first round as a callback,
            // and the hub pushes each update into the stream's channel (on its connection's loop).
            return .callback { responder in
                let bell = BellStream(feedOn: feedOn)
                // The token is checked with Wikimedia before the stream starts: a refused one is the usual 401 problem.
                hub.subscribe(token: auth, lang: lang, uselang: uselang, sink: bell) { result in
                    switch result {
                    case .failure(let error):
                        responder.respond(Responses.problem(error))
                    case .success(let (id, snapshot, key)):
                        responder.respond(.eventChannel(abandoned: { hub.unsubscribe(key: key, id: id) }) { channel in
                            channel.onClose { _ in hub.unsubscribe(key: key, id: id) }
                            channel.retry(milliseconds: streamRetry)
                            if let resumeAfter {
                                for item in snapshot.items.reversed() where item.id > resumeAfter { channel.send(encoded: BellStream.notification(item)) }
                            }
                            channel.send(encoded: BellStream.badge(snapshot.unread, snapshot.newestID, feedOn: feedOn))
                            bell.attach(channel)
                        })
                    }
                }
            }
        }

        router.add("GET", "/notifications/badge", account: BearerAuthorization.required) { ctx in
            let auth: String, lang: LanguageCode, feedOn: Bool
            (auth, lang, feedOn) = try userRequest(ctx)
            // The most polled route: answered through a callback, without a task when the call starts on this loop.
            return .callback { responder in
                api.unreadCount(lang: lang, authorization: auth) { result in
                    switch result {
                    case .success(let unread):
                        responder.respond(badges.response(unread: unread, feedOn: feedOn))
                    case .failure(let error):
                        responder.respond(Responses.problem(error))
                    }
                }
            }
        }

        router.add("GET", "/notifications", account: BearerAuthorization.required) { ctx in
            let auth: String, lang: LanguageCode, feedOn: Bool, filter: NotificationFilter, limit: Int, cont: String?, groups: Set<FilterGroup>?
            (auth, lang, feedOn) = try userRequest(ctx)
            let f = ctx.request.queryParameter("filter") ?? "all"
            guard let parsed = NotificationFilter(rawValue: f) else { throw bad(.problemParameterOneOf, "filter", "unread, read, all") }
            filter = parsed
            limit = try Parameters.int(ctx.request, "limit", default: 20, range: 1...50)
            cont = ctx.request.queryParameter("continue")
            if let c = cont, c.isEmpty || c.utf8.count > 100 || !c.utf8.allSatisfy({ (48...57).contains($0) || $0 == 124 }) {
                throw bad(.problemContinueInvalid, "continue")
            }
            groups = try ctx.request.queryParameter("types").map(parseGroups)
            let uselang = try InterfaceLanguage.resolve(ctx)
            return Responses.async {
                let page = try await api.notifications(lang: lang, authorization: auth, filter: filter, limit: limit, continueFrom: cont, uselang: uselang)
                var items = page.list.map(NotificationItem.init)
                if let groups { items = items.filter { groups.contains($0.filter) } }
                let body = ListBody(badge: Badge(unread: page.rawcount, exploreFeedOn: feedOn), notifications: items, continue: page.continue)
                return Responses.json(bytes: body.jsonBytes, cacheControl: noStore)
            }
        }

        router.add("POST", "/notifications/read", cost: Costs.write, account: BearerAuthorization.required) { ctx in
            let auth: String, lang: LanguageCode, feedOn: Bool, request: MarkReadRequest
            (auth, lang, feedOn) = try userRequest(ctx)
            try Responses.requireJSON(ctx.request)
            request = try MarkReadRequest.parse(ctx.request.body)
            return Responses.async {
                let token = try await api.csrfToken(lang: lang, authorization: auth)
                switch request {
                case .all: try await api.markRead(lang: lang, authorization: auth, ids: nil, token: token)
                case .ids(let ids):
                    for batch in MarkReadRequest.batches(ids) { try await api.markRead(lang: lang, authorization: auth, ids: batch, token: token) }
                }
                let unread = try await api.unreadCount(lang: lang, authorization: auth)
                hub.countChanged(token: auth, lang: lang, unread: unread)   // this user's live bells, at once
                return badges.response(unread: unread, feedOn: feedOn)
            }
        }
    }

    /// What every notification route reads first: the user's token, the edition, and `feed=on|off`.
    static func userRequest(_ ctx: RequestContext) throws -> (auth: String, lang: LanguageCode, feedOn: Bool) {
        (try BearerAuthorization.extract(ctx.credentials), try LanguageCode.resolve(ctx.request), try exploreFeed(ctx.request))
    }

    /// `feed=on|off`: whether the user has the Explore feed turned on (default on).
    static func exploreFeed(_ request: HTTPRequest) throws -> Bool {
        switch request.queryParameter("feed") ?? "on" {
        case "on": return true
        case "off": return false
        default: throw bad(.problemParameterChoice, "feed", "on", "off")
        }
    }

    static func parseGroups(_ raw: String) throws -> Set<FilterGroup> {
        Set(try QueryList.cases(raw, of: FilterGroup.self, name: "types", slug: "invalid-notifications-request"))
    }

    static func bad(_ key: MessageKey, _ parameters: String...) -> Problem { Problem(status: 400, slug: "invalid-notifications-request", key, parameters: parameters) }
}

/// One bell stream's end of the hub: each update written to the stream's channel as events; the few that come between
/// the subscription and the stream's start are held and written first. The whole of a stream's state on the app's side.
final class BellStream: NotificationSink {
    let feedOn: Bool
    private struct State {
        var channel: EventChannel?
        var pending: [NotificationHub.Update] = []
        var ended = false
    }
    private let state = Mutex(State())

    init(feedOn: Bool) { self.feedOn = feedOn }

    /// The stream opened (on its loop, after its first events): what came meanwhile, then everything as it comes.
    func attach(_ channel: EventChannel) {
        let (pending, ended): ([NotificationHub.Update], Bool) = state.withLock { s in
            s.channel = channel
            defer { s.pending = [] }
            return (s.pending, s.ended)
        }
        for update in pending { write(update, to: channel) }
        if ended || pending.count >= BellStream.maxPending { channel.finish() }   // past the bound: the client resumes
    }

    func deliver(_ update: NotificationHub.Update) {
        let channel: EventChannel? = state.withLock { s in
            if s.channel == nil, !s.ended, s.pending.count < BellStream.maxPending { s.pending.append(update) }
            return s.channel
        }
        if let channel { write(update, to: channel) }
    }

    func end() {
        let channel: EventChannel? = state.withLock { s in s.ended = true; return s.channel }
        channel?.finish()
    }

    static let maxPending = 16

    private func write(_ update: NotificationHub.Update, to channel: EventChannel) {
        switch update {
        case .changed(let new, let unread, let newest):
            for item in new { channel.send(encoded: BellStream.notification(item)) }
            channel.send(encoded: BellStream.badge(unread, newest, feedOn: feedOn))
        case .badge(let unread, let newest):
            channel.send(encoded: BellStream.badge(unread, newest, feedOn: feedOn))
        case .refused(let problem):
            channel.send(event: "error", data: String(decoding: problem.jsonBytes(typeBase: LedeApp.naming.problemTypeBase, trace: TraceContext.current), as: UTF8.self))
            channel.finish()
        }
    }

    static func badge(_ unread: Int, _ newest: Int, feedOn: Bool) -> [UInt8] {
        ServerSentEvent(event: "badge", id: String(newest), data: String(decoding: Badge(unread: unread, exploreFeedOn: feedOn).jsonBytes, as: UTF8.self)).encoded
    }

    static func notification(_ item: NotificationItem) -> [UInt8] {
        ServerSentEvent(event: "notification", id: String(item.id), data: String(decoding: item.jsonBytes, as: UTF8.self)).encoded
    }
}
