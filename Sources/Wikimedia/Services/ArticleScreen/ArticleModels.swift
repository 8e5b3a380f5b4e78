import LedeBasics
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

        /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
        package init(index: String? = nil, level: Int? = nil, tocLevel: Int, number: String, line: String, anchor: String) {
            self.index = index
            self.level = level
            self.tocLevel = tocLevel
            self.number = number
            self.line = line
            self.anchor = anchor
        }
    }
    public var title: String
    public var displayTitle: String?
    public var sections: [Section]

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(title: String, displayTitle: String? = nil, sections: [Section]) {
        self.title = title
        self.displayTitle = displayTitle
        self.sections = sections
    }
}

/// One edition an article exists in (`prop=langlinks` with `llprop=url|langname|autonym`).
public struct LanguageLink: Sendable, Equatable {
    public var lang: String
    public var title: String
    public var url: String?
    public var langname: String?
    public var autonym: String?

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(lang: String, title: String, url: String? = nil, langname: String? = nil, autonym: String? = nil) {
        self.lang = lang
        self.title = title
        self.url = url
        self.langname = langname
        self.autonym = autonym
    }
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
