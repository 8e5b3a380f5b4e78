import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// `GET /saved` (the Saved tab), `GET|PUT|DELETE /saved/{title}` (the bookmark), `DELETE /saved?confirm=all`. Every
/// route is the user's own: the client's Authorization goes to the reading lists unchanged, nothing is kept.
enum SavedRoutes {
    static let noStore = "private, no-store"
    /// The tab may be kept by the device and revalidated (its ETag names the list's state).
    static let revalidate = "private, no-cache"
    static let defaultLimit = 50, maxLimit = 200

    static func register(on router: Router, service: SavedService) {
        router.add("GET", "/saved", account: BearerAuthorization.required) { ctx in
            let auth: String, offset: Int, limit: Int, streamed: Bool
            auth = try BearerAuthorization.extract(ctx.credentials)
            limit = try Parameters.int(ctx.request, "limit", default: defaultLimit, range: 1...maxLimit)
            offset = try ctx.request.queryParameter("continue").map { raw in
                guard let o = SavedRules.offset(ofContinue: raw) else { throw bad(.problemContinueInvalid, "continue") }
                return o
            } ?? 0
            streamed = JSONLines.preferred(by: ctx.request)
            // A page this server wrote from the user's tab moments ago: answered on the loop, as a prepared body (its
            // ETag and 304 by the server, gzip made once).
            if !streamed, let tab = service.cachedTab(authorization: auth), let ready = service.cachedPage(tab, offset: offset, limit: limit) {
                return .response(.prepared(ready))
            }
            return Responses.async {
                let tab = try await service.readTab(authorization: auth)
                let page = Page(tab: tab, offset: offset, limit: limit)
                var headers = HTTPHeaders([("Cache-Control", revalidate), ("Vary", "Accept, Accept-Encoding, Authorization")])
                if !streamed {
                    if let ready = service.cachedPage(tab, offset: offset, limit: limit) { return .prepared(ready) }
                    var cards = service.warmCards(page.items)
                    try await service.fetchCards(page.items, known: Set(cards.keys)) { i, card in cards[i] = card }
                    let body = PreparedBody(contentType: "application/json", bytes: page.body(cards: cards), headers: headers)
                    // Kept only whole: a card that failed is asked for again by the next read.
                    if cards.count == page.items.count { service.keepPage(body, of: tab, offset: offset, limit: limit) }
                    return .prepared(body)
                }
                // JSON Lines: the head at once, every warm card with it, then each card as it lands.
                headers.set("Cache-Control", noStore)
                let warm = service.warmCards(page.items)
                var first = page.head()
                for i in page.items.indices { if let card = warm[i] { page.appendLine(i, card: card, to: &first) } }
                if warm.count == page.items.count {
                    return HTTPResponse(status: 200, contentType: JSONLines.mediaType, bytes: first, headers: headers)
                }
                let opening = first
                return .stream(contentType: JSONLines.mediaType, headers: headers) { body in
                    try await body.write(opening)
                    try await service.fetchCards(page.items, known: Set(warm.keys)) { i, card in
                        var line: [UInt8] = []
                        page.appendLine(i, card: card, to: &line)
                        try await body.write(line)
                    }
                }
            }
        }

        router.add("DELETE", "/saved", cost: Costs.write, account: BearerAuthorization.required) { ctx in
            let auth: String
            auth = try BearerAuthorization.extract(ctx.credentials)
            guard ctx.request.queryParameter("confirm") == "all" else {
                throw Problem(status: 400, slug: "invalid-parameter", .problemSavedConfirmAll, extensions: [("parameter", JSONText.quote("confirm"))])
            }
            return Responses.async {
                let removed = try await service.removeAll(authorization: auth)
                return Responses.json(bytes: Array("{\"removed\":\(removed)}".utf8), cacheControl: noStore)
            }
        }

        router.add("GET", "/saved/{title}", account: BearerAuthorization.required) { ctx in
            let auth: String, lang: LanguageCode, title: String
            (auth, lang, title) = try bookmark(ctx)
            return Responses.async {
                let tab = try await service.readTab(authorization: auth)
                return Responses.json(bytes: state(SavedRules.find(tab.items, lang: lang, title: title)), cacheControl: noStore)
            }
        }

        router.add("PUT", "/saved/{title}", cost: Costs.write, account: BearerAuthorization.required) { ctx in
            let auth: String, lang: LanguageCode, title: String
            (auth, lang, title) = try bookmark(ctx)
            return Responses.async {
                let (created, item) = try await service.save(authorization: auth, lang: lang, title: title)
                return Responses.json(bytes: state(item, saved: true), cacheControl: noStore, status: created ? 201 : 200)
            }
        }

        router.add("DELETE", "/saved/{title}", cost: Costs.write, account: BearerAuthorization.required) { ctx in
            let auth: String, lang: LanguageCode, title: String
            (auth, lang, title) = try bookmark(ctx)
            return Responses.async {
                try await service.remove(authorization: auth, lang: lang, title: title)
                return HTTPResponse(status: 204, headers: HTTPHeaders([("Cache-Control", noStore)]), body: .bytes([]))
            }
        }
    }

