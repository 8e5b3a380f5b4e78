import LedeBasics
import HTTPCore

// Echo's answers (`meta=notifications`, `meta=tokens`, `action=echomarkread`), formatversion=2.

/// Echo notification in `notformat=model`.
public struct EchoNotification: Codable, Sendable, Equatable {
    public struct Timestamp: Codable, Sendable, Equatable {
        public var utciso8601: String?
        public var utcunix: Int?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(utciso8601: String? = nil, utcunix: Int? = nil) {
            self.utciso8601 = utciso8601
            self.utcunix = utcunix
        }
    }
    public struct Title: Codable, Sendable, Equatable {
        public var full: String?
        public var namespace: String?
        public var text: String?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(full: String? = nil, namespace: String? = nil, text: String? = nil) {
            self.full = full
            self.namespace = namespace
            self.text = text
        }
    }
    public struct Agent: Codable, Sendable, Equatable {
        public var id: Int?
        public var name: String?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(id: Int? = nil, name: String? = nil) {
            self.id = id
            self.name = name
        }
    }
    public struct Link: Codable, Sendable, Equatable {
        public var url: String?
        public var label: String?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(url: String? = nil, label: String? = nil) {
            self.url = url
            self.label = label
        }
    }
    public struct Links: Codable, Sendable, Equatable {
        public var primary: Link?
        public var secondary: [Link]?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(primary: Link? = nil, secondary: [Link]? = nil) {
            self.primary = primary
            self.secondary = secondary
        }
    }
    public struct Content: Codable, Sendable, Equatable {
        public var header: String?
        public var compactHeader: String?
        public var body: String?
        public var icon: String?
        public var links: Links?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(header: String? = nil, compactHeader: String? = nil, body: String? = nil, icon: String? = nil, links: Links? = nil) {
            self.header = header
            self.compactHeader = compactHeader
            self.body = body
            self.icon = icon
            self.links = links
        }
    }
    public var wiki: String?
    public var id: Int
    public var type: String
    public var category: String?
    public var section: String?
    public var timestamp: Timestamp?
    public var title: Title?
    public var agent: Agent?
    /// Present (a timestamp) when the notification is read.
    public var read: String?
    public var content: Content?

    public var isRead: Bool { read != nil }

    enum CodingKeys: String, CodingKey {
        case wiki, id, type, category, section, timestamp, title, agent, read, content = "*"
    }

    /// Requires `id` (a number, or a string holding one with formatversion=1) and `type`. `title` is absent for
    /// events without a page; `read` counts by its presence (a timestamp, or `""` with formatversion=1).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = c.lenientInt(.id) else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "notification id missing"))
        }
        self.id = id
        type = try c.decode(String.self, forKey: .type)
        guard !type.isEmpty else { throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "empty type") }
        wiki = c.lenientString(.wiki, nonEmpty: true)
        category = c.lenientString(.category, nonEmpty: true)
        section = c.lenientString(.section, nonEmpty: true)
        timestamp = c.lenient(Timestamp.self, .timestamp)
        title = c.lenient(Title.self, .title)
        agent = c.lenient(Agent.self, .agent)
        read = c.flag(.read) ? (c.lenientString(.read) ?? "") : nil
        content = c.lenient(Content.self, .content)
    }
}

public struct NotificationPage: Sendable, Equatable {
    public var list: [EchoNotification]
    /// Upstream's display count, capped at `"99+"`.
    public var count: String?
    /// The exact unread count.
    public var rawcount: Int
    public var `continue`: String?

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(list: [EchoNotification], count: String? = nil, rawcount: Int, `continue`: String? = nil) {
        self.list = list
        self.count = count
        self.rawcount = rawcount
        self.continue = `continue`
    }
}

struct NotificationsQuery: Decodable {
    struct Notifications: Decodable {
        var list: [EchoNotification]?
        var count: String?
        var rawcount: Int?
        var `continue`: String?
        enum CodingKeys: String, CodingKey { case list, count, rawcount, `continue` }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            list = c.lossyList(EchoNotification.self, .list, kind: "notifications", counter: decoder.skippedItems)
            // `count` is a string ("99+") in the real API; accept a number too.
            count = c.lenientString(.count, nonEmpty: true) ?? c.lenientInt(.count).map(String.init)
            rawcount = c.lenientInt(.rawcount)
            self.continue = c.lenientString(.continue, nonEmpty: true) ?? c.lenientInt(.continue).map(String.init)
        }
    }
    var notifications: Notifications?
}

struct TokensQuery: Decodable {
    struct Tokens: Decodable {
        var csrftoken: String?
        enum CodingKeys: String, CodingKey { case csrftoken }
        init(from decoder: Decoder) throws { csrftoken = try decoder.container(keyedBy: CodingKeys.self).lenientString(.csrftoken, nonEmpty: true) }
    }
    var tokens: Tokens?
}

struct MarkReadQuery: Decodable {
    struct Result: Decodable {
        var result: String?
        enum CodingKeys: String, CodingKey { case result }
        init(from decoder: Decoder) throws { result = try decoder.container(keyedBy: CodingKeys.self).lenientString(.result) }
    }
    var echomarkread: Result?
}

extension EchoNotification.Timestamp {
    enum CodingKeys: String, CodingKey { case utciso8601, utcunix }
    /// `utcunix` was a string before 2019-12.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        utciso8601 = c.lenientString(.utciso8601, nonEmpty: true); utcunix = c.lenientInt(.utcunix)
    }
}

extension EchoNotification.Title {
    enum CodingKeys: String, CodingKey { case full, namespace, text }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        full = c.lenientString(.full, nonEmpty: true); namespace = c.lenientString(.namespace); text = c.lenientString(.text)
    }
}

extension EchoNotification.Agent {
    enum CodingKeys: String, CodingKey { case id, name }
    /// A hidden agent is `{"userhidden": ""}`: no id, no name.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = c.lenientInt(.id); name = c.lenientString(.name, nonEmpty: true)
    }
}

extension EchoNotification.Link {
    enum CodingKeys: String, CodingKey { case url, label }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = c.lenientString(.url, nonEmpty: true); label = c.lenientString(.label)
    }
}

extension EchoNotification.Links {
    enum CodingKeys: String, CodingKey { case primary, secondary }
    /// `primary` is an object, or `[]` when the notification has no primary link.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        primary = c.lenient(EchoNotification.Link.self, .primary)
        secondary = c.lossyList(EchoNotification.Link.self, .secondary, kind: "link", counter: nil)
    }
}

extension EchoNotification.Content {
    enum CodingKeys: String, CodingKey { case header, compactHeader, body, icon, links }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        header = c.lenientString(.header); compactHeader = c.lenientString(.compactHeader)
        body = c.lenientString(.body); icon = c.lenientString(.icon)
        links = c.lenient(EchoNotification.Links.self, .links)
    }
}
