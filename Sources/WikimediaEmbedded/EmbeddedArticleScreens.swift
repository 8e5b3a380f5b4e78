import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The article screen's data for the embedded default: tables of contents, language links, galleries and file
/// credits for Albert Einstein, Amsterdam, Mumbai and Rijksmuseum (en, with contents and languages for de and it
/// too), and Dam Square with no images. Served in the real answer shapes (parse, langlinks, media-list, imageinfo).
enum EmbeddedArticleScreens {
    /// (toclevel, line with its markup as upstream sends it)
    typealias Heading = (level: Int, line: String)

    static let contents: [String: [String: [Heading]]] = [
        "en": [
            "Albert Einstein": [(1, "Life and career"), (2, "Early life"), (2, "<i>Annus mirabilis</i> papers"), (2, "Princeton"),
                                (1, "Scientific career"), (2, "Special relativity"), (2, "General relativity"), (3, "Gravitational waves"),
                                (1, "Legacy"), (1, "References")],
            "Amsterdam": [(1, "History"), (2, "Etymology"), (2, "Golden Age"), (1, "Geography"), (2, "Climate"), (1, "Culture"),
                          (2, "Museums"), (1, "Transport"), (1, "See also")],
            "Mumbai": [(1, "Etymology"), (1, "History"), (2, "Early history"), (2, "Modern history"), (1, "Geography"), (1, "Economy"), (1, "References")],
            "Rijksmuseum": [(1, "History"), (2, "1800–1885"), (2, "Renovation"), (1, "Collection"), (2, "<i>The Night Watch</i>"), (1, "Library")],
            "Dam Square": [(1, "History"), (1, "Buildings"), (1, "Events")],
        ],
        "de": [
            "Albert Einstein": [(1, "Leben"), (2, "Kindheit"), (1, "Werk"), (2, "Relativitätstheorie")],
            "Amsterdam": [(1, "Geographie"), (1, "Geschichte"), (1, "Kultur")],
        ],
        "it": [
            "Albert Einstein": [(1, "Biografia"), (1, "Opere"), (2, "Relatività")],
            "Amsterdam": [(1, "Storia"), (1, "Geografia"), (1, "Cultura")],
        ],
    ]

    /// (lang, title, autonym, English name) of the other editions.
    typealias Link = (lang: String, title: String, autonym: String, name: String)

    static let editions: [String: Link] = [
        "en": ("en", "", "English", "English"), "de": ("de", "", "Deutsch", "German"), "it": ("it", "", "italiano", "Italian"),
        "nl": ("nl", "", "Nederlands", "Dutch"), "fr": ("fr", "", "français", "French"), "es": ("es", "", "español", "Spanish"),
        "ja": ("ja", "", "日本語", "Japanese"), "hi": ("hi", "", "हिन्दी", "Hindi"), "mr": ("mr", "", "मराठी", "Marathi"),
        "ar": ("ar", "", "العربية", "Arabic"), "zh": ("zh", "", "中文", "Chinese"), "fy": ("fy", "", "Frysk", "Western Frisian"),
    ]

    static let titles: [String: [String: String]] = [
        "Albert Einstein": ["en": "Albert Einstein", "de": "Albert Einstein", "it": "Albert Einstein", "fr": "Albert Einstein", "es": "Albert Einstein",
                            "ja": "アルベルト・アインシュタイン", "ar": "ألبرت أينشتاين", "zh": "阿尔伯特·爱因斯坦"],
        "Amsterdam": ["en": "Amsterdam", "de": "Amsterdam", "it": "Amsterdam", "nl": "Amsterdam", "fr": "Amsterdam", "fy": "Amsterdam", "ja": "アムステルダム"],
        "Mumbai": ["en": "Mumbai", "de": "Mumbai", "it": "Mumbai", "hi": "मुंबई", "mr": "मुंबई", "fr": "Bombay"],
        "Rijksmuseum": ["en": "Rijksmuseum", "de": "Rijksmuseum", "it": "Rijksmuseum", "nl": "Rijksmuseum Amsterdam", "fr": "Rijksmuseum"],
        "Dam Square": ["en": "Dam Square", "nl": "Dam (Amsterdam)", "de": "Dam (Amsterdam)"],
    ]

