import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// `GET /article/{title}`: the article screen in one call — its card, table of contents, the editions for the
/// language picker, the gallery with credits, Read more, and the URLs the web view loads. The parts are fetched
/// concurrently; a part that fails upstream is a placeholder and the rest still arrive.
enum ArticleScreen {
    // MARK: - Answer

    struct Body: Encodable {
        var card: Card
        /// The edition's main page (seed 000, Toolbar: no table of contents for it): then `sections` is ok and empty.
        var mainPage: Bool
        var sections: Part<Section>
        var languages: Part<Edition>
        var media: Part<Media>
        var readMore: Part<Card>
        /// The citation drawer's count; the drawer loads `/article/{title}/references` when opened.
        var references: ReferencesCount
        var urls: URLs
    }

    /// The `references` part: how many notes the page holds, or a placeholder.
    struct ReferencesCount: Encodable {
        var part: String?
        var status = "ok"
        var count: Int
        var reason: String?
        var retryAfterSeconds: Int?

        static func of(_ outcome: DeadlineOutcome<Int>) -> ReferencesCount {
            let placeholder = Part<Int>.of(outcome) { [$0] }
            return ReferencesCount(status: placeholder.status, count: placeholder.items.first ?? 0, reason: placeholder.reason,
                                   retryAfterSeconds: placeholder.retryAfterSeconds)
        }

        func line() -> [UInt8] {
            var named = self
            named.part = "references"
            return JSONLines.line(JSONLines.encode(named))
        }
        var isPlaceholder: Bool { status != "ok" }
    }

    /// The `editable` line of a streamed answer: whether the caller may edit the page, or a placeholder.
    struct EditablePart: Encodable {
        var part = "editable"
        var status = "ok"
        var editable: Bool?
        var reason: String?
        var retryAfterSeconds: Int?

        static func of(_ outcome: DeadlineOutcome<Bool>) -> EditablePart {
            if case .ok(let editable) = outcome { return EditablePart(editable: editable) }
            let placeholder = Part<Bool>.of(outcome) { [$0] }
            return EditablePart(status: placeholder.status, reason: placeholder.reason, retryAfterSeconds: placeholder.retryAfterSeconds)
        }

        func line() -> [UInt8] { JSONLines.line(JSONLines.encode(self)) }
    }

    /// A part of the screen: `ok` with its items, or a placeholder saying why and when to retry.
    struct Part<Item: Encodable>: Encodable {
        /// The part's name, on its own line of a streamed answer only.
        var part: String?
        var status = "ok"
        var items: [Item]
        var reason: String?
        var retryAfterSeconds: Int?

        /// The part for an upstream outcome: its items, or a placeholder with the feed's reasons and retry times.
        static func of<T: Sendable>(_ outcome: DeadlineOutcome<T>, _ items: (T) -> [Item]) -> Part {
            let status: FeedService.Status
            switch outcome {
            case .ok(let value): return Part(items: items(value))
            case .timeout: status = .timeout
            case .failed(let e): status = FeedService.Status(e)
            }
            var retry = retryAfter
            if case .backingOff(let seconds) = status { retry = seconds }
            return Part(status: "placeholder", items: [], reason: status.reason, retryAfterSeconds: retry)
        }

        /// This part as a line of a streamed answer (`part` names it).
        func line(_ name: String) -> [UInt8] {
            var named = self
            named.part = name
            return JSONLines.line(JSONLines.encode(named))
        }
        var isPlaceholder: Bool { status != "ok" }
    }
    static let retryAfter = 10

    struct Section: Encodable, Equatable {
        var id: Int
        var level: Int
        var number: String
        var title: String
        var anchor: String
    }

    struct Edition: Encodable, Equatable {
        var lang: String
        var title: String
        var autonym: String
        var url: String
    }

    struct Media: Encodable, Equatable {
        struct Size: Encodable, Equatable { var source: String; var width: Int?; var height: Int? }
        struct License: Encodable, Equatable { var name: String; var url: String? }
        var title: String
        var type: String
        var caption: String?
        var thumbnail: Size?
        var original: Size?
        var artist: String?
        var credit: String?
        var license: License?
        var attributionRequired: Bool?
        var description: String?

