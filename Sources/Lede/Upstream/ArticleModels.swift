import Foundation

// The article screen's upstream answers (docs/UPSTREAM.md: article contents, languages, media, file credits),
// read leniently like the others: one unreadable item is skipped, optional fields of another type are absent.

/// `action=parse&prop=sections|displaytitle`: the table of contents.
public struct ArticleContents: Sendable, Equatable {
    public struct Section: Sendable, Equatable {
        /// `index`: the section's number in the wikitext (`"3"`, or `"T-1"` for a transcluded one).
        public var index: String?
        /// Heading level (2 = `==`), and the level in the table of contents (1 = top).
        public var level: Int?
        public var tocLevel: Int
        public var number: String
        /// May hold markup (`<i>…</i>`).
        public var line: String
        public var anchor: String
    }
    public var title: String
    public var displayTitle: String?
    public var sections: [Section]
}

/// One edition an article exists in (`prop=langlinks` with `llprop=url|langname|autonym`).
public struct LanguageLink: Sendable, Equatable {
    public var lang: String
    public var title: String
    public var url: String?
    public var langname: String?
    public var autonym: String?
}

/// One entry of `page/media-list`.
public struct MediaListItem: Sendable, Equatable {
    public var title: String
    public var type: String
    public var showInGallery: Bool
    public var leadImage: Bool
    public var captionHTML: String?
    public var captionText: String?
    /// The 1x `srcset` entry, protocol-relative as upstream sends it.
    public var src: String?
}

/// `prop=imageinfo&iiprop=url|size|extmetadata`: one file's sizes and its description page's credits (HTML values).
public struct FileInfo: Sendable, Equatable {
    public var title: String
    public var url: String?
    public var width: Int?
    public var height: Int?
    public var thumbURL: String?
    public var thumbWidth: Int?
    public var thumbHeight: Int?
    public var descriptionURL: String?
    public var metadata: [String: String]
}

// MARK: - Decoding

struct ParseAnswer: Decodable {
    var parse: Parse?
    var error: ActionError?
    struct Parse: Decodable {
        var title: String?
        var displaytitle: String?
        var sections: [ArticleContents.Section]?
        enum CodingKeys: String, CodingKey { case title, displaytitle, sections }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            title = c.lenientString(.title, nonEmpty: true)
            displaytitle = c.lenientString(.displaytitle, nonEmpty: true)
            sections = c.lossyList(ArticleContents.Section.self, .sections, kind: "section", counter: decoder.skippedItems)
        }
    }
}

extension ArticleContents.Section: Decodable {
    enum CodingKeys: String, CodingKey { case index, level, toclevel, number, line, anchor }
    /// `level` is a string with formatversion=2 (`"2"`), `toclevel` a number; both read either way.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let tocLevel = c.lenientInt(.toclevel), let number = c.lenientString(.number, nonEmpty: true),
              let line = c.lenientString(.line), let anchor = c.lenientString(.anchor, nonEmpty: true) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "section without toclevel, number, line or anchor"))
        }
        self.init(index: c.lenientString(.index, nonEmpty: true) ?? c.lenientInt(.index).map(String.init), level: c.lenientInt(.level),
                  tocLevel: tocLevel, number: number, line: line, anchor: anchor)
    }
}

struct LangLinksQuery: Decodable {
    struct Page: Decodable {
        var title: String?
        var missing: Bool
        var invalid: Bool
        var langlinks: [LanguageLink]?
        enum CodingKeys: String, CodingKey { case title, missing, invalid, langlinks }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            title = c.lenientString(.title, nonEmpty: true)
            missing = c.flag(.missing); invalid = c.flag(.invalid)
            langlinks = c.lossyList(LanguageLink.self, .langlinks, kind: "langlink", counter: decoder.skippedItems)
        }
    }
    var pages: [Page]?
    enum CodingKeys: String, CodingKey { case pages }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pages = c.lossyList(Page.self, .pages, kind: "page", counter: decoder.skippedItems)
    }
}

extension LanguageLink: Decodable {
    /// formatversion=2 sends the title as `title`; formatversion=1 as `*`.
    enum CodingKeys: String, CodingKey { case lang, title, star = "*", url, langname, autonym }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let lang = c.lenientString(.lang, nonEmpty: true), let title = c.lenientString(.title, nonEmpty: true) ?? c.lenientString(.star, nonEmpty: true) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "langlink without lang or title"))
        }
        self.init(lang: lang, title: title, url: c.lenientString(.url, nonEmpty: true),
                  langname: c.lenientString(.langname, nonEmpty: true), autonym: c.lenientString(.autonym, nonEmpty: true))
    }
}

