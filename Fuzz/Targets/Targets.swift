#if LEDE_FUZZ_TESTABLE
import EventLoops
@testable import HTTPClient
@testable import HTTPServer
@testable import Lede
import Dispatch
import Foundation
import Imaging
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
import HTTPCore
import Upstream

/// A fuzz target: any bytes in; a finding is a trap (a failed precondition, a sanitizer report, a crash, a hang).
struct FuzzTarget: Sendable {
    let name: String
    let about: String
    let run: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
}

/// Every reader of what the network sends, and the writers whose framing no byte of data may break.
let fuzzTargets: [FuzzTarget] = [
    FuzzTarget(name: "request", about: "the HTTP request parser, input cut into pieces by its first byte", run: fuzzRequest),
    FuzzTarget(name: "response", about: "the upstream response parser: pieces, HEAD, 1xx, the body cap; pieces never change the outcome", run: fuzzResponse),
    FuzzTarget(name: "json", about: "JSONPaths against StrictJSON: accepted exactly when RFC 8259 JSON (paths asked or none), the same values at every path", run: fuzzJSON),
    FuzzTarget(name: "text", about: "the text rules: pronunciation stripping (text and HTML), HTML to plain text", run: fuzzText),
    FuzzTarget(name: "inflate", about: "the gzip/zlib inflater: a cap that holds, pieces equal to the whole", run: fuzzInflate),
    FuzzTarget(name: "decoders", about: "every Wikimedia decoder through WikimediaClient: a value or a clean UpstreamError; what Lede writes from it is JSON", run: fuzzDecoders),
    FuzzTarget(name: "deeplink", about: "article URLs clients send, and the places file", run: fuzzDeepLink),
    FuzzTarget(name: "sse", about: "server-sent events: a WHATWG parser reads back exactly the event written", run: fuzzSSE),
    FuzzTarget(name: "jsonl", about: "JSON Lines: any text in a card or a notification stays one line of valid JSON", run: fuzzJSONLines),
    FuzzTarget(name: "references", about: "the Parsoid reference scanner: every note in one list, every citation's note real, inline HTML only, valid JSON", run: fuzzReferences),
    FuzzTarget(name: "image", about: "the lead image's header reader and the capped JPEG decoder: a size or nil, an image or a clean refusal, nothing decoded past the cap", run: fuzzImage),
]

// MARK: - Lead images

func fuzzImage(_ bytes: UnsafeBufferPointer<UInt8>) {
    let header = ImageHeader.read(bytes)
    if let header { check(header.format == .webp || (header.width > 0 && header.height > 0), "a size of zero read as an image") }
    // Small caps keep each input fast; a header over the cap must be refused before decoding.
    let cap = 1 << 18
    let data = Array(bytes)
    do throws(JPEG.Failure) {
        let image = try JPEG.decode(data, maxPixels: cap)
        check(header?.format == .jpeg, "decoded what the header reader does not call a JPEG")
        check(image.width * image.height <= cap && image.pixels.count == image.width * image.height * 3, "an image past the cap or of the wrong size")
    } catch {
        switch error {
        case .tooLarge(let w, let h): check(w * h > cap, "refused as too large at \(w)×\(h)")
        case .unreadable: break
        }
    }
}

func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("finding: " + message()) }
}

// MARK: - HTTP

func fuzzRequest(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let first = bytes.first else { return }
    let piece = Int(first % 32) + 1
    let input = bytes.dropFirst()
    var parser = RequestParser(limits: ParserLimits(maxRequestLine: 512, maxHeaderBytes: 2048, maxBody: 8192))
    var offset = input.startIndex
    var steps = 0
    outer: while offset < input.endIndex {
        let end = min(input.endIndex, offset + piece)
        parser.append(input[offset..<end])
        offset = end
        while true {
            steps += 1
            check(steps <= 100_000, "the request parser made no progress")
            switch parser.next() {
            case .needMore: continue outer
            case .continueRequested: continue
            case .request(let r):
                check(!r.method.isEmpty && (r.path == "*" || r.path.hasPrefix("/")), "invalid request accepted")
                check(r.body.count <= 8192, "body over the limit")
                if r.path != "*" {
                    for seg in Array(r.path.utf8).split(separator: 47, omittingEmptySubsequences: false).dropFirst() {
                        check((try? RequestParser.decodeSegment(Array(seg))) != nil, "an accepted path does not decode")
                    }
                    _ = r.pathSegments
                }
            case .error(let e):
                check([400, 413, 414, 417, 431, 501, 505].contains(e.status), "unexpected status \(e.status)")
                if case .error = parser.next() {} else { fatalError("finding: the request parser recovered after an error") }
                break outer
            }
        }
    }
}

