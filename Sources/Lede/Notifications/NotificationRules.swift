import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// The bell: where it lives and whether it shows its dot — the four states of the notifications spec
/// (Explore feed on/off × unread/none) — plus the counts a client badges with.
struct Badge: Encodable, Equatable, Sendable {
    enum Placement: String, Encodable, Sendable { case explore, settings }
    var unreadCount: Int
    /// `"99+"` above 99, like the app's badge.
    var displayCount: String
    /// Whether the bell shows its unread indicator.
    var indicated: Bool
    /// The Explore top bar when the Explore feed is on; the Settings tab when it is off.
    var placement: Placement
    var appIconBadgeCount: Int

    init(unread: Int, exploreFeedOn: Bool) {
        let n = max(0, unread)
        unreadCount = n
        displayCount = n > 99 ? "99+" : String(n)
        indicated = n > 0
        placement = exploreFeedOn ? .explore : .settings
        appIconBadgeCount = n
    }

    /// The JSON JSONEncoder would write (sorted keys), written directly: the badge is answered on every app open.
    var jsonBytes: [UInt8] {
        // Written in place, no nested function capturing `out` (that boxed it, with an exclusivity check per write).
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out.append(contentsOf: "{\"appIconBadgeCount\":" as StaticString); JSONText.appendInt(appIconBadgeCount, to: &out)
        out.append(contentsOf: ",\"displayCount\":" as StaticString); JSONText.appendQuoted(displayCount, to: &out)
        out.append(contentsOf: indicated ? ",\"indicated\":true" : ",\"indicated\":false" as StaticString)
        out.append(contentsOf: placement == .explore ? ",\"placement\":\"explore\"" : ",\"placement\":\"settings\"" as StaticString)
        out.append(contentsOf: ",\"unreadCount\":" as StaticString); JSONText.appendInt(unreadCount, to: &out)
        out.append(125)
        return out
    }
}

/// The app's notification filter groups.
enum FilterGroup: String, CaseIterable, Encodable, Sendable {
    case userTalkPageMessage, mentionInTalkPage, editReverted, thanks, welcome, loginAttempts, other

    /// Echo's type (and category) → the app's group.
    static func of(type: String, category: String?) -> FilterGroup {
        switch type {
        case "edit-user-talk": return .userTalkPageMessage
        case "mention", "mention-summary", "flow-mention": return .mentionInTalkPage
        case "reverted": return .editReverted
        case "edit-thank", "flow-thank": return .thanks
        case "welcome", "thank-you-edit": return .welcome
        case "login-fail-new", "login-fail-known", "login-success": return .loginAttempts
        default:
            switch category {
            case "edit-user-talk": return .userTalkPageMessage
            case "mention": return .mentionInTalkPage
            case "reverted": return .editReverted
            case "edit-thank": return .thanks
            case "login-fail", "login-success": return .loginAttempts
            default: return .other
            }
        }
    }
}

/// A notification as the client lists it.
struct NotificationItem: Encodable, Equatable, Sendable {
    var id: Int
    var wiki: String?
    var type: String
    var category: String?
    var filter: FilterGroup
    var timestamp: String?
    var read: Bool
    var agent: String?
    var title: String?
    var header: String?
    var body: String?
    var primaryLink: String?

    /// Echo's `utciso8601` in the one form Lede sends (RFC 3339 UTC, whole seconds), or nil when it is not a date.
    static func wholeSeconds(_ text: String) -> String? {
        Timestamp.parseRFC3339(text).map { Timestamp.rfc3339(seconds: Int($0.rounded(.down))) }
    }

    init(_ n: EchoNotification) {
        id = n.id; wiki = n.wiki; type = n.type; category = n.category
        filter = FilterGroup.of(type: n.type, category: n.category)
        timestamp = n.timestamp?.utcunix.map { Timestamp.rfc3339(seconds: $0) } ?? n.timestamp?.utciso8601.flatMap(Self.wholeSeconds)
        read = n.isRead
        agent = n.agent?.name
        title = n.title?.full
        header = n.content?.header
        body = (n.content?.body).flatMap { $0.isEmpty ? nil : $0 }
        primaryLink = n.content?.links?.primary?.url
    }

