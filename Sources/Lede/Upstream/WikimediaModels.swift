// Codable models of the Wikimedia response shapes Lede reads (REST v1 and the Action API, formatversion=2).
// Every key that upstream may drop is optional; unknown keys are ignored. Decoding is lenient (see
// Lenient.swift): the `init(from:)` of each model, in the extensions at the end, names the only fields it
// requires; the embedded default encodes the same models with the synthesised `encode(to:)`.

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
    /// Set by the client (not decoded) when the summary was reached through a redirect: the title asked for.
    public var redirectedFrom: String? = nil

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
    public var ns: Int?
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

    /// `ns` 0, or — when an answer left `ns` out — a title without a namespace prefix.
    public var isMainNamespace: Bool { ns.map { $0 == 0 } ?? !ArticleTitle.hasNamespacePrefix(title) }
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
    enum CodingKeys: String, CodingKey { case pages, redirects }
    /// Unreadable pages are skipped and counted under the call's kind.
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pages = c.lossyList(QueryPage.self, .pages, kind: decoder.skippedItems?.pagesKind ?? "pages", counter: decoder.skippedItems)
        redirects = c.lossyList(QueryResult.Redirect.self, .redirects, kind: "redirects", counter: nil)
    }
    init() {}
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

// MARK: - Lenient decoding (what each model requires, and nothing more)

extension ImageRef {
    enum CodingKeys: String, CodingKey { case source, width, height }
    /// Requires `source`; a size of another type is no size.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        source = try c.decode(String.self, forKey: .source)
        width = c.lenientInt(.width); height = c.lenientInt(.height)
    }
}

extension GeoPoint {
    enum CodingKeys: String, CodingKey { case lat, lon }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let lat = c.lenientDouble(.lat), let lon = c.lenientDouble(.lon), abs(lat) <= 90, abs(lon) <= 180 else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "no usable lat/lon"))
        }
        self.lat = lat; self.lon = lon
    }
}

extension PageSummary.Namespace {
    enum CodingKeys: String, CodingKey { case id, text }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let id = c.lenientInt(.id) else { throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "no namespace id")) }
        self.id = id; text = c.lenientString(.text)
    }
}

extension PageSummary.Titles {
    enum CodingKeys: String, CodingKey { case canonical, normalized, display }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        canonical = c.lenientString(.canonical, nonEmpty: true); normalized = c.lenientString(.normalized, nonEmpty: true)
        display = c.lenientString(.display, nonEmpty: true)
    }
}

extension PageSummary.ContentURLs {
    enum CodingKeys: String, CodingKey { case desktop, mobile }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        desktop = c.lenient(Links.self, .desktop); mobile = c.lenient(Links.self, .mobile)
    }
}

extension PageSummary.ContentURLs.Links {
    enum CodingKeys: String, CodingKey { case page }
    public init(from decoder: Decoder) throws {
        page = try decoder.container(keyedBy: CodingKeys.self).lenientString(.page, nonEmpty: true)
    }
}

extension PageSummary {
    /// Requires `title` (a non-empty string); everything else is optional and read leniently.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        title = try c.decode(String.self, forKey: .title)
        guard !title.isEmpty else { throw DecodingError.dataCorruptedError(forKey: .title, in: c, debugDescription: "empty title") }
        type = c.lenientString(.type, nonEmpty: true)
        displaytitle = c.lenientString(.displaytitle, nonEmpty: true)
        namespace = c.lenient(Namespace.self, .namespace)
        titles = c.lenient(Titles.self, .titles)
        pageid = c.lenientInt(.pageid)
        thumbnail = c.lenient(ImageRef.self, .thumbnail)
        originalimage = c.lenient(ImageRef.self, .originalimage)
        lang = c.lenientString(.lang, nonEmpty: true)
        dir = c.lenientString(.dir, nonEmpty: true)
        description = c.lenientString(.description, nonEmpty: true)
        coordinates = c.lenient(GeoPoint.self, .coordinates)
        contentURLs = c.lenient(ContentURLs.self, .contentURLs)
        extract = c.lenientString(.extract)
        extractHTML = c.lenientString(.extractHTML)
        timestamp = c.lenientString(.timestamp)
        views = c.lenientInt(.views)
        rank = c.lenientInt(.rank)
    }
}

extension FeaturedFeed.MostRead {
    enum CodingKeys: String, CodingKey { case date, articles }
    /// Requires `articles` to be a list; unreadable articles are skipped (`mostread`).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        date = c.lenientString(.date)
        guard let list = c.lossyList(PageSummary.self, .articles, kind: "mostread", counter: decoder.skippedItems) else {
            throw DecodingError.dataCorruptedError(forKey: .articles, in: c, debugDescription: "no articles list")
        }
        articles = list
    }
}

extension FeaturedFeed.TextAndHTML {
    enum CodingKeys: String, CodingKey { case text, html, lang }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        text = c.lenientString(.text); html = c.lenientString(.html); lang = c.lenientString(.lang, nonEmpty: true)
    }
}