/// The response parser's outcome: what a client would act on.
struct ResponseOutcome: Equatable {
    var head: ResponseHead?
    var body: [UInt8]
    var keepAlive: Bool
    var error: ResponseError?
}

func parseResponse(_ input: ArraySlice<UInt8>, piece: Int, head: Bool, maxBody: Int) -> ResponseOutcome {
    var p = ResponseParser(limits: .init(maxBody: maxBody), requestWasHead: head)
    var offset = input.startIndex
    var complete = false
    do {
        // Every piece is fed, after the end too: bytes past a complete response are what make it not reusable.
        while offset < input.endIndex {
            let end = min(input.endIndex, offset + piece)
            complete = try input[offset..<end].withUnsafeBytes { try p.feed($0) }
            offset = end
        }
        if !complete { try p.finish() }
        return ResponseOutcome(head: p.head, body: p.body, keepAlive: p.keepAlive && !p.hasLeftover, error: nil)
    } catch let error as ResponseError {
        return ResponseOutcome(head: nil, body: [], keepAlive: false, error: error)
    } catch {
        fatalError("finding: the response parser threw \(error)")
    }
}

func fuzzResponse(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let first = bytes.first else { return }
    let input = ArraySlice(bytes.dropFirst())
    let head = first & 0x80 != 0
    let maxBody = first & 0x40 != 0 ? 64 : 4096
    let pieces = parseResponse(input, piece: Int(first % 32) + 1, head: head, maxBody: maxBody)
    let whole = parseResponse(input, piece: max(1, input.count), head: head, maxBody: maxBody)
    check(pieces == whole, "the outcome depends on how the bytes arrived: \(pieces) vs \(whole)")
    if pieces.error == nil {
        guard let h = pieces.head else { fatalError("finding: a complete response without a head") }
        check((200...999).contains(h.status) || h.status == 101, "status \(h.status) handed on (1xx are interim)")
        check(pieces.body.count <= maxBody, "a body over the cap")
        if head || h.status == 204 || h.status == 304 { check(pieces.body.isEmpty, "a body where none may be") }
        for (name, value) in h.fields {
            check(!name.isEmpty && name.utf8.allSatisfy(ByteScan.isToken), "field name \(name.debugDescription)")
            check(!value.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }, "control byte in a field value")
        }
    }
}

// MARK: - JSON

/// Paths asked of every document: the badge's, and ones that wander into what a fuzzer writes.
let fuzzPaths: [[String]] = WikimediaClient.unreadPaths + [["a"], ["a", "b"], ["a", "b", "c"], [""], ["0"], ["é"], ["\u{1F600}"]]

func fuzzJSON(_ bytes: UnsafeBufferPointer<UInt8>) {
    let input = Array(bytes)
    let reference = StrictJSON.parse(input)
    let read = try? JSONPaths.values(input, at: fuzzPaths)
    check((reference != nil) == (read != nil), "JSONPaths \(read == nil ? "refused" : "accepted") what StrictJSON \(reference == nil ? "refuses" : "accepts")")
    // With no path asked, the whole document goes through the skipping validator: the same verdict.
    let skipped = (try? JSONPaths.values(input, at: [])) != nil
    check((reference != nil) == skipped, "JSONPaths' skipping validator \(skipped ? "accepted" : "refused") what StrictJSON \(reference == nil ? "refuses" : "accepts")")
    guard let reference, let read else { return }
    for path in fuzzPaths {
        let want = reference.at(path[...])
        let got = read[path]
        switch (want, got) {
        case (nil, nil): continue
        case (.object?, let v?): check(v.kind == .object, "kind at \(path)")
        case (.array?, let v?): check(v.kind == .array, "kind at \(path)")
        case (.string(let s)?, let v?): check(v.kind == .string && v.text == s, "string at \(path): \(v.text.debugDescription) vs \(s.debugDescription)")
        case (.number(let n)?, let v?): check(v.kind == .number && v.text == n, "number at \(path)")
        case (.bool(let b)?, let v?): check(v.kind == .bool && v.text == String(b), "bool at \(path)")
        case (.null?, let v?): check(v.kind == .null, "null at \(path)")
        default: fatalError("finding: at \(path) StrictJSON has \(String(describing: want)), JSONPaths \(String(describing: got))")
        }
    }
}