    /// The editions an article exists in, other than `lang`, keyed by the English title.
    static func links(for title: String, lang: String) -> [Link]? {
        guard let english = englishTitle(title, lang: lang), let all = titles[english] else { return nil }
        return all.filter { $0.key != lang }.sorted { $0.key < $1.key }.compactMap { code, t in
            editions[code].map { (code, t, $0.autonym, $0.name) }
        }
    }

    static func englishTitle(_ title: String, lang: String) -> String? {
        titles.first { $0.value[lang] == title }?.key
    }

    /// A gallery file: (file name, type, caption, in the gallery, artist HTML, credit HTML, licence, licence URL, description HTML).
    struct File {
        var name: String
        var type = "image"
        var caption: String?
        var showInGallery = true
        var artist: String
        var credit: String
        var license: String
        var licenseURL: String?
        var description: String
        var attributionRequired = true
        var width = 2400, height = 1600
    }

    static let media: [String: [File]] = [
        "Albert Einstein": [
            File(name: "Albert_Einstein_Head.jpg", caption: "Einstein in 1947", artist: "<a href=\"//commons.wikimedia.org/wiki/User:Orren_Jack_Turner\" title=\"User:Orren Jack Turner\">Orren Jack Turner</a>, Princeton, N.J.",
                 credit: "<a rel=\"nofollow\" class=\"external text\" href=\"https://www.loc.gov/pictures/item/2004671908/\">Library of Congress</a>",
                 license: "Public domain", licenseURL: nil, description: "<span lang=\"en\">Albert Einstein, head-and-shoulders portrait, 1947 &amp; later.</span>",
                 attributionRequired: false, width: 2304, height: 3000),
            File(name: "Einstein_1921_by_F_Schmutzer_-_restoration.jpg", caption: "Einstein during a lecture in Vienna in 1921",
                 artist: "Ferdinand Schmutzer", credit: "Own work (restoration)", license: "Public domain", licenseURL: nil,
                 description: "Albert Einstein in 1921, photographed by <b>Ferdinand Schmutzer</b>.", attributionRequired: false, width: 3000, height: 3800),
            File(name: "Einstein_signature.svg", caption: nil, showInGallery: false, artist: "Albert Einstein", credit: "Traced", license: "Public domain",
                 licenseURL: nil, description: "Signature", attributionRequired: false, width: 512, height: 180),
            File(name: "Einstein_lecture_1934.webm", type: "video", caption: "A lecture recorded in 1934", artist: "Unknown author<br/>(Pathé)",
                 credit: "<a href=\"https://archive.org/\">Internet Archive</a>", license: "CC BY-SA 4.0",
                 licenseURL: "https://creativecommons.org/licenses/by-sa/4.0", description: "Film of a lecture &lt;1934&gt;", width: 640, height: 480),
        ],
        "Amsterdam": [
            File(name: "Amsterdam_Canals_-_July_2006.jpg", caption: "The canals of Amsterdam at dusk",
                 artist: "<a href=\"//commons.wikimedia.org/wiki/User:Massimo_Catarinella\">Massimo Catarinella</a>", credit: "Own work",
                 license: "CC BY-SA 3.0", licenseURL: "https://creativecommons.org/licenses/by-sa/3.0", description: "Canals in <i>Amsterdam</i>, July 2006"),
            File(name: "Flag_of_Amsterdam.svg", caption: "Flag", artist: "City of Amsterdam", credit: "Own work", license: "Public domain",
                 licenseURL: nil, description: "Flag of Amsterdam", attributionRequired: false, width: 900, height: 600),
        ],
        "Mumbai": [
            File(name: "Mumbai_skyline.jpg", caption: "The skyline of South Mumbai", artist: "Vinayaraj", credit: "Own work", license: "CC BY-SA 4.0",
                 licenseURL: "https://creativecommons.org/licenses/by-sa/4.0", description: "Mumbai skyline from Marine Drive"),
            File(name: "Gateway_of_India.jpg", caption: "The Gateway of India", artist: "<span class=\"fn\">Joe Ravi</span>",
                 credit: "Own work", license: "CC BY-SA 3.0", licenseURL: "https://creativecommons.org/licenses/by-sa/3.0", description: "Gateway of India, 2011"),
        ],
        "Rijksmuseum": [
            File(name: "Rijksmuseum_Amsterdam_2016.jpg", caption: "The museum building by Pierre Cuypers",
                 artist: "<a href=\"//commons.wikimedia.org/wiki/User:Diliff\">Diliff</a>", credit: "Own work", license: "CC BY-SA 4.0",
                 licenseURL: "https://creativecommons.org/licenses/by-sa/4.0", description: "The Rijksmuseum seen from the Museumplein"),
            File(name: "The_Night_Watch_-_HD.jpg", caption: "<i>The Night Watch</i> by Rembrandt", artist: "Rembrandt",
                 credit: "<a href=\"https://www.rijksmuseum.nl/\">Rijksmuseum</a>", license: "Public domain", licenseURL: nil,
                 description: "Militia Company of District II under the Command of Captain Frans Banninck Cocq", attributionRequired: false, width: 3000, height: 2500),
        ],
        "Dam Square": [],
    ]