struct MediaListAnswer: Decodable {
    var items: [MediaListItem]?
    enum CodingKeys: String, CodingKey { case items }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        items = c.lossyList(MediaListItem.self, .items, kind: "media", counter: decoder.skippedItems)
    }
}

extension MediaListItem: Decodable {
    enum CodingKeys: String, CodingKey { case title, type, showInGallery, leadImage, caption, srcset }
    struct Caption: Decodable { var html: String?; var text: String? }
    struct Source: Decodable { var src: String?; var scale: String? }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let title = c.lenientString(.title, nonEmpty: true) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "media item without a title"))
        }
        let caption = c.lenient(Caption.self, .caption)
        let sources = c.lossyList(Source.self, .srcset, kind: "srcset", counter: nil) ?? []
        let src = (sources.first { $0.scale == "1x" } ?? sources.first)?.src
        self.init(title: title, type: c.lenientString(.type) ?? "image", showInGallery: c.lenientBool(.showInGallery) ?? true,
                  leadImage: c.lenientBool(.leadImage) ?? false, captionHTML: caption?.html, captionText: caption?.text, src: src)
    }
}

struct ImageInfoQuery: Decodable {
    var pages: [FileInfo]?
    enum CodingKeys: String, CodingKey { case pages }
    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        pages = c.lossyList(FileInfo.self, .pages, kind: "file", counter: decoder.skippedItems)
    }
}

extension FileInfo: Decodable {
    enum CodingKeys: String, CodingKey { case title, imageinfo }
    struct Info: Decodable {
        var url: String?, width: Int?, height: Int?, thumbURL: String?, thumbWidth: Int?, thumbHeight: Int?, descriptionURL: String?
        var metadata: [String: String] = [:]
        enum CodingKeys: String, CodingKey { case url, width, height, thumburl, thumbwidth, thumbheight, descriptionurl, extmetadata }
        struct Value: Decodable {
            var value: String?
            enum CodingKeys: String, CodingKey { case value }
            /// Values are strings, sometimes numbers or booleans; read as text.
            init(from decoder: Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                value = c.lenientString(.value) ?? c.lenientDouble(.value).map { JSONNumber.text($0) } ?? c.lenientBool(.value).map { $0 ? "true" : "false" }
            }
        }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            url = c.lenientString(.url, nonEmpty: true); width = c.lenientInt(.width); height = c.lenientInt(.height)
            thumbURL = c.lenientString(.thumburl, nonEmpty: true); thumbWidth = c.lenientInt(.thumbwidth); thumbHeight = c.lenientInt(.thumbheight)
            descriptionURL = c.lenientString(.descriptionurl, nonEmpty: true)
            for (k, v) in c.lenient([String: Lossy<Value>].self, .extmetadata) ?? [:] { if let text = v.value?.value { metadata[k] = text } }
        }
    }
    /// Files shared from Commons come as `"missing": true, "known": true` with their imageinfo: kept.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let title = c.lenientString(.title, nonEmpty: true) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "file without a title"))
        }
        let info = (c.lossyList(Info.self, .imageinfo, kind: "imageinfo", counter: nil) ?? []).first
        self.init(title: title, url: info?.url, width: info?.width, height: info?.height, thumbURL: info?.thumbURL, thumbWidth: info?.thumbWidth,
                  thumbHeight: info?.thumbHeight, descriptionURL: info?.descriptionURL, metadata: info?.metadata ?? [:])
    }
}

/// `meta=siteinfo&siprop=general`: the edition's main page, among much else left unread.
struct SiteInfoQuery: Decodable {
    struct General: Decodable, Sendable {
        var mainpage: String?
        /// `readinglists-config.maxEntriesPerList`, on wikis with the ReadingLists extension.
        var maxEntriesPerList: Int?
        enum CodingKeys: String, CodingKey { case mainpage, readinglists = "readinglists-config" }
        struct ReadingListsConfig: Decodable {
            var maxEntriesPerList: Int?
            enum CodingKeys: String, CodingKey { case maxEntriesPerList }
            init(from decoder: Decoder) throws { maxEntriesPerList = try decoder.container(keyedBy: CodingKeys.self).lenientInt(.maxEntriesPerList) }
        }
        init(mainpage: String?, maxEntriesPerList: Int? = nil) { self.mainpage = mainpage; self.maxEntriesPerList = maxEntriesPerList }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            mainpage = c.lenientString(.mainpage)
            maxEntriesPerList = c.lenient(ReadingListsConfig.self, .readinglists)?.maxEntriesPerList
        }
    }
    var general: General?
}