// MARK: - Text rules

func fuzzText(_ bytes: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: bytes, as: UTF8.self)
    let clean = PronunciationStripper.clean(text)
    check(clean.unicodeScalars.count <= text.unicodeScalars.count, "stripping made the text longer")
    _ = PronunciationStripper.cleanHTML(text)
    let plain = HTMLText.plain(text)
    check(plain.unicodeScalars.count <= text.unicodeScalars.count + 1, "plain text longer than its HTML")
    _ = Card.paragraph(text)
}

// MARK: - gzip

func fuzzInflate(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let first = bytes.first else { return }
    let input = Array(bytes.dropFirst())
    let limit = first & 0x80 != 0 ? 1 << 10 : 1 << 16
    let piece = Int(first & 0x3F) + 1
    let whole = Inflater.decompress(input, limit: limit)
    if let whole { check(whole.count <= limit, "inflated past the cap") }
    let inflater = Inflater(limit: limit)
    var out: [UInt8] = []
    var failed = false
    var offset = 0
    while offset < input.count {
        let end = min(input.count, offset + piece)
        guard let part = inflater.feed(Array(input[offset..<end])) else { failed = true; break }
        out += part
        check(out.count <= limit, "pieces inflated past the cap")
        offset = end
    }
    if !failed && inflater.finished {
        check(whole == out, "pieces inflate to other bytes than the whole")
    } else {
        check(whole == nil, "the whole inflates but its pieces do not")
    }
}

// MARK: - Wikimedia decoders

/// Answers every upstream call with the fuzzer's bytes (status chosen by the first byte).
struct FuzzTransport: UpstreamTransport {
    let status: Int
    let body: [UInt8]
    func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        UpstreamResponse(status: status, body: body, headers: ["content-type": "application/json; charset=utf-8"])
    }
}

/// Runs async work to its end from the fuzzer's synchronous callback.
func blocking(_ work: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task { await work(); done.signal() }
    done.wait()
}

/// What Lede writes from upstream data must be one line of valid JSON.
func checkLine(_ json: [UInt8], _ what: String) {
    let line = JSONLines.line(json)
    check(line.last == 10 && !line.dropLast().contains(10) && !line.contains(13), "\(what): not one line")
    check(StrictJSON.parse(json) != nil, "\(what): not JSON: \(String(decoding: json, as: UTF8.self))")
}

func checkClean(_ error: Error, _ what: String) {
    check(error is UpstreamError, "\(what) threw \(type(of: error)), not an UpstreamError")
}

let fuzzStatuses = [200, 200, 200, 200, 200, 200, 404, 500, 503, 429, 301, 403]