    static func file(named name: String) -> File? {
        let key = ArticleTitle.normalise(name.hasPrefix("File:") ? String(name.dropFirst(5)) : name)
        for files in media.values { if let f = files.first(where: { $0.name == key }) { return f } }
        return nil
    }

    // MARK: - Answers

    static func parse(title: String, lang: String, articleExists: Bool) -> String {
        guard articleExists else { return "{\"error\":{\"code\":\"missingtitle\",\"info\":\"The page you specified doesn't exist.\"}}" }
        let headings = contents[lang]?[title] ?? []
        var counters: [Int] = []
        var sections: [String] = []
        for (i, h) in headings.enumerated() {
            if h.level > counters.count {
                while counters.count < h.level { counters.append(1) }
            } else {
                counters = Array(counters.prefix(h.level)); counters[h.level - 1] += 1
            }
            let number = counters.map(String.init).joined(separator: ".")
            let plain = HTMLText.plain(h.line)
            let anchor = plain.replacingOccurrences(of: " ", with: "_")
            sections.append("{\"toclevel\":\(h.level),\"level\":\"\(h.level + 1)\",\"line\":\(JSONText.quote(h.line)),\"number\":\"\(number)\",\"index\":\"\(i + 1)\",\"fromtitle\":\(JSONText.quote(title.replacingOccurrences(of: " ", with: "_"))),\"byteoffset\":\(1000 * (i + 1)),\"anchor\":\(JSONText.quote(anchor)),\"linkAnchor\":\(JSONText.quote(anchor))}")
        }
        return "{\"parse\":{\"title\":\(JSONText.quote(title)),\"pageid\":\(title.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFFF }),\"displaytitle\":\(JSONText.quote("<span class=\"mw-page-title-main\">\(title)</span>")),\"sections\":[\(sections.joined(separator: ","))]}}"
    }

    static func langlinks(title: String, lang: String, articleExists: Bool) -> String {
        guard articleExists else { return "{\"batchcomplete\":true,\"query\":{\"pages\":[{\"ns\":0,\"title\":\(JSONText.quote(title)),\"missing\":true}]}}" }
        let items = (links(for: title, lang: lang) ?? []).map { l in
            "{\"lang\":\"\(l.lang)\",\"url\":\(JSONText.quote("https://\(l.lang).wikipedia.org/wiki/" + UpstreamRequest.percentEncode(l.title.replacingOccurrences(of: " ", with: "_"), keep: ":()"))),\"langname\":\(JSONText.quote(l.name)),\"autonym\":\(JSONText.quote(l.autonym)),\"title\":\(JSONText.quote(l.title))}"
        }
        return "{\"batchcomplete\":true,\"query\":{\"pages\":[{\"pageid\":1,\"ns\":0,\"title\":\(JSONText.quote(title)),\"langlinks\":[\(items.joined(separator: ","))]}]}}"
    }

    static func mediaList(title: String, lang: String) -> String {
        let files = englishTitle(title, lang: lang).flatMap { media[$0] } ?? []
        let items = files.enumerated().map { i, f -> String in
            func thumb(_ width: Int) -> String { EmbeddedTransport.thumbnail(f.name, width: width)?.source.replacingOccurrences(of: "https:", with: "") ?? "" }
            let caption = f.caption.map { ",\"caption\":{\"html\":\(JSONText.quote($0)),\"text\":\(JSONText.quote(HTMLText.plain($0)))}" } ?? ""
            return "{\"title\":\(JSONText.quote("File:" + f.name)),\"leadImage\":\(i == 0),\"section_id\":0,\"type\":\"\(f.type)\",\"showInGallery\":\(f.showInGallery)\(caption),\"srcset\":[{\"src\":\(JSONText.quote(thumb(640))),\"scale\":\"1x\"},{\"src\":\(JSONText.quote(thumb(960))),\"scale\":\"1.5x\"},{\"src\":\(JSONText.quote(thumb(1280))),\"scale\":\"2x\"}]}"
        }
        return "{\"revision\":\"1234567\",\"tid\":\"00000000-0000-11ef-8000-000000000000\",\"items\":[\(items.joined(separator: ","))]}"
    }

    /// PCS's offline resources of a wiki's pages: meta's shared CSS and JavaScript, the wiki's own CSS and messages.
    static func offlineResources(lang: String) -> String {
        let meta = "//meta.wikimedia.org/api/rest_v1/data/", local = "//\(lang).wikipedia.org/api/rest_v1/data/"
        return "[\"\(meta)css/mobile/base\",\"\(meta)css/mobile/pcs\",\"\(meta)javascript/mobile/pcs\",\"\(local)css/mobile/site\",\"\(local)i18n/pcs\"]"
    }

    static func imageinfo(_ titles: [String]) -> String {
        let pages = titles.map { t -> String in
            let display = t.replacingOccurrences(of: "_", with: " ")
            guard let f = file(named: t) else { return "{\"ns\":6,\"title\":\(JSONText.quote(display)),\"missing\":true}" }
            func meta(_ value: String, _ source: String = "commons-desc-page") -> String { "{\"value\":\(JSONText.quote(value)),\"source\":\"\(source)\"}" }
            var m = ["\"Artist\":\(meta(f.artist))", "\"Credit\":\(meta(f.credit))", "\"LicenseShortName\":\(meta(f.license))",
                     "\"ImageDescription\":\(meta(f.description))", "\"AttributionRequired\":\(meta(f.attributionRequired ? "true" : "false"))"]
            if let u = f.licenseURL { m.append("\"LicenseUrl\":\(meta(u))") }
            let original = EmbeddedTransport.original(f.name)?.source ?? ""
            let thumb = EmbeddedTransport.thumbnail(f.name, width: 640)?.source ?? ""
            let thumbHeight = f.height * 640 / max(1, f.width)
            return "{\"ns\":6,\"title\":\(JSONText.quote("File:" + display.replacingOccurrences(of: "File:", with: ""))),\"missing\":true,\"known\":true,\"imagerepository\":\"shared\",\"imageinfo\":[{\"thumburl\":\(JSONText.quote(thumb)),\"thumbwidth\":640,\"thumbheight\":\(thumbHeight),\"url\":\(JSONText.quote(original)),\"descriptionurl\":\(JSONText.quote("https://commons.wikimedia.org/wiki/File:" + f.name)),\"width\":\(f.width),\"height\":\(f.height),\"extmetadata\":{\(m.joined(separator: ","))}}]}"
        }
        return "{\"batchcomplete\":true,\"query\":{\"pages\":[\(pages.joined(separator: ","))]}}"
    }

    /// Parsoid's HTML of an embedded article, as the real one is shaped for references: the lead with its citations,
    /// then the reference lists. Albert Einstein (en) has a `note` group and a note cited three times; Vondelpark has no
    /// references at all; every other article two references, a web one and a book.
    static func parsoidHTML(_ a: EmbeddedArticle, lang: String) -> String {
        let page = a.title.replacingOccurrences(of: " ", with: "_")
        func escape(_ t: String) -> String { t.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;") }
        func sup(_ ref: String, _ note: String, _ label: String) -> String {
            "<sup about=\"#mwt\(ref.count)\" class=\"mw-ref reference\" id=\"\(ref)\" rel=\"dc:references\" typeof=\"mw:Extension/ref\" data-mw='{\"name\":\"ref\"}'>"
                + "<a href=\"./\(page)#\(note)\"><span class=\"mw-reflink-text\"><span class=\"cite-bracket\">[</span>\(label)<span class=\"cite-bracket\">]</span></span></a></sup>"
        }
        func item(_ note: String, _ refs: [String], _ text: String) -> String {
            let back = refs.count == 1
                ? "<a href=\"./\(page)#\(refs[0])\" rel=\"mw:referencedBy\"><span class=\"mw-linkback-text\">↑ </span></a>"
                : "<span rel=\"mw:referencedBy\">" + refs.enumerated().map { "<a href=\"./\(page)#\($1)\"><span class=\"mw-linkback-text\">\($0 + 1) </span></a>" }.joined() + "</span>"
            return "<li about=\"#\(note)\" id=\"\(note)\"><span class=\"mw-cite-backlink\">\(back)</span> <span id=\"mw-reference-text-\(note)\" class=\"mw-reference-text reference-text\">\(text)</span></li>"
        }
        func list(_ heading: String, group: String?, _ items: [String]) -> String {
            "<section data-mw-section-id=\"9\"><h2 id=\"\(heading)\">\(heading)</h2><div class=\"mw-references-wrap\" typeof=\"mw:Extension/references\" data-mw='{\"name\":\"references\"}'>"
                + "<ol class=\"mw-references references\"\(group.map { " data-mw-group=\"\($0)\"" } ?? "")>" + items.joined() + "</ol></div></section>"
        }
        let head = "<!DOCTYPE html>\n<html prefix=\"dc: http://purl.org/dc/terms/ mw: http://mediawiki.org/rdf/\"><head><meta charset=\"utf-8\"/><title>\(escape(a.title))</title></head>"
            + "<body class=\"mw-content-ltr parsoid-body mediawiki mw-parser-output\" lang=\"\(lang)\"><section data-mw-section-id=\"0\"><p>"
        let web = { (site: String, title: String) in
            "<cite class=\"citation web cs1\">\"<a rel=\"mw:ExtLink\" href=\"https://\(site)/\(page)\" class=\"external text\">\(escape(title))</a>\". <i>\(site)</i>. Retrieved 2026-11-20.</cite>"
        }
        let book = "<cite class=\"citation book cs1\"><a rel=\"mw:WikiLink\" href=\"./Encyclopaedia_Britannica\">Encyclopædia Britannica</a> (2010). <i>\(escape(a.title))</i>. p. 12.</cite>"
        if a.title == "Vondelpark" { return head + escape(a.extract) + "</p></section></body></html>" }
        if a.title == "Albert Einstein", lang == "en" {
            var body = head + "<b>Albert Einstein</b> was a German-born theoretical physicist." + sup("cite_ref-Nobel_1-0", "cite_note-Nobel-1", "1")
            body += " He developed the theory of relativity." + sup("cite_ref-Nobel_1-1", "cite_note-Nobel-1", "1") + sup("cite_ref-Pais-2", "cite_note-Pais-2", "2")
            body += " He received the 1921 Nobel Prize in Physics." + sup("cite_ref-Nobel_1-2", "cite_note-Nobel-1", "1") + sup("cite_ref-note1", "cite_note-note1", "note 1")
            body += " His 1905 papers changed physics." + sup("cite_ref-3", "cite_note-3", "3") + "</p></section>"
            body += list("Notes", group: "note", [item("cite_note-note1", ["cite_ref-note1"], "The prize was awarded in 1922 for 1921; see <a rel=\"mw:WikiLink\" href=\"./Nobel_Prize_in_Physics\">Nobel Prize in Physics</a>.")])
            body += list("References", group: nil, [
                item("cite_note-Nobel-1", ["cite_ref-Nobel_1-0", "cite_ref-Nobel_1-1", "cite_ref-Nobel_1-2"], web("www.nobelprize.org", "The Nobel Prize in Physics 1921")),
                item("cite_note-Pais-2", ["cite_ref-Pais-2"], "<cite class=\"citation book cs1\"><a rel=\"mw:WikiLink\" href=\"./Abraham_Pais\">Pais, Abraham</a> (1982). <i>Subtle is the Lord: The Science and the Life of Albert Einstein</i>. Oxford University Press.</cite>"),
                item("cite_note-3", ["cite_ref-3"], "<cite class=\"citation journal cs1\">Einstein, Albert (1905). \"Zur Elektrodynamik bewegter Körper\". <i>Annalen der Physik</i>. <b>17</b> (10): 891–921. <a rel=\"mw:ExtLink\" href=\"//doi.org/10.1002/andp.19053221004\">doi:10.1002/andp.19053221004</a>.</cite>"),
            ])
            return body + "</body></html>"
        }
        var body = head + escape(a.extract) + sup("cite_ref-1", "cite_note-1", "1") + sup("cite_ref-2", "cite_note-2", "2") + "</p></section>"
        body += list(lang == "de" ? "Einzelnachweise" : (lang == "it" ? "Note" : "References"), group: nil, [
            item("cite_note-1", ["cite_ref-1"], web("www.britannica.com", a.title)),
            item("cite_note-2", ["cite_ref-2"], book),
        ])
        return body + "</body></html>"
    }
}
