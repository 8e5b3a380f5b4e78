import Foundation
import Synchronization
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The ReadingLists extension's REST interface as the embedded default answers it (docs/UPSTREAM.md, "Reading lists"):
/// the extension's JSON, its `next` pages, `duplicate: true`, and its error bodies `{errorKey, messageTranslations,
/// httpCode, httpReason}`. A demo: the lists live in this process's memory, and writes change them until it exits.
/// `Bearer demo-alice` has a default list of a dozen articles across en and de (some saved with underscores, one saved
/// under two spellings, one under a title that is now a redirect); `Bearer demo-bob` never set up sync;
/// `Bearer demo-temp` is a temporary account (refused as the extension refuses one); `Bearer demo-full` has a list at
/// the wiki's limit of 5,000 entries (a save answers the 409). Tests make stores of their own.
public final class EmbeddedReadingLists: Sendable {
    public struct Entry: Sendable, Equatable {
        public var id: Int, project: String, title: String, created: String, updated: String
        public init(id: Int, project: String, title: String, created: String, updated: String) {
            self.id = id; self.project = project; self.title = title; self.created = created; self.updated = updated
        }
    }
    public struct User: Sendable {
        public var setUp: Bool
        public var listID: Int
        public var entries: [Entry]
        public init(setUp: Bool, listID: Int, entries: [Entry] = []) { self.setUp = setUp; self.listID = listID; self.entries = entries }
    }
    public struct Settings: Sendable {
        /// The most entries a list holds (`maxEntriesPerList`).
        public var maxEntries = 5_000
        /// The most entries in one page of `GET …/entries`.
        public var pageSize = 100
        /// Tokens not in the store: refused as an unknown user (false), or a new user who never set up sync (true).
        public var acceptsAnyToken = false
        /// Days a removal is named by `changes/since` (`deletedRetentionDays`); an older date is refused.
        public var deletedRetentionDays = 30
        /// The wiki's clock (the time a save or a removal is stamped with).
        public var clock = EmbeddedClock.shared
        public init() {}
    }

    private struct State: Sendable {
        var users: [String: User]
        /// Entries removed, by user, with when (`updated`): what `changes/since` names as `deleted`, kept for the
        /// retention time (the newest 10,000 a user).
        var removed: [String: [Entry]] = [:]
        var nextID: Int
        var setUpCalls = 0, teardownCalls = 0
    }
    private let state: Mutex<State>
    public let settings: Settings

    public init(users: [String: User], settings: Settings = Settings()) {
        self.settings = settings
        let top = users.values.flatMap { $0.entries.map(\.id) + [$0.listID] }.max() ?? 0
        state = Mutex(State(users: users, nextID: top + 1))
    }

    /// The embedded default's demo users.
    public static func demo() -> EmbeddedReadingLists {
        let saved: [(String, String)] = [
            ("en", "Albert_Einstein"), ("en", "Marie Curie"), ("de", "Kopenhagen"), ("en", "Ada_Lovelace"), ("en", "Bombay"),
            ("de", "Albert Einstein"), ("en", "Python_(programming_language)"), ("en", "Rijksmuseum"), ("de", "Museo_del_Prado"),
            ("en", "Albert Einstein"), ("en", "Anne Frank House"), ("de", "Gateway of India"), ("en", "Vondelpark"),
        ]
        let entries = saved.enumerated().map { i, s in
            let at = timestamp(1_795_000_000 - i * 86_400)   // newest first, a day apart
            return Entry(id: 101 + i, project: "https://\(s.0).wikipedia.org", title: s.1.replacingOccurrences(of: "_", with: i % 3 == 0 ? "_" : " "), created: at, updated: at)
        }
        let full = (0..<5_000).map { i in
            Entry(id: 10_000 + i, project: "https://en.wikipedia.org", title: "Saved article \(i)", created: timestamp(1_700_000_000 - i), updated: timestamp(1_700_000_000 - i))
        }
        return EmbeddedReadingLists(users: ["demo-alice": User(setUp: true, listID: 7, entries: entries), "demo-bob": User(setUp: false, listID: 0),
                                            "demo-full": User(setUp: true, listID: 8, entries: full)])
    }