func fuzzDecoders(_ bytes: UnsafeBufferPointer<UInt8>) {
    // Real answers (the corpus) start with "{": they are answered with 200 as they are; anything else picks a status.
    let status = bytes.first.map { $0 == UInt8(ascii: "{") ? 200 : fuzzStatuses[Int($0) % fuzzStatuses.count] } ?? 200
    let body = Array(bytes)
    blocking {
        let client = WikimediaClient(transport: FuzzTransport(status: status, body: body), guards: UpstreamGuard(), deadline: 5)
        let feeds = FeedService(api: client)
        let lang = LanguageCode("en")!
        do {
            let feed = try await client.featuredFeed(lang: lang, date: FeedDate.today())
            for (kind, f) in feeds.featuredFragments(.ok(feed), lang: lang, isToday: true) { checkLine(f.body.bytes, "feed section \(kind)") }
        } catch { checkClean(error, "featuredFeed") }
        do {
            let s = try await client.summary(lang: lang, title: "Dog")
            checkLine(JSONLines.encode(Card(summary: s, lang: lang)), "summary card")
        } catch { checkClean(error, "summary") }
        do {
            let r = try await client.related(lang: lang, title: "Dog")
            checkLine(JSONLines.encode(r.pages.map { Card(page: $0, lang: lang) }), "related cards")
        } catch { checkClean(error, "related") }
        do { _ = try await client.prefixSearch(lang: lang, query: "Do") } catch { checkClean(error, "prefixSearch") }
        do {
            let page = try await client.notifications(lang: lang, authorization: "Bearer x", filter: .all, limit: 50, continueFrom: nil)
            for n in page.list {
                let item = NotificationItem(n)
                checkLine(item.jsonBytes, "notification")
                let encoded = JSONLines.encode(item)
                check(StrictJSON.parse(item.jsonBytes) == StrictJSON.parse(encoded), "appendJSON and JSONEncoder disagree")
            }
        } catch { checkClean(error, "notifications") }
        do { _ = try await client.unreadCount(lang: lang, authorization: "Bearer x") } catch { checkClean(error, "unreadCount") }
        do { _ = try await client.csrfToken(lang: lang, authorization: "Bearer x") } catch { checkClean(error, "csrfToken") }
        do { _ = try await client.articleContents(lang: lang, title: "Dog") } catch { checkClean(error, "articleContents") }
        do { _ = try await client.languageLinks(lang: lang, title: "Dog") } catch { checkClean(error, "languageLinks") }
        do { _ = try await client.mainPage(lang: lang) } catch { checkClean(error, "mainPage") }
        do { _ = try await client.mediaList(lang: lang, title: "Dog") } catch { checkClean(error, "mediaList") }
        do { _ = try await client.fileInfo(lang: lang, files: ["File:Dog.jpg"]) } catch { checkClean(error, "fileInfo") }
        // Saved articles offline: the revisions' steps, PCS's resources and a pinned media list, written as a manifest.
        do {
            let r = try await client.pageRevisions(lang: lang, titles: ["Dog", "dog", "Cat"])
            check(r.byTitle.keys.allSatisfy { ["Dog", "dog", "Cat"].contains($0) }, "revisions: a title not asked")
        } catch { checkClean(error, "pageRevisions") }
        do {
            let resources = try await client.offlineResources(lang: lang, title: "Dog", revision: 7)
            let media = try await client.mediaList(lang: lang, title: "Dog", revision: 7)
            let m = OfflineRules.manifest(site: "https://en.wikipedia.org", page: "Dog", revision: 7, timestamp: nil, resources: resources, media: media, width: 640)
            check((m.resources.map(\.url) + m.images.map(\.url)).allSatisfy { OfflineRules.wikimediaURL($0) == $0 }, "a manifest URL off Wikimedia's hosts")
            checkLine(JSONLines.encode(OfflineRules.Article(lang: lang, title: "Dog", page: "Dog", manifest: m)), "offline manifest")
        } catch { checkClean(error, "offline manifest") }
        do { _ = try await client.readingListChanges(edition: lang, authorization: "Bearer x", since: "2026-11-01T00:00:00Z") }
        catch { check(error is UpstreamError || error is ReadingListsFailure, "readingListChanges threw \(type(of: error))") }
        // The editor's answers: a page (written as the editor's JSON), a permission, an edit's outcome (its problem JSON).
        func checkEditor(_ error: Error, _ what: String) {
            if let refused = error as? EditRefusedError { checkLine(EditRules.problem(refused.message).jsonBytes(typeBase: LedeApp.naming.problemTypeBase), "\(what) problem"); return }
            check(error is UpstreamError || error is EditOutcomeUnknown, "\(what) threw \(type(of: error))")
        }
        do {
            let page = try await client.editorPage(lang: lang, title: "Dog", section: 1, authorization: nil)
            checkLine(EditRoutes.editorBody(page, section: 1), "editor page")
        } catch { checkEditor(error, "editorPage") }
        do { _ = try await client.editPermission(lang: lang, title: "Dog", authorization: "Bearer x") } catch { checkEditor(error, "editPermission") }
        do {
            let submission = EditSubmission(title: "Dog", section: 1, wikitext: "x", summary: "", baseRevision: 1, minor: false)
            switch try await client.edit(lang: lang, submission, token: "t+\\", authorization: "Bearer x", forwardedFor: nil, deadline: 5) {
            case .refused(let m): checkLine(EditRules.problem(m, current: 2).jsonBytes(typeBase: LedeApp.naming.problemTypeBase), "edit problem")
            case .captcha(let id, let url): checkLine(EditRules.captchaProblem(id: id, url: url, base: "https://en.wikipedia.org").jsonBytes(typeBase: LedeApp.naming.problemTypeBase), "captcha problem")
            case .saved, .nochange: break
            }
        } catch { checkEditor(error, "edit") }
    }
    // The same bytes as a client's save request: an edit or a clean problem.
    do { _ = try EditRules.parseSave(body) } catch { check(error is Problem, "parseSave threw \(type(of: error))") }
}

// MARK: - Deep links