    /// The item as `JSONEncoder` with sorted keys writes it (the same members and values; nil as `null`), written
    /// by hand: a notifications page is per user, so it is encoded on every request.
    /// The item as its own JSON document (a `notification` event's data).
    var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        appendJSON(to: &out)
        return out
    }

    func appendJSON(to out: inout [UInt8]) {
        func key(_ k: StaticString) { out.append(contentsOf: k) }
        func string(_ v: String?) { if let v { JSONText.appendQuoted(v, to: &out) } else { out.append(contentsOf: [110, 117, 108, 108]) } }
        key("{\"agent\":"); string(agent)
        key(",\"body\":"); string(body)
        key(",\"category\":"); string(category)
        key(",\"filter\":\""); out.append(contentsOf: filter.rawValue.utf8); out.append(34)
        key(",\"header\":"); string(header)
        key(",\"id\":"); JSONText.appendInt(id, to: &out)
        key(",\"primaryLink\":"); string(primaryLink)
        key(",\"read\":"); if read { key("true") } else { key("false") }
        key(",\"timestamp\":"); string(timestamp)
        key(",\"title\":"); string(title)
        key(",\"type\":"); string(type)
        key(",\"wiki\":"); string(wiki)
        out.append(125)
    }

    enum CodingKeys: String, CodingKey { case id, wiki, type, category, filter, timestamp, read, agent, title, header, body, primaryLink }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id); try c.encode(wiki, forKey: .wiki); try c.encode(type, forKey: .type)
        try c.encode(category, forKey: .category); try c.encode(filter, forKey: .filter); try c.encode(timestamp, forKey: .timestamp)
        try c.encode(read, forKey: .read); try c.encode(agent, forKey: .agent); try c.encode(title, forKey: .title)
        try c.encode(header, forKey: .header); try c.encode(body, forKey: .body); try c.encode(primaryLink, forKey: .primaryLink)
    }
}

/// `POST /notifications/read` bodies: `{"ids":[…]}` or `{"all":true}`, strictly.
enum MarkReadRequest: Equatable, Sendable {
    case ids([Int])
    case all

    static let maxIDs = 500
    static let batchSize = 50

    static func parse(_ body: [UInt8]) throws -> MarkReadRequest {
        guard !body.isEmpty else { throw bad(.problemBodyOneOf, "{\"ids\":[…]}", "{\"all\":true}") }
        let object: [String: JSONValue]
        do { object = try UpstreamJSONDecoder().decode([String: JSONValue].self, from: body) } catch {
            throw bad(.problemBodyNotObject)
        }
        let unknown = object.keys.filter { $0 != "ids" && $0 != "all" }.sorted()
        guard unknown.isEmpty else { throw bad(.problemBodyUnknownFields, unknown.prefix(5).map { String($0.prefix(40)) }.joined(separator: ", ")) }
        switch (object["ids"], object["all"]) {
        case (nil, .bool(true)?): return .all
        case (nil, _?): throw bad(.problemFieldTrue, "all")
        case (.array(let values)?, nil):
            guard !values.isEmpty else { throw bad(.problemFieldEmpty, "ids") }
            guard values.count <= maxIDs else { throw bad(.problemListTooLong, "ids", String(maxIDs)) }
            var ids: [Int] = []
            var seen = Set<Int>()
            for v in values {
                let id: Int?
                switch v {
                case .int(let n): id = n
                case .string(let s): id = s.utf8.count <= 18 && !s.isEmpty && s.utf8.allSatisfy { (48...57).contains($0) } ? Int(s) : nil
                default: id = nil
                }
                guard let id, id > 0 else { throw bad(.problemFieldPositiveIntegers, "ids") }
                if seen.insert(id).inserted { ids.append(id) }
            }
            return .ids(ids)
        case (_?, nil): throw bad(.problemFieldArray, "ids")
        case (_?, _?): throw bad(.problemFieldsExclusive, "ids", "all")
        case (nil, nil): throw bad(.problemBodyOneOf, "{\"ids\":[…]}", "{\"all\":true}")
        }
    }

    /// Upstream takes at most 50 ids a call.
    static func batches(_ ids: [Int]) -> [[Int]] {
        stride(from: 0, to: ids.count, by: batchSize).map { Array(ids[$0..<min($0 + batchSize, ids.count)]) }
    }

    static func bad(_ key: MessageKey, _ parameters: String...) -> Problem { Problem(status: 400, slug: "invalid-mark-read", key, parameters: parameters) }
}