extension FeaturedFeed.License {
    enum CodingKeys: String, CodingKey { case type, code, url }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = c.lenientString(.type, nonEmpty: true); code = c.lenientString(.code, nonEmpty: true); url = c.lenientString(.url, nonEmpty: true)
    }
}

extension FeaturedFeed.Structured {
    enum CodingKeys: String, CodingKey { case captions }
    /// Captions by language; a caption that is not a string is left out.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let byLang = try? c.nestedContainer(keyedBy: AnyCodingKey.self, forKey: .captions) else { captions = nil; return }
        var out: [String: String] = [:]
        for key in byLang.allKeys { if let text = byLang.lenientString(key, nonEmpty: true) { out[key.stringValue] = text } }
        captions = out
    }
}

extension FeaturedFeed.PictureOfTheDay {
    /// Requires `title`.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        title = try c.decode(String.self, forKey: .title)
        thumbnail = c.lenient(ImageRef.self, .thumbnail); image = c.lenient(ImageRef.self, .image)
        filePage = c.lenientString(.filePage, nonEmpty: true)
        artist = c.lenient(FeaturedFeed.TextAndHTML.self, .artist); credit = c.lenient(FeaturedFeed.TextAndHTML.self, .credit)
        license = c.lenient(FeaturedFeed.License.self, .license)
        description = c.lenient(FeaturedFeed.TextAndHTML.self, .description)
        structured = c.lenient(FeaturedFeed.Structured.self, .structured)
    }
}

extension FeaturedFeed.NewsStory {
    enum CodingKeys: String, CodingKey { case story, links }
    /// Requires `story`; unreadable links are skipped (`news`).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        story = try c.decode(String.self, forKey: .story)
        links = c.lossyList(PageSummary.self, .links, kind: "news", counter: decoder.skippedItems)
    }
}

extension FeaturedFeed.OnThisDayEvent {
    enum CodingKeys: String, CodingKey { case text, year, pages }
    /// Requires `text`; `year` may be a string; unreadable pages are skipped (`onthisday`).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        text = try c.decode(String.self, forKey: .text)
        year = c.lenientInt(.year)
        pages = c.lossyList(PageSummary.self, .pages, kind: "onthisday", counter: decoder.skippedItems)
    }
}

extension FeaturedFeed {
    enum CodingKeys: String, CodingKey { case tfa, mostread, image, news, onthisday }
    /// Any key may be missing (upstream drops the parts that failed); a part Lede cannot read counts as missing
    /// (`tfa`, `image`, `mostread`), and unreadable entries of the lists are skipped (`news`, `onthisday`).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let counter = decoder.skippedItems
        tfa = c.lenient(PageSummary.self, .tfa)
        if c.contains(.tfa), tfa == nil, (try? c.decodeNil(forKey: .tfa)) == false { counter?.add("featured", 1) }
        mostread = c.lenient(MostRead.self, .mostread)
        image = c.lenient(PictureOfTheDay.self, .image)
        if c.contains(.image), image == nil, (try? c.decodeNil(forKey: .image)) == false { counter?.add("image", 1) }
        news = c.lossyList(NewsStory.self, .news, kind: "news", counter: counter)
        onthisday = c.lossyList(OnThisDayEvent.self, .onthisday, kind: "onthisday", counter: counter)
    }
}

extension QueryPage.Coordinate {
    enum CodingKeys: String, CodingKey { case lat, lon, dist, primary }
    /// Requires a usable `lat` and `lon`; `primary` is not read (Lede does not use it, and formatversion=1
    /// sends it as `""`).
    public init(from decoder: Decoder) throws {
        let point = try GeoPoint(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        lat = point.lat; lon = point.lon
        dist = c.lenientDouble(.dist)
        primary = nil
    }
}

extension QueryPage {
    enum CodingKeys: String, CodingKey { case pageid, ns, title, index, pageprops, thumbnail, description, extract, coordinates, missing }
    /// Requires `title`. `ns` may be missing or a string; `pageprops` values may be of any type (only the
    /// keys matter); `missing` is a flag (`true` or `""`); coordinates that cannot be read are left out.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        title = try c.decode(String.self, forKey: .title)
        guard !title.isEmpty else { throw DecodingError.dataCorruptedError(forKey: .title, in: c, debugDescription: "empty title") }
        pageid = c.lenientInt(.pageid)
        ns = c.lenientInt(.ns)
        index = c.lenientInt(.index)
        if let props = try? c.nestedContainer(keyedBy: AnyCodingKey.self, forKey: .pageprops) {
            var out: [String: String] = [:]
            for key in props.allKeys { out[key.stringValue] = props.lenientString(key) ?? "" }
            pageprops = out
        } else {
            pageprops = nil
        }
        thumbnail = c.lenient(ImageRef.self, .thumbnail)
        description = c.lenientString(.description, nonEmpty: true)
        extract = c.lenientString(.extract)
        coordinates = c.lossyList(Coordinate.self, .coordinates, kind: "coordinates", counter: nil)
        missing = c.flag(.missing) ? true : nil
    }
}

extension QueryResult.Redirect {
    enum CodingKeys: String, CodingKey { case from, to }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        from = try c.decode(String.self, forKey: .from); to = try c.decode(String.self, forKey: .to)
    }
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
