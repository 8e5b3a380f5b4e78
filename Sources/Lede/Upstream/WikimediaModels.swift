// Codable models of the Wikimedia response shapes Lede reads (REST v1 and the Action API, formatversion=2).
// Every key that upstream may drop is optional; unknown keys are ignored.

public struct ImageRef: Codable, Sendable, Equatable {
    public var source: String
    public var width: Int?
    public var height: Int?
    public init(source: String, width: Int?, height: Int?) { self.source = source; self.width = width; self.height = height }
}

public struct GeoPoint: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double
}

/// `GET /api/rest_v1/page/summary/{title}`; also the article objects inside the featured feed.
public struct PageSummary: Codable, Sendable, Equatable {
    public struct Namespace: Codable, Sendable, Equatable { public var id: Int; public var text: String? }
    public struct Titles: Codable, Sendable, Equatable { public var canonical: String?; public var normalized: String?; public var display: String? }
    public struct ContentURLs: Codable, Sendable, Equatable {
        public struct Links: Codable, Sendable, Equatable { public var page: String? }
        public var desktop: Links?
        public var mobile: Links?
    }

    /// `standard`, `disambiguation`, `mainpage` or `no-extract`.
    public var type: String?
    public var title: String
    public var displaytitle: String?
    public var namespace: Namespace?
    public var titles: Titles?
    public var pageid: Int?
    public var thumbnail: ImageRef?
    public var originalimage: ImageRef?
    public var lang: String?
    public var dir: String?
    public var description: String?
    public var coordinates: GeoPoint?
    public var contentURLs: ContentURLs?
    public var extract: String?
    public var extractHTML: String?
    public var timestamp: String?
    /// Most-read entries only.
    public var views: Int?
    public var rank: Int?

    enum CodingKeys: String, CodingKey {
        case type, title, displaytitle, namespace, titles, pageid, thumbnail, originalimage, lang, dir, description, coordinates
        case contentURLs = "content_urls", extract, extractHTML = "extract_html", timestamp, views, rank
    }
}

/// `GET /api/rest_v1/feed/featured/{yyyy}/{mm}/{dd}`. Any key may be missing.
public struct FeaturedFeed: Codable, Sendable, Equatable {
    public struct MostRead: Codable, Sendable, Equatable {
        public var date: String?
        public var articles: [PageSummary]
    }
    public struct TextAndHTML: Codable, Sendable, Equatable {
        public var text: String?
        public var html: String?
        public var lang: String?
    }
    public struct License: Codable, Sendable, Equatable {
        public var type: String?
        public var code: String?
        public var url: String?
    }
    public struct Structured: Codable, Sendable, Equatable {
        public var captions: [String: String]?
    }
    public struct PictureOfTheDay: Codable, Sendable, Equatable {
        public var title: String
        public var thumbnail: ImageRef?
        public var image: ImageRef?
        public var filePage: String?
        public var artist: TextAndHTML?
        public var credit: TextAndHTML?
        public var license: License?
        public var description: TextAndHTML?
        public var structured: Structured?
        enum CodingKeys: String, CodingKey {
            case title, thumbnail, image, filePage = "file_page", artist, credit, license, description, structured
        }
    }
    public struct NewsStory: Codable, Sendable, Equatable {
        public var story: String
        public var links: [PageSummary]?
    }
    public struct OnThisDayEvent: Codable, Sendable, Equatable {
        public var text: String
        public var year: Int?
        public var pages: [PageSummary]?
    }

    public var tfa: PageSummary?
    public var mostread: MostRead?
    public var image: PictureOfTheDay?
    public var news: [NewsStory]?
    public var onthisday: [OnThisDayEvent]?
}