    /// What every bookmark route reads: the token, the edition, the title.
    static func bookmark(_ ctx: RequestContext) throws -> (String, LanguageCode, String) {
        (try BearerAuthorization.extract(ctx.credentials), try LanguageCode.resolve(ctx.request), try Parameters.articleTitle(ctx.parameter("title")))
    }

    /// `{"saved":…,"savedAt":…}` (savedAt only when saved and known).
    static func state(_ item: SavedRules.Item?, saved: Bool? = nil) -> [UInt8] {
        var out = Array("{\"saved\":\(saved ?? (item != nil))".utf8)
        if let at = item?.savedAt { out.append(contentsOf: ",\"savedAt\":".utf8); JSONText.appendQuoted(at, to: &out) }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// One page of the tab and how it is written (sorted keys, the cards' bytes as the summary cache holds them).
    struct Page: Sendable {
        let count: Int
        let syncEnabled: Bool
        let items: ArraySlice<SavedRules.Item>
        let next: String?

        init(tab: SavedService.Tab, offset: Int, limit: Int) {
            count = tab.items.count
            syncEnabled = tab.syncEnabled
            let start = min(offset, tab.items.count), end = min(tab.items.count, start + limit)
            items = tab.items[start..<end]
            next = end < tab.items.count ? SavedRules.continueToken(end) : nil
        }

        func body(cards: [Int: [UInt8]]) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(96 + items.count * 160 + cards.values.reduce(0) { $0 + $1.count })
            appendOpening(to: &out)
            out.append(contentsOf: "\"items\":[".utf8)
            for i in items.indices {
                if i > items.startIndex { out.append(44) }
                appendItem(i, card: cards[i], index: false, to: &out)
            }
            out.append(contentsOf: "],\"syncEnabled\":\(syncEnabled)}".utf8)
            return out
        }

        /// The streamed answer's first line: the page's facts without its items.
        func head() -> [UInt8] {
            var out: [UInt8] = []
            appendOpening(to: &out)
            out.append(contentsOf: "\"itemsInPage\":\(items.count),\"syncEnabled\":\(syncEnabled)}\n".utf8)
            return out
        }

        /// `{"continue":…,"count":N,` — what the classic answer and the streamed head both begin with.
        func appendOpening(to out: inout [UInt8]) {
            out.append(UInt8(ascii: "{"))
            if let next { out.append(contentsOf: "\"continue\":".utf8); JSONText.appendQuoted(next, to: &out); out.append(44) }
            out.append(contentsOf: "\"count\":\(count),".utf8)
        }

        func appendLine(_ i: Int, card: [UInt8]?, to out: inout [UInt8]) {
            appendItem(i, card: card, index: true, to: &out)
            out.append(10)
        }

        /// `{"card":…,"index"?:…,"lang":…,"savedAt":…,"title":…}`; `index` (0-based in the page) in a streamed line.
        func appendItem(_ i: Int, card: [UInt8]?, index: Bool, to out: inout [UInt8]) {
            let item = items[i]
            out.append(contentsOf: "{\"card\":".utf8)
            if let card { out.append(contentsOf: card) } else { out.append(contentsOf: "null".utf8) }
            if index { out.append(contentsOf: ",\"index\":\(i - items.startIndex)".utf8) }
            out.append(contentsOf: ",\"lang\":\"\(item.lang.code)\",\"savedAt\":".utf8)
            if let at = item.savedAt { JSONText.appendQuoted(at, to: &out) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: ",\"title\":".utf8)
            JSONText.appendQuoted(item.title, to: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    static func bad(_ key: MessageKey, _ parameters: String...) -> Problem { Problem(status: 400, slug: "invalid-saved-request", key, parameters: parameters) }
}