    static func timestamp(_ seconds: Int) -> String { Timestamp.rfc3339(seconds: seconds) }

    public var setUpCalls: Int { state.withLock { $0.setUpCalls } }
    public var teardownCalls: Int { state.withLock { $0.teardownCalls } }
    public func entries(of token: String) -> [Entry] { state.withLock { $0.users[token]?.entries ?? [] } }
    public func isSetUp(_ token: String) -> Bool { state.withLock { $0.users[token]?.setUp ?? false } }

    static let prefix = "/w/rest.php/readinglists/v0/lists"

    /// Whether this store answers `path`.
    public static func handles(_ path: String) -> Bool { path == prefix || path.hasPrefix(prefix + "/") }

    public func answer(_ request: UpstreamRequest) -> UpstreamResponse {
        guard let auth = request.authorization, auth.hasPrefix("Bearer ") else { return Self.error(401, "rest-permission-denied-anon", "Unauthorized") }
        let token = String(auth.dropFirst(7))
        if token == "demo-temp" { return Self.error(401, "rest-permission-denied-anon", "Unauthorized") }
        let rest = request.path.dropFirst(Self.prefix.count).split(separator: "/").map(String.init)
        let q = Dictionary(request.query, uniquingKeysWith: { a, _ in a })
        return state.withLock { s -> UpstreamResponse in
            if s.users[token] == nil {
                guard settings.acceptsAnyToken else { return Self.error(401, "mwoauth-invalid-authorization-invalid-user", "Unauthorized") }
                s.users[token] = User(setUp: false, listID: 0)
            }
            var user = s.users[token]!
            defer { s.users[token] = user }
            switch (request.method, rest.count) {
            case (.get, 3) where rest[0] == "changes" && rest[1] == "since":
                guard user.setUp else { return Self.error(400, "readinglists-db-error-not-set-up", "Bad Request") }
                let date = rest[2].removingPercentEncoding ?? rest[2]
                guard let since = Timestamp.parseRFC3339(date) else { return Self.error(400, "rest-invalid-date", "Bad Request") }
                guard Double(settings.clock.seconds() - settings.deletedRetentionDays * 86_400) <= since else {
                    return Self.error(400, "readinglists-db-error-too-old", "Bad Request")
                }
                let changed = (user.entries + (s.removed[token] ?? [])).filter { (Timestamp.parseRFC3339($0.updated) ?? 0) >= since }
                return Self.page(changed, q, size: settings.pageSize, listID: user.listID, deleted: Set((s.removed[token] ?? []).map(\.id)))
            case (.post, 1) where rest[0] == "setup":
                s.setUpCalls += 1
                if user.setUp { return Self.error(400, "readinglists-db-error-already-set-up", "Bad Request") }
                user.setUp = true
                user.listID = s.nextID; s.nextID += 1
                return Self.ok("{\"default\":\(Self.list(user, removed: s.removed[token] ?? []))}")
            case (.post, 1) where rest[0] == "teardown":
                s.teardownCalls += 1
                user = User(setUp: false, listID: 0)
                return Self.ok("{}")
            case (.get, 0):
                guard user.setUp else { return Self.error(400, "readinglists-db-error-not-set-up", "Bad Request") }
                return Self.ok("{\"lists\":[\(Self.list(user, removed: s.removed[token] ?? []))]}")
            case (_, 2...3) where rest[1] == "entries":
                guard user.setUp else { return Self.error(400, "readinglists-db-error-not-set-up", "Bad Request") }
                guard Int(rest[0]) == user.listID else { return Self.error(404, "readinglists-db-error-no-such-list", "Not Found") }
                switch (request.method, rest.count) {
                case (.get, 2): return Self.page(user.entries, q, size: settings.pageSize)
                case (.post, 2):
                    struct Body: Decodable { var project: String; var title: String }
                    guard let b = try? JSONDecoder().decode(Body.self, from: Data(request.json)) else { return Self.error(400, "rest-bad-json-body", "Bad Request") }
                    if let held = user.entries.first(where: { $0.project == b.project && $0.title == b.title }) {
                        return Self.ok("{\"id\":\(held.id),\"entry\":\(Self.entry(held)),\"duplicate\":true}")
                    }
                    guard user.entries.count < settings.maxEntries else { return Self.error(400, "readinglists-db-error-entry-limit", "Bad Request") }
                    let at = settings.clock.stamp()
                    let e = Entry(id: s.nextID, project: b.project, title: b.title, created: at, updated: at)
                    s.nextID += 1
                    user.entries.insert(e, at: 0)
                    return Self.ok("{\"id\":\(e.id),\"entry\":\(Self.entry(e))}")
                case (.delete, 3):
                    guard let id = Int(rest[2]), let i = user.entries.firstIndex(where: { $0.id == id }) else {
                        return Self.error(404, "readinglists-db-error-no-such-list-entry", "Not Found")
                    }
                    var gone = user.entries.remove(at: i)
                    gone.updated = settings.clock.stamp()
                    s.removed[token, default: []].append(gone)
                    if s.removed[token]!.count > 10_000 { s.removed[token]!.removeFirst() }
                    return Self.ok("{}")
                default: return Self.error(405, "rest-wrong-method", "Method Not Allowed")
                }
            default:
                return Self.error(404, "rest-no-match", "Not Found")
            }
        }
    }