/// A page of an Action API `query` with a generator (`morelike`, `random`, `geosearch`, `prefixsearch`, search).
public struct QueryPage: Codable, Sendable, Equatable {
    public struct Coordinate: Codable, Sendable, Equatable {
        public var lat: Double
        public var lon: Double
        public var dist: Double?
        public var primary: Bool?
    }
    public var pageid: Int?
    public var ns: Int
    public var title: String
    public var index: Int?
    /// Has the key `disambiguation` (value `""`) for a disambiguation page.
    public var pageprops: [String: String]?
    public var thumbnail: ImageRef?
    public var description: String?
    public var extract: String?
    public var coordinates: [Coordinate]?
    public var missing: Bool?

    public var isDisambiguation: Bool { pageprops?["disambiguation"] != nil }
}

public struct QueryResult: Sendable, Equatable {
    public struct Redirect: Codable, Sendable, Equatable { public var from: String; public var to: String }
    /// Pages in upstream's order (by `index` when present).
    public var pages: [QueryPage]
    public var redirects: [Redirect]
}

/// Echo notification in `notformat=model`.
public struct EchoNotification: Codable, Sendable, Equatable {
    public struct Timestamp: Codable, Sendable, Equatable {
        public var utciso8601: String?
        public var utcunix: Int?
    }
    public struct Title: Codable, Sendable, Equatable {
        public var full: String?
        public var namespace: String?
        public var text: String?
    }
    public struct Agent: Codable, Sendable, Equatable {
        public var id: Int?
        public var name: String?
    }
    public struct Link: Codable, Sendable, Equatable {
        public var url: String?
        public var label: String?
    }
    public struct Links: Codable, Sendable, Equatable {
        public var primary: Link?
        public var secondary: [Link]?
    }
    public struct Content: Codable, Sendable, Equatable {
        public var header: String?
        public var compactHeader: String?
        public var body: String?
        public var icon: String?
        public var links: Links?
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

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        wiki = try c.decodeIfPresent(String.self, forKey: .wiki)
        // `id` arrives as a number with formatversion=2, as a string with formatversion=1.
        if let n = try? c.decode(Int.self, forKey: .id) { id = n } else if let s = try? c.decode(String.self, forKey: .id), let n = Int(s) { id = n } else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: c, debugDescription: "notification id missing")
        }
        type = try c.decode(String.self, forKey: .type)
        category = try c.decodeIfPresent(String.self, forKey: .category)
        section = try c.decodeIfPresent(String.self, forKey: .section)
        timestamp = try c.decodeIfPresent(Timestamp.self, forKey: .timestamp)
        title = try c.decodeIfPresent(Title.self, forKey: .title)
        agent = try c.decodeIfPresent(Agent.self, forKey: .agent)
        read = try c.decodeIfPresent(String.self, forKey: .read)
        content = try c.decodeIfPresent(Content.self, forKey: .content)
    }
}

public struct NotificationPage: Sendable, Equatable {
    public var list: [EchoNotification]
    /// Upstream's display count, capped at `"99+"`.
    public var count: String?
    /// The exact unread count.
    public var rawcount: Int
    public var `continue`: String?
}

/// Action API envelopes (internal to decoding).
struct ActionEnvelope<Query: Decodable>: Decodable {
    var query: Query?
    var error: ActionError?
}

struct ActionError: Decodable, Sendable {
    var code: String
    var info: String?
}

struct PagesQuery: Decodable {
    var pages: [QueryPage]?
    var redirects: [QueryResult.Redirect]?
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
            list = try c.decodeIfPresent([EchoNotification].self, forKey: .list)
            // `count` is a string ("99+") in the real API; accept a number too.
            if let s = try? c.decode(String.self, forKey: .count) { count = s } else if let n = try? c.decode(Int.self, forKey: .count) { count = String(n) }
            rawcount = try c.decodeIfPresent(Int.self, forKey: .rawcount)
            self.continue = try c.decodeIfPresent(String.self, forKey: .continue)
        }
    }
    var notifications: Notifications?
}

struct TokensQuery: Decodable {
    struct Tokens: Decodable { var csrftoken: String? }
    var tokens: Tokens?
}

struct MarkReadQuery: Decodable {
    struct Result: Decodable { var result: String? }
    var echomarkread: Result?
}