        enum CodingKeys: String, CodingKey { case title, type, caption, thumbnail, original, artist, credit, license, attributionRequired, description }
        /// Every member always present (`null` when upstream has nothing), like the card.
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(title, forKey: .title); try c.encode(type, forKey: .type); try c.encode(caption, forKey: .caption)
            try c.encode(thumbnail, forKey: .thumbnail); try c.encode(original, forKey: .original); try c.encode(artist, forKey: .artist)
            try c.encode(credit, forKey: .credit); try c.encode(license, forKey: .license)
            try c.encode(attributionRequired, forKey: .attributionRequired); try c.encode(description, forKey: .description)
        }
    }

    struct URLs: Encodable, Equatable { var mobileHtml: String; var desktop: String }

    // MARK: - Assembly

    /// The part names, in screen order: the head of a streamed answer announces them.
    static let partNames = ["sections", "languages", "media", "readMore", "references"]

    /// The upstream work of the parts besides the card, started at once and each bounded by `timeout`. Unstructured:
    /// work whose reader is gone goes on and fills the caches for the next request.
    struct PartWork: Sendable {
        let contents: Task<DeadlineOutcome<ArticleContents>, Never>
        let links: Task<DeadlineOutcome<[LanguageLink]>, Never>
        let gallery: Task<DeadlineOutcome<[Media]>, Never>
        let related: Task<DeadlineOutcome<QueryResult>, Never>
        let mainPage: Task<DeadlineOutcome<String>, Never>
        let references: Task<DeadlineOutcome<Int>, Never>
        /// Whether the caller may edit the page (the pencil): anonymous for the shared answer, the user's for a stream.
        let editable: Task<DeadlineOutcome<Bool>, Never>

        init(api: any WikimediaAPI, responses: UpstreamCache, lang: LanguageCode, title: String, timeout: Double, authorization: String? = nil,
             anonymousEdits: Bool) {
            contents = Task { await withDeadline(timeout) { try await api.articleContents(lang: lang, title: title) } }
            links = Task { await withDeadline(timeout) { try await api.languageLinks(lang: lang, title: title) } }
            gallery = Task { await withDeadline(timeout) { try await ArticleScreen.gallery(api: api, lang: lang, title: title) } }
            related = Task { await withDeadline(timeout) { try await api.related(lang: lang, title: title) } }
            mainPage = Task { await withDeadline(timeout) { try await api.mainPage(lang: lang) } }
            references = Task {
                await withDeadline(timeout) { try await ReferencesRoutes.built(api: api, responses: responses, lang: lang, title: title).count }
            }
            editable = Task { await withDeadline(timeout) { try await ArticleScreen.editable(api: api, responses: responses, lang: lang, title: title, authorization: authorization,
                                                                                         anonymousEdits: anonymousEdits) } }
        }
    }

    /// Whether `authorization` (nil: an anonymous reader) may edit the page, from the editor's `intestactions` answer, kept
    /// briefly per page and caller: a minute for anonymous readers, 30 s for a user (a block or a protection shows soon).
    /// Without an account, when this deployment sends no anonymous edits (`--anonymous-edits off`): false, asking no one.
    static func editable(api: any WikimediaAPI, responses: UpstreamCache, lang: LanguageCode, title: String, authorization: String?,
                         anonymousEdits: Bool) async throws -> Bool {
        if authorization == nil && !anonymousEdits { return false }
        let key = "editable:\(lang.code):\(ArticleTitle.normalise(title)):\(authorization ?? "")"
        return try await responses.value(key, ttl: authorization == nil ? 60 : 30) {
            (try await api.editPermission(lang: lang, title: title, authorization: authorization).canEdit, 64 + key.utf8.count)
        }
    }

    /// An encoded screen with its `editable` member set to `editable` (or removed when unknown): the member is written
    /// first (`{"editable":true,"card":…`), so the shared answer's bytes serve every user with one splice.
    static func settingEditable(_ bytes: [UInt8], _ editable: Bool?) -> [UInt8] {
        guard bytes.first == 123 else { return bytes }
        var rest = bytes[1...]
        for known in editableMembers where rest.starts(with: known) { rest = rest.dropFirst(known.count); break }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 20)
        out.append(123)
        if let editable { out.append(contentsOf: editable ? editableMembers[0] : editableMembers[1]) }
        out.append(contentsOf: rest)
        return out
    }
    static let editableMembers = [Array("\"editable\":true,".utf8), Array("\"editable\":false,".utf8)]

    /// The gallery: the files the page shows, with their sizes and credits (file info in batches).
    static func gallery(api: any WikimediaAPI, lang: LanguageCode, title: String) async throws -> [Media] {
        let files = galleryFiles(try await api.mediaList(lang: lang, title: title))
        var infos: [String: FileInfo] = [:]
        for batch in stride(from: 0, to: files.count, by: FileInfo.maxPerCall) {
            let titles = files[batch..<min(batch + FileInfo.maxPerCall, files.count)].map(\.title)
            infos.merge(try await api.fileInfo(lang: lang, files: titles)) { a, _ in a }
        }
        return files.filter { isLargeEnough($0, infos[$0.title]) }.map { media($0, infos[$0.title]) }
    }

    static func sectionsPart(_ work: PartWork, mainPage: Bool) async -> Part<Section> {
        mainPage ? Part(items: []) : Part.of(await work.contents.value, sections)
    }

    /// Whether the card is the edition's main page, as Wikimedia's siteinfo names it (never a hard-coded title; an
    /// edition whose siteinfo cannot be read has no main page here).
    static func isMainPage(_ work: PartWork, card: Card) async -> Bool {
        guard case .ok(let main) = await work.mainPage.value else { return false }
        return ArticleTitle.normalise(main) == ArticleTitle.normalise(card.title)
    }

    static func languagesPart(_ work: PartWork, lang: LanguageCode, preferred: [String]) async -> Part<Edition> {
        Part.of(await work.links.value) { editions($0, preferred: preferred.filter { $0 != lang.code }) }
    }

    static func mediaPart(_ work: PartWork) async -> Part<Media> { Part.of(await work.gallery.value) { $0 } }

    /// Read more: related articles, never the article itself. Reached through a redirect with nothing like the
    /// redirect's name: asked again for the article's own title.
    static func readMorePart(_ work: PartWork, api: any WikimediaAPI, card: Card, lang: LanguageCode, timeout: Double) async -> Part<Card> {
        var outcome = await work.related.value
        if card.redirectedFrom != nil, case .ok(let r) = outcome, r.pages.isEmpty,
           case .ok(let again) = await withDeadline(timeout, { try await api.related(lang: lang, title: card.title) }) {
            outcome = .ok(again)
        }
        return Part.of(outcome) { r in
            ContentRules.related(r, source: card.title, lang: lang, limit: 3).filter { ArticleTitle.normalise($0.title) != ArticleTitle.normalise(card.title) }
        }
    }

    /// Builds the screen; the card failing is the whole answer failing (404 for a missing page, else the upstream
    /// problem), any other part failing is a placeholder.
    static func build(api: any WikimediaAPI, responses: UpstreamCache, lang: LanguageCode, title: String, preferred: [String], timeout: Double,
                      anonymousEdits: Bool) async throws -> (Body, Bool?) {
        let work = PartWork(api: api, responses: responses, lang: lang, title: title, timeout: timeout, anonymousEdits: anonymousEdits)
        let card = Card(summary: try await api.summary(lang: lang, title: title), lang: lang)
        let readMore = await readMorePart(work, api: api, card: card, lang: lang, timeout: timeout)
        let main = await isMainPage(work, card: card)
        let body = Body(card: card, mainPage: main, sections: await sectionsPart(work, mainPage: main), languages: await languagesPart(work, lang: lang, preferred: preferred),
                        media: await mediaPart(work), readMore: readMore, references: ReferencesCount.of(await work.references.value),
                        urls: urls(lang: lang.code, title: card.title))
        guard case .ok(let editable) = await work.editable.value else { return (body, nil) }
        return (body, editable)
    }

    /// The head line of a streamed answer: the card, the URLs and the names of the parts that follow.
    struct StreamHead: Encodable {
        var card: Card
        var mainPage: Bool
        var parts: [String]
        var urls: URLs
    }

    /// `Accept: application/jsonl`: the card is awaited first (a missing page is still a 404 problem); then the head,
    /// then each part on its own line as it completes, each within the upstream deadline.
    static func stream(api: any WikimediaAPI, responses: UpstreamCache, lang: LanguageCode, title: String, preferred: [String], timeout: Double,
                       authorization: String?, anonymousEdits: Bool) async throws -> HTTPResponse {
        let work = PartWork(api: api, responses: responses, lang: lang, title: title, timeout: timeout, authorization: authorization,
                            anonymousEdits: anonymousEdits)
        let card = Card(summary: try await api.summary(lang: lang, title: title), lang: lang)
        let headers: HTTPHeaders = ["Cache-Control": "private, no-store", "Vary": "Accept, Accept-Encoding, Accept-Language, Authorization", "Content-Language": lang.bcp47]
        let main = await isMainPage(work, card: card)
        return .stream(contentType: JSONLines.mediaType, headers: headers) { body in
            let head = StreamHead(card: card, mainPage: main, parts: partNames + ["editable"], urls: urls(lang: lang.code, title: card.title))
            try await body.write(JSONLines.line(JSONLines.encode(head)))
            try await withThrowingTaskGroup(of: [UInt8].self) { group in
                group.addTask { await sectionsPart(work, mainPage: main).line("sections") }
                group.addTask { await languagesPart(work, lang: lang, preferred: preferred).line("languages") }
                group.addTask { await mediaPart(work).line("media") }
                group.addTask { await readMorePart(work, api: api, card: card, lang: lang, timeout: timeout).line("readMore") }
                group.addTask { ReferencesCount.of(await work.references.value).line() }
                group.addTask { EditablePart.of(await work.editable.value).line() }
                for try await line in group { try await body.write(line) }
            }
        }
    }

    /// An article screen as kept: the answer, the same bytes with a short lifetime for when it is served past its own
    /// (while its refresh runs; it shares the answer's bytes, so the cache counts them once), and when it was built.
    struct Kept: Sendable {
        var fresh: PreparedBody
        var stale: PreparedBody
        var builtAt: Double
        var complete: Bool
        /// Where its languages sit, for a reader's order (`EditionOrder`); nil for a placeholder.
        var order: EditionOrder?
    }

    /// A complete answer's lifetime; served up to as long again past it while one refresh runs.
    static let completeTTL = 300
    /// How old a complete answer may be and still stand in for a refresh that came back with placeholders: ten lifetimes.
    static let staleBound = Double(completeTTL * 10)
    /// The lifetime of an answer showing stale data, and of one with a placeholder.
    static let shortTTL = 5

    static func headers(lang: LanguageCode, maxAge: Int) -> HTTPHeaders {
        // Vary: Authorization — the shared answer is an anonymous reader's (`editable`); a user's is private.
        ["Cache-Control": "public, max-age=\(maxAge)", "Vary": "Accept, Accept-Encoding, Accept-Language, Authorization", "Content-Language": lang.bcp47]
    }

    /// Complete answers are kept 5 minutes (and served up to 5 more while rebuilt); one with a placeholder only a few
    /// seconds (like the feed), never stale. A refresh (`previous` is the answer it refreshes) that comes back with a
    /// placeholder keeps the previous complete answer instead while it is younger than `staleBound`.
    static func prepare(api: any WikimediaAPI, lang: LanguageCode, title: String, preferred: [String], timeout: Double,
                        responses: UpstreamCache, key: String, previous: Kept? = nil, anonymousEdits: Bool) async throws -> PreparedBody {
        try await keep(api: api, lang: lang, title: title, preferred: preferred, timeout: timeout, responses: responses, key: key,
                       previous: previous, anonymousEdits: anonymousEdits).fresh
    }

    /// `prepare`'s answer as it is kept (both lifetimes, and where its languages sit).
    static func keep(api: any WikimediaAPI, lang: LanguageCode, title: String, preferred: [String], timeout: Double,
                     responses: UpstreamCache, key: String, previous: Kept? = nil, anonymousEdits: Bool) async throws -> Kept {
        let (body, editable) = try await build(api: api, responses: responses, lang: lang, title: title, preferred: preferred, timeout: timeout,
                                               anonymousEdits: anonymousEdits)
        let complete = !(body.sections.isPlaceholder || body.languages.isPlaceholder || body.media.isPlaceholder || body.readMore.isPlaceholder
                         || body.references.isPlaceholder)
        let now = Date().timeIntervalSinceReferenceDate
        if !complete, let previous, previous.complete, now - previous.builtAt <= staleBound {
            // The last good answer stays, briefly fresh (with the short lifetime), and is refreshed again after that.
            let kept = Kept(fresh: previous.stale, stale: previous.stale, builtAt: previous.builtAt, complete: true, order: previous.order)
            responses.insert(key, kept, cost: Responses.cost(of: previous.fresh), ttl: Double(shortTTL), staleFor: Double(completeTTL))
            return kept
        }
        let ttl = complete ? completeTTL : shortTTL
        let encoded = settingEditable([UInt8]((try? Responses.encoder.encode(body)) ?? Data("{}".utf8)), editable)
        let fresh = PreparedBody(contentType: "application/json", bytes: encoded, headers: headers(lang: lang, maxAge: ttl))
        let kept = Kept(fresh: fresh, stale: complete ? PreparedBody(fresh, headers: headers(lang: lang, maxAge: shortTTL)) : fresh, builtAt: now, complete: complete,
                        order: EditionOrder(encoded, codes: body.languages.items.map(\.lang)))
        responses.insert(key, kept, cost: Responses.cost(of: fresh), ttl: Double(ttl), staleFor: complete ? Double(completeTTL) : 0)
        return kept
    }
}
