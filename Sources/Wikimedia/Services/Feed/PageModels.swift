import LedeBasics
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

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = lon
    }
}

/// `GET /api/rest_v1/page/summary/{title}`; also the article objects inside the featured feed.
public struct PageSummary: Codable, Sendable, Equatable {
    public struct Namespace: Codable, Sendable, Equatable {
        public var id: Int; public var text: String?
        package init(id: Int, text: String? = nil) { self.id = id; self.text = text }
    }
    public struct Titles: Codable, Sendable, Equatable {
        public var canonical: String?; public var normalized: String?; public var display: String?
        package init(canonical: String? = nil, normalized: String? = nil, display: String? = nil) {
            self.canonical = canonical; self.normalized = normalized; self.display = display
        }
    }
    public struct ContentURLs: Codable, Sendable, Equatable {
        public struct Links: Codable, Sendable, Equatable {
            public var page: String?
            package init(page: String? = nil) { self.page = page }
        }
        public var desktop: Links?
        public var mobile: Links?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(desktop: Links? = nil, mobile: Links? = nil) {
            self.desktop = desktop
            self.mobile = mobile
        }
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

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(type: String? = nil, title: String, displaytitle: String? = nil, namespace: Namespace? = nil, titles: Titles? = nil, pageid: Int? = nil, thumbnail: ImageRef? = nil, originalimage: ImageRef? = nil, lang: String? = nil, dir: String? = nil, description: String? = nil, coordinates: GeoPoint? = nil, contentURLs: ContentURLs? = nil, extract: String? = nil, extractHTML: String? = nil, timestamp: String? = nil, views: Int? = nil, rank: Int? = nil, redirectedFrom: String? = nil) {
        self.type = type
        self.title = title
        self.displaytitle = displaytitle
        self.namespace = namespace
        self.titles = titles
        self.pageid = pageid
        self.thumbnail = thumbnail
        self.originalimage = originalimage
        self.lang = lang
        self.dir = dir
        self.description = description
        self.coordinates = coordinates
        self.contentURLs = contentURLs
        self.extract = extract
        self.extractHTML = extractHTML
        self.timestamp = timestamp
        self.views = views
        self.rank = rank
        self.redirectedFrom = redirectedFrom
    }
}

/// `GET /api/rest_v1/feed/featured/{yyyy}/{mm}/{dd}`. Any key may be missing.
public struct FeaturedFeed: Codable, Sendable, Equatable {
    public struct MostRead: Codable, Sendable, Equatable {
        public var date: String?
        public var articles: [PageSummary]

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(date: String? = nil, articles: [PageSummary]) {
            self.date = date
            self.articles = articles
        }
    }
    public struct TextAndHTML: Codable, Sendable, Equatable {
        public var text: String?
        public var html: String?
        public var lang: String?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(text: String? = nil, html: String? = nil, lang: String? = nil) {
            self.text = text
            self.html = html
            self.lang = lang
        }
    }
    public struct License: Codable, Sendable, Equatable {
        public var type: String?
        public var code: String?
        public var url: String?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(type: String? = nil, code: String? = nil, url: String? = nil) {
            self.type = type
            self.code = code
            self.url = url
        }
    }
    public struct Structured: Codable, Sendable, Equatable {
        public var captions: [String: String]?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(captions: [String: String]? = nil) {
            self.captions = captions
        }
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

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(title: String, thumbnail: ImageRef? = nil, image: ImageRef? = nil, filePage: String? = nil, artist: TextAndHTML? = nil, credit: TextAndHTML? = nil, license: License? = nil, description: TextAndHTML? = nil, structured: Structured? = nil) {
            self.title = title
            self.thumbnail = thumbnail
            self.image = image
            self.filePage = filePage
            self.artist = artist
            self.credit = credit
            self.license = license
            self.description = description
            self.structured = structured
        }
    }
    public struct NewsStory: Codable, Sendable, Equatable {
        public var story: String
        public var links: [PageSummary]?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(story: String, links: [PageSummary]? = nil) {
            self.story = story
            self.links = links
        }
    }
    public struct OnThisDayEvent: Codable, Sendable, Equatable {
        public var text: String
        public var year: Int?
        public var pages: [PageSummary]?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(text: String, year: Int? = nil, pages: [PageSummary]? = nil) {
            self.text = text
            self.year = year
            self.pages = pages
        }
    }

    public var tfa: PageSummary?
    public var mostread: MostRead?
    public var image: PictureOfTheDay?
    public var news: [NewsStory]?
    public var onthisday: [OnThisDayEvent]?

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(tfa: PageSummary? = nil, mostread: MostRead? = nil, image: PictureOfTheDay? = nil, news: [NewsStory]? = nil, onthisday: [OnThisDayEvent]? = nil) {
        self.tfa = tfa
        self.mostread = mostread
        self.image = image
        self.news = news
        self.onthisday = onthisday
    }
}

/// A page of an Action API `query` with a generator (`morelike`, `random`, `geosearch`, `prefixsearch`, search).
public struct QueryPage: Codable, Sendable, Equatable {
    public struct Coordinate: Codable, Sendable, Equatable {
        public var lat: Double
        public var lon: Double
        public var dist: Double?
        public var primary: Bool?

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(lat: Double, lon: Double, dist: Double? = nil, primary: Bool? = nil) {
            self.lat = lat
            self.lon = lon
            self.dist = dist
            self.primary = primary
        }
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

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(pageid: Int? = nil, ns: Int? = nil, title: String, index: Int? = nil, pageprops: [String: String]? = nil, thumbnail: ImageRef? = nil, description: String? = nil, extract: String? = nil, coordinates: [Coordinate]? = nil, missing: Bool? = nil) {
        self.pageid = pageid
        self.ns = ns
        self.title = title
        self.index = index
        self.pageprops = pageprops
        self.thumbnail = thumbnail
        self.description = description
        self.extract = extract
        self.coordinates = coordinates
        self.missing = missing
    }
}

public struct QueryResult: Sendable, Equatable {
    public struct Redirect: Codable, Sendable, Equatable {
        public var from: String; public var to: String
        package init(from: String, to: String) { self.from = from; self.to = to }
    }
    /// Pages in upstream's order (by `index` when present).
    public var pages: [QueryPage]
    public var redirects: [Redirect]

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(pages: [QueryPage], redirects: [Redirect]) {
        self.pages = pages
        self.redirects = redirects
    }
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