func fuzzDeepLink(_ bytes: UnsafeBufferPointer<UInt8>) {
    let raw = String(decoding: bytes, as: UTF8.self)
    if let url = ArticleURL(raw) {
        check(url.url == raw && LanguageCode(url.lang) != nil, "an article URL that is not what was sent")
        check(ArticleURL(url.url) == url, "an accepted URL is refused the second time")
        let link = DeepLinks.places(article: url)
        check(!link.utf8.contains { $0 <= 32 || $0 >= 127 }, "a deep link with raw bytes: \(link.debugDescription)")
    }
    if let places = try? LocationsLoader.parse(Data(bytes)) {
        for p in places {
            check(Coordinate(latitude: p.coordinate.latitude, longitude: p.coordinate.longitude) != nil, "a place out of range")
            let link = DeepLinks.places(p.coordinate)
            check(!link.utf8.contains { $0 <= 32 || $0 >= 127 }, "a deep link with raw bytes: \(link.debugDescription)")
        }
    }
}

// MARK: - Writers

/// The WHATWG "interpret an event stream" algorithm, for reading back what was written.
struct SSEReader {
    struct Event: Equatable { var type: String; var data: String; var id: String }
    var events: [Event] = []
    var retry: Int?
    var lastID = ""

    mutating func read(_ bytes: [UInt8]) {
        var type = "", data = "", sawData = false
        var lines: [[UInt8]] = []
        var line: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 13 || b == 10 {
                lines.append(line); line = []
                if b == 13, i + 1 < bytes.count, bytes[i + 1] == 10 { i += 1 }
            } else {
                line.append(b)
            }
            i += 1
        }
        check(line.isEmpty, "the stream ends inside a line")
        for l in lines {
            if l.isEmpty {
                if sawData { events.append(Event(type: type.isEmpty ? "message" : type, data: data.hasSuffix("\n") ? String(data.dropLast()) : data, id: lastID)) }
                type = ""; data = ""; sawData = false
                continue
            }
            if l.first == 58 { continue }
            let colon = l.firstIndex(of: 58) ?? l.count
            let name = String(decoding: l[0..<colon], as: UTF8.self)
            var value = colon < l.count ? Array(l[(colon + 1)...]) : []
            if value.first == 32 { value.removeFirst() }
            let v = String(decoding: value, as: UTF8.self)
            switch name {
            case "event": type = v
            case "data": data += v + "\n"; sawData = true
            case "id": if !value.contains(0) { lastID = v }
            case "retry": if !value.isEmpty, value.allSatisfy({ $0 >= 48 && $0 <= 57 }) { retry = Int(v) }
            default: break
            }
        }
    }
}

func fuzzSSE(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let first = bytes.first else { return }
    // Fields separated by 0xFF (never part of UTF-8): event, id, data.
    let parts = bytes.dropFirst().split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let event = first & 1 != 0 && parts.count > 1 ? parts[0] : nil
    let id = first & 2 != 0 && parts.count > 1 ? parts[1] : nil
    let data = parts.last ?? ""
    let retry = first & 4 != 0 ? Int(first) * 97 - 3_000 : nil
    let written = ServerSentEvent(event: event, id: id, data: data, retry: retry).encoded
    var reader = SSEReader()
    reader.read(written + SSEFraming.heartbeat)
    func dropping(_ s: String, _ drop: Set<UInt8>) -> String { String(decoding: s.utf8.filter { !drop.contains($0) }, as: UTF8.self) }
    // CR LF and CR read as LF, by bytes (Foundation's replacingOccurrences compares composed characters: a CR
    // followed by a combining mark would not match, though every SSE parser splits there).
    var normalised: [UInt8] = []
    var afterCR = false
    for b in data.utf8 {
        if b == 10 && afterCR { afterCR = false; continue }
        afterCR = b == 13
        normalised.append(b == 13 ? 10 : b)
    }
    let lines = String(decoding: normalised, as: UTF8.self)
    let wantType = event.map { dropping($0, [10, 13]) }.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
    check(reader.events == [SSEReader.Event(type: wantType, data: lines, id: id.map { dropping($0, [0, 10, 13]) } ?? "")],
          "read back \(reader.events) for event \(String(describing: event)) id \(String(describing: id)) data \(data.debugDescription)")
    check(reader.retry == retry.map { max(0, $0) }, "retry read back as \(String(describing: reader.retry))")
    var hint = SSEReader()
    hint.read(SSEFraming.retry(retry ?? 1_500))
    check(hint.events.isEmpty && hint.retry == max(0, retry ?? 1_500), "a retry hint read back as an event")
}