    /// A page of entries, most recently updated first, `limit` at most (and the store's page size); `next` is opaque.
    private static func page(_ entries: [Entry], _ q: [String: String], size: Int, listID: Int? = nil, deleted: Set<Int> = []) -> UpstreamResponse {
        let sorted = entries.enumerated().sorted { a, b in
            a.element.updated != b.element.updated ? a.element.updated > b.element.updated : a.offset < b.offset
        }.map(\.element)
        let limit = min(size, max(1, Int(q["limit"] ?? "") ?? 10))
        let start = q["next"].flatMap { $0.hasPrefix("p") ? Int($0.dropFirst()) : nil } ?? 0
        guard start <= sorted.count else { return error(400, "readinglists-db-error-invalid-continue", "Bad Request") }
        let end = min(sorted.count, start + limit)
        var body = "{\"entries\":[" + sorted[start..<end].map { e in
            guard let listID else { return entry(e) }
            // `changes/since` names each entry's list, and a removed one as `deleted`.
            return String(entry(e).dropLast()) + ",\"listId\":\(listID)" + (deleted.contains(e.id) ? ",\"deleted\":true}" : "}")
        }.joined(separator: ",") + "]"
        if end < sorted.count { body += ",\"next\":\"p\(end)\"" }
        return ok(body + "}")
    }

    /// The default list: `updated` is its latest change, a save or a removal (RFC 3339 UTC stamps sort as text).
    private static func list(_ user: User, removed: [Entry]) -> String {
        let created = "2025-01-01T00:00:00Z"
        let updated = max(user.entries.lazy.map(\.updated).max() ?? created, removed.lazy.map(\.updated).max() ?? created)
        return "{\"id\":\(user.listID),\"name\":\"default\",\"default\":true,\"description\":\"\",\"created\":\"\(created)\",\"updated\":\"\(updated)\"}"
    }

    private static func entry(_ e: Entry) -> String {
        "{\"id\":\(e.id),\"project\":\(JSONText.quote(e.project)),\"title\":\(JSONText.quote(e.title)),\"created\":\"\(e.created)\",\"updated\":\"\(e.updated)\"}"
    }

    private static func ok(_ body: String) -> UpstreamResponse { UpstreamResponse(status: 200, body: Array(body.utf8)) }

    static func error(_ status: Int, _ key: String, _ reason: String) -> UpstreamResponse {
        let body = "{\"errorKey\":\"\(key)\",\"messageTranslations\":{\"en\":\"\(key)\"},\"httpCode\":\(status),\"httpReason\":\"\(reason)\"}"
        return UpstreamResponse(status: status, body: Array(body.utf8))
    }
}