func fuzzJSONLines(_ bytes: UnsafeBufferPointer<UInt8>) {
    let parts = bytes.split(separator: 0xFF, maxSplits: 4, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    func part(_ i: Int) -> String { i < parts.count ? parts[i] : "" }
    let q = JSONText.quote
    // A summary needs a title that is not blank (an upstream one without is refused as malformed): "T" leads it.
    let summaryJSON = "{\"title\":\(q("T" + part(0))),\"extract\":\(q(part(1))),\"extract_html\":\(q(part(2))),\"description\":\(q(part(3)))}"
    guard let summary = try? JSONDecoder().decode(PageSummary.self, from: Data(summaryJSON.utf8)) else {
        fatalError("finding: JSONText.quote wrote a string JSONDecoder refuses: \(summaryJSON.debugDescription)")
    }
    let card = Card(summary: summary, lang: LanguageCode("en")!)
    let json = JSONLines.encode(FeedSection(kind: .featured, items: [card]))
    checkLine(json, "a card's section")
    guard case .object(let top)? = StrictJSON.parse(json), case .array(let items)? = top.first(where: { $0.0 == "items" })?.1,
          case .object(let c)? = items.first, case .string(let t)? = c.first(where: { $0.0 == "extract" })?.1 else {
        fatalError("finding: the section's shape")
    }
    check(t == card.extract, "the extract read back differs")
    var n = NotificationItem(try! JSONDecoder().decode(EchoNotification.self, from: Data("{\"id\":\(bytes.count),\"type\":\"mention\"}".utf8)))
    n.header = part(0); n.body = part(1); n.title = part(2); n.agent = part(3); n.primaryLink = part(4)
    checkLine(n.jsonBytes, "a notification")
    check(StrictJSON.parse(n.jsonBytes) == StrictJSON.parse(JSONLines.encode(n)), "appendJSON and JSONEncoder disagree")
    let event = ServerSentEvent(event: "notification", id: String(n.id), data: String(decoding: n.jsonBytes, as: UTF8.self)).encoded
    var reader = SSEReader()
    reader.read(event)
    check(reader.events.count == 1 && StrictJSON.parse(Array(reader.events[0].data.utf8)) == StrictJSON.parse(n.jsonBytes), "the notification event read back differs")
}
// MARK: - References

let allowedReferenceTags: Set<String> = ["i", "b", "cite", "span", "a", "/i", "/b", "/cite", "/span", "/a"]

func fuzzReferences(_ bytes: UnsafeBufferPointer<UInt8>) {
    let r = ReferenceScanner.scan(Array(bytes), lang: .english)
    check(StrictJSON.parse(r.jsonBytes) != nil, "the references are not JSON")
    let ids = r.notes.map(\.id)
    check(Set(ids).count == ids.count, "a note twice")
    check(r.lists.flatMap(\.order) == ids, "notes and the lists' order disagree")
    let known = Set(ids)
    for c in r.citations { check(known.contains(c.noteId), "a citation of a note that is not there: \(c.noteId)") }
    for n in r.notes {
        check(["web", "news", "book", "journal", "generic"].contains(n.kind), "kind \(n.kind)")
        // Only the inline elements, balanced; an `a` only with an https href.
        var open: [String] = []
        var rest = Substring(n.html)
        while let lt = rest.firstIndex(of: "<") {
            guard let gt = rest[lt...].firstIndex(of: ">") else { fatalError("finding: an unclosed tag in \(n.html.debugDescription)") }
            let tag = rest[rest.index(after: lt)..<gt]
            let name = String(tag.prefix { $0 != " " })
            check(allowedReferenceTags.contains(name), "tag <\(tag)> kept in \(n.html.debugDescription)")
            if name == "a" { check(tag.hasPrefix("a href=\"https://") && !tag.dropFirst(8).contains(" "), "a link kept as \(tag)") }
            else { check(tag == name, "attributes kept on <\(tag)>") }
            if name.hasPrefix("/") { check(open.popLast() == String(name.dropFirst()), "unbalanced </\(name)> in \(n.html.debugDescription)") }
            else { open.append(name) }
            rest = rest[rest.index(after: gt)...]
        }
        check(open.isEmpty, "left open: \(open) in \(n.html.debugDescription)")
        check(open.count <= ReferenceScanner.maxDepth, "deeper than the bound")
        for l in n.links { check(l.url.hasPrefix("https://") || l.url.hasPrefix("http://"), "link \(l.url)") }
    }
}
#endif
