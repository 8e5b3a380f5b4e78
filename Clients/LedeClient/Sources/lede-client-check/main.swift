// Calls every operation of openapi.yaml through the generated client against a running Lede (embedded default),
// with realistic parameters and the documented error cases, using the generator's default configuration.
// Each answer must decode into its documented case, and re-encoding what was decoded must give back every member
// the server sent (nothing dropped by the generated types). Exit status 1 on the first failure.
//   swift run lede-client-check http://127.0.0.1:8080
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import LedeClient
import OpenAPIRuntime
import OpenAPIURLSession

/// Keeps the bytes of the last answer body (and adds the bearer token when one is set), so each decoded value can
/// be compared with exactly what the server sent.
final class Recorder: ClientMiddleware, @unchecked Sendable {   // `last` is only touched under `lock`
    let token: String?
    private let lock = NSLock()
    private var last = Data()
    init(token: String?) { self.token = token }

    var body: Data { lock.withLock { last } }

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token { request.headerFields[.authorization] = "Bearer \(token)" }
        let (response, responseBody) = try await next(request, body, baseURL)
        let data = responseBody == nil ? Data() : try await Data(collecting: responseBody!, upTo: 16 << 20)
        lock.withLock { last = data }
        return (response, responseBody == nil ? nil : HTTPBody(data))
    }
}

struct Failure: Error, CustomStringConvertible { let description: String }

let serverURL = URL(string: CommandLine.arguments.dropFirst().first ?? "http://127.0.0.1:8080")!
func client(_ token: String? = nil) -> (Client, Recorder) {
    let recorder = Recorder(token: token)
    return (Client(serverURL: serverURL, transport: URLSessionTransport(), middlewares: [recorder]), recorder)
}

let encoder: JSONEncoder = {
    let e = JSONEncoder()
    e.dateEncodingStrategy = .iso8601   // the generator's default transcoder writes the same whole-second form
    return e
}()

/// Every member `sent` holds is in `decoded` with the same value (a `null` sent may be absent after re-encoding).
func differences(_ sent: Any, _ decoded: Any?, _ path: String) -> [String] {
    switch sent {
    case let object as [String: Any]:
        guard let other = decoded as? [String: Any] else { return ["\(path): an object became \(String(describing: decoded))"] }
        var out: [String] = []
        for (key, value) in object {
            if value is NSNull, other[key] == nil || other[key] is NSNull { continue }
            out += differences(value, other[key], path + "." + key)
        }
        for key in other.keys where object[key] == nil { out.append("\(path).\(key): not sent, but decoded") }
        return out
    case let array as [Any]:
        guard let other = decoded as? [Any], other.count == array.count else { return ["\(path): an array of \(array.count) became \(String(describing: decoded))"] }
        return zip(array, other).enumerated().flatMap { differences($0.element.0, $0.element.1, "\(path)[\($0.offset)]") }
    case let string as String:
        return decoded as? String == string ? [] : ["\(path): \(string) became \(String(describing: decoded))"]
    case is NSNull:
        return decoded == nil || decoded is NSNull ? [] : ["\(path): null became \(String(describing: decoded))"]
    default:
        let a = (sent as? NSNumber)?.doubleValue, b = (decoded as? NSNumber)?.doubleValue
        return a != nil && a == b ? [] : ["\(path): \(sent) became \(String(describing: decoded))"]
    }
}

var checked = 0
/// `value` decoded from the recorder's last body loses nothing when encoded again.
func roundTrip<T: Encodable>(_ name: String, _ value: T, _ recorder: Recorder) throws {
    let sent = try JSONSerialization.jsonObject(with: recorder.body, options: [.fragmentsAllowed])
    let again = try JSONSerialization.jsonObject(with: try encoder.encode(value), options: [.fragmentsAllowed])
    let diff = differences(sent, again, name)
    guard diff.isEmpty else { throw Failure(description: "\(name): decoding lost or changed members:\n  " + diff.prefix(10).joined(separator: "\n  ")) }
    checked += 1
    print("ok  \(name)")
}

/// The body of a stream's first events, up to the event block that holds `until`, read over a plain TCP socket with an
/// HTTP/1.0 request (the answer is then close-delimited: no chunks to take apart); 10 s at most.
/// One request over a plain socket (HTTP/1.0), read until `done` says the text so far is enough or the server closes:
/// for what URLSession on Linux hides (a stream's first events; a 304, which it answers from its own cache as a 200).
func rawExchange(_ request: String, done: (String) -> Bool = { _ in false }) throws -> String {
    guard let host = serverURL.host, let port = serverURL.port else { throw Failure(description: "the server URL names no host and port") }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure(description: "socket failed") }
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = UInt16(port).bigEndian
    addr.sin_addr.s_addr = inet_addr(host == "localhost" ? "127.0.0.1" : host)
    let connected = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard connected == 0 else { throw Failure(description: "could not connect to \(host):\(port)") }
    var tv = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16384)
    while true {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { break }
        received += chunk[0..<n]
        if done(String(decoding: received, as: UTF8.self)) { break }
    }
    return String(decoding: received, as: UTF8.self)
}

func firstEvents(_ path: String, token: String, lastEventID: String?, until marker: String) throws -> [UInt8] {
    let request = "GET \(path) HTTP/1.0\r\nHost: \(serverURL.host ?? "")\r\nAuthorization: Bearer \(token)\r\n" + (lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? "") + "\r\n"
    let text = try rawExchange(request) { text in
        if let at = text.range(of: marker), text[at.upperBound...].contains("\n\n") { return true }
        return false
    }
    guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200"), let head = text.range(of: "\r\n\r\n"),
          let at = text.range(of: marker, range: head.upperBound..<text.endIndex), let end = text.range(of: "\n\n", range: at.upperBound..<text.endIndex) else {
        throw Failure(description: "GET \(path): no \(marker) in the first events: \(text.prefix(300))")
    }
    return Array(text[head.upperBound..<end.upperBound].utf8)
}

/// A streamed (JSON Lines) answer read as an app reads it (`asDecodedJSONLines`): every line decodes into `Line` and
/// loses nothing when encoded again, and equals, member by member, the classic answer's object `classic` names for it
/// (`[:]` for a line checked otherwise; nil fails).
func checkLines<Line: Codable & Sendable>(_ name: String, _ body: HTTPBody, _ recorder: Recorder, of: Line.Type,
                                          classic: ([String: Any]) -> [String: Any]?) async throws -> [Line] {
    var decoded: [Line] = []
    // Date-times are RFC 3339 (the generator's own transcoder reads them so; a bare JSONDecoder would not).
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    for try await line in body.asDecodedJSONLines(of: Line.self, decoder: decoder) { decoded.append(line) }
    let sent = recorder.body.split(separator: 10)
    guard sent.count == decoded.count, decoded.count > 1 else {
        throw Failure(description: "\(name): \(sent.count) lines sent, \(decoded.count) decoded")
    }
    for (bytes, line) in zip(sent, decoded) {
        let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] ?? [:]
        var diff = differences(object, try JSONSerialization.jsonObject(with: try encoder.encode(line)), name + " line")
        guard let same = classic(object) else { throw Failure(description: "\(name): a line the classic answer does not hold: \(object.keys.sorted())") }
        if !same.isEmpty { diff += differences(same, object, name + " against the classic answer") }
        guard diff.isEmpty else { throw Failure(description: "\(name): " + diff.prefix(10).joined(separator: "\n  ")) }
    }
    checked += 1
    print("ok  \(name) (\(decoded.count) lines)")
    return decoded
}

func present<T>(_ value: T?, _ failure: String) throws -> T {
    guard let value else { throw Failure(description: failure) }
    return value
}

func expect<T>(_ name: String, _ body: () throws -> T) throws -> T {
    do { return try body() } catch { throw Failure(description: "\(name): not the documented case: \(error)") }
}

func run() async throws {
    let (anon, rec) = client()
    let (alice, aliceRec) = client("demo-alice")
    let (bob, bobRec) = client("demo-bob")

    let index = try await anon.getServiceIndex()
    try roundTrip("GET / 200", try expect("GET /") { try index.ok.body.json }, rec)
    let languages = try await anon.getLanguages()
    try roundTrip("GET /languages 200", try expect("GET /languages") { try languages.ok.body.json }, rec)

    let feed = try await anon.getFeed()
    try roundTrip("GET /feed 200", try expect("GET /feed") { try feed.ok.body.json }, rec)
    let personal = try await anon.getFeed(query: .init(lang: .en, lat: "52.3547498", lon: "4.8339215", because: "Albert_Einstein",
                                                      _continue: "Rijksmuseum", backgroundedAt: Date(timeIntervalSince1970: 1_767_225_600)))
    let personalBody = try expect("GET /feed personal") { try personal.ok.body.json }
    guard personalBody.sections.contains(where: { $0.kind == .nearby }), personalBody.sections.contains(where: { $0.kind == .becauseYouRead }) else {
        throw Failure(description: "GET /feed personal: no nearby or becauseYouRead section")
    }
    try roundTrip("GET /feed personal 200", personalBody, rec)
    // The streamed feed, line by line as an app reads it; each section is the very object the classic answer holds.
    let classic = try await anon.getFeed()
    _ = try expect("GET /feed") { try classic.ok.body.json }
    let classicFeed = try JSONSerialization.jsonObject(with: rec.body) as? [String: Any] ?? [:]
    let streamed = try await anon.getFeed(headers: .init(accept: [.init(contentType: .application_jsonl)]))
    let feedLines = try await checkLines("GET /feed streamed", try expect("GET /feed streamed") { try streamed.ok.body.application_jsonl }, rec,
                                         of: Components.Schemas.FeedStreamLine.self) { line in
        if line["kinds"] != nil { return line["date"] as? String == classicFeed["date"] as? String ? [:] : nil }
        return (classicFeed["sections"] as? [[String: Any]])?.first { $0["kind"] as? String == line["kind"] as? String }
    }
    guard case .FeedStreamHead? = feedLines.first else { throw Failure(description: "GET /feed streamed: the first line is not the head") }
    let noFeed = try await anon.getFeed(query: .init(date: "2014-12-31"))
    try roundTrip("GET /feed 404", try expect("GET /feed 404") { try noFeed.notFound.body.application_problem_plus_json }, rec)
    let badDate = try await anon.getFeed(query: .init(date: "2026-13-01"))
    try roundTrip("GET /feed 400", try expect("GET /feed 400") { try badDate.badRequest.body.application_problem_plus_json }, rec)

    let badge = try await alice.getNotificationBadge()
    try roundTrip("GET /notifications/badge 200", try expect("badge") { try badge.ok.body.json }, aliceRec)
    let noAuth = try await anon.getNotificationBadge()
    try roundTrip("GET /notifications/badge 401", try expect("badge 401") { try noAuth.unauthorized.body.application_problem_plus_json }, rec)
    // The live bell's refusals (a stream that is accepted never ends, and URLSession on Linux reads whole bodies only).
    let noStream = try await anon.streamNotifications()
    try roundTrip("GET /notifications/stream 401", try expect("stream 401") { try noStream.unauthorized.body.application_problem_plus_json }, rec)
    let (revoked, revokedRec) = client("not-a-demo-token")
    let refusedStream = try await revoked.streamNotifications()
    try roundTrip("GET /notifications/stream refused 401", try expect("stream refused") { try refusedStream.unauthorized.body.application_problem_plus_json }, revokedRec)
    // The bell as an app reads it (`bellUpdates`: the events by `asDecodedServerSentEvents`, each one's data decoded as
    // the schema its name says). A stream that is accepted does not end, and URLSession on Linux reads whole bodies
    // only: its first events are read over a plain socket (HTTP/1.0, so close-delimited) and decoded the same way.
    let bell = try firstEvents("/notifications/stream", token: "demo-alice", lastEventID: "0", until: "event: badge")
    var updates: [BellUpdate] = []
    for try await update in HTTPBody(bell).bellUpdates() { updates.append(update) }
    guard case .badge(let first, _)? = updates.last, first.unreadCount > 0,
          updates.dropLast().allSatisfy({ if case .notification = $0 { return true } else { return false } }), updates.count > 1 else {
        throw Failure(description: "GET /notifications/stream: not the missed notifications then a badge: \(updates)")
    }
    checked += 1
    print("ok  GET /notifications/stream (bellUpdates: \(updates.count - 1) notifications, then the badge)")
    let page = try await alice.listNotifications(query: .init(filter: .unread, limit: 10))
    let pageBody = try expect("GET /notifications") { try page.ok.body.json }
    try roundTrip("GET /notifications 200", pageBody, aliceRec)
    if let next = pageBody._continue {
        let second = try await alice.listNotifications(query: .init(filter: .unread, limit: 10, _continue: next))
        try roundTrip("GET /notifications page 2 200", try expect("GET /notifications page 2") { try second.ok.body.json }, aliceRec)
    }
    let badPage = try await alice.listNotifications(query: .init(_continue: "not-a-continue"))
    try roundTrip("GET /notifications 400", try expect("GET /notifications 400") { try badPage.badRequest.body.application_problem_plus_json }, aliceRec)
    let read = try await bob.markNotificationsRead(body: .json(.case2(.init(all: true))))
    try roundTrip("POST /notifications/read 200", try expect("POST /notifications/read") { try read.ok.body.json }, bobRec)

    // The Saved tab: read, 304 on the same state, streamed, save (201, then 200), read back, remove, the 409 and 401.
    let tab = try await alice.getSaved()
    let tabBody = try expect("GET /saved") { try tab.ok.body.json }
    guard tabBody.count > 0, tabBody.syncEnabled, tabBody.items.contains(where: { $0.card != nil }) else { throw Failure(description: "GET /saved: no saved articles with cards") }
    try roundTrip("GET /saved 200", tabBody, aliceRec)
    guard case .ok(let tabOK) = tab, let tag = tabOK.headers.ETag else { throw Failure(description: "GET /saved: no ETag") }
    let unchanged = try rawExchange("GET /saved HTTP/1.0\r\nHost: \(serverURL.host ?? "")\r\nAuthorization: Bearer demo-alice\r\nAccept-Encoding: gzip\r\nIf-None-Match: \(tag)\r\n\r\n")
    guard unchanged.hasPrefix("HTTP/1.1 304") || unchanged.hasPrefix("HTTP/1.0 304") else { throw Failure(description: "GET /saved with its ETag: not 304 but \(unchanged.prefix(200))") }
    checked += 1; print("ok  GET /saved 304")
    let classicTab = try JSONSerialization.jsonObject(with: aliceRec.body) as? [String: Any] ?? [:]
    let streamedTab = try await alice.getSaved(headers: .init(accept: [.init(contentType: .application_jsonl)]))
    let tabLines = try await checkLines("GET /saved streamed", try expect("GET /saved streamed") { try streamedTab.ok.body.application_jsonl }, aliceRec,
                                        of: Components.Schemas.SavedStreamLine.self) { _ in [:] }
    guard case .SavedStreamHead? = tabLines.first, tabLines.count == 1 + ((classicTab["items"] as? [Any])?.count ?? -1) else {
        throw Failure(description: "GET /saved streamed: not a head and one line per item")
    }
    let saved = try await alice.saveArticle(path: .init(title: "Madrid"), query: .init(lang: .de))
    try roundTrip("PUT /saved/{title} 201", try expect("PUT /saved/{title}") { try saved.created.body.json }, aliceRec)
    let savedAgain = try await alice.saveArticle(path: .init(title: "madrid"), query: .init(lang: .de))
    try roundTrip("PUT /saved/{title} again 200", try expect("PUT /saved/{title} again") { try savedAgain.ok.body.json }, aliceRec)
    let state = try await alice.getSavedState(path: .init(title: "Madrid"), query: .init(lang: .de))
    let stateBody = try expect("GET /saved/{title}") { try state.ok.body.json }
    guard stateBody.saved else { throw Failure(description: "GET /saved/{title}: not saved after the save") }
    try roundTrip("GET /saved/{title} 200", stateBody, aliceRec)
    let unsaved = try await alice.unsaveArticle(path: .init(title: "Madrid"), query: .init(lang: .de))
    guard case .noContent = unsaved else { throw Failure(description: "DELETE /saved/{title}: not 204 but \(unsaved)") }
    checked += 1; print("ok  DELETE /saved/{title} 204")
    // Saved articles offline: the whole list, nothing since its token, the same streamed, one article's manifest.
    let offline = try await alice.getOffline()
    let offlineBody = try expect("GET /offline") { try offline.ok.body.json }
    guard offlineBody.complete, offlineBody.count > 0, offlineBody.articles.count == offlineBody.count,
          offlineBody.articles.allSatisfy({ $0.status == .ok && $0.html != nil && !($0.resources ?? []).isEmpty }) else {
        throw Failure(description: "GET /offline: not every saved article's manifest")
    }
    try roundTrip("GET /offline 200", offlineBody, aliceRec)
    let unchangedOffline = try await alice.getOffline(query: .init(since: offlineBody.sync))
    let unchangedBody = try expect("GET /offline since") { try unchangedOffline.ok.body.json }
    // Nothing changed since (an edit in the seconds before the token's time would be listed again: the sync's margin).
    guard !unchangedBody.complete, unchangedBody.articles.count < offlineBody.count else {
        throw Failure(description: "GET /offline since its token: the whole list again: \(unchangedBody.articles.map(\.title))")
    }
    try roundTrip("GET /offline since 200", unchangedBody, aliceRec)
    let classicOffline = try JSONSerialization.jsonObject(with: try encoder.encode(offlineBody)) as? [String: Any] ?? [:]
    let streamedOffline = try await alice.getOffline(headers: .init(accept: [.init(contentType: .application_jsonl)]))
    let offlineLines = try await checkLines("GET /offline streamed", try expect("GET /offline streamed") { try streamedOffline.ok.body.application_jsonl }, aliceRec,
                                            of: Components.Schemas.OfflineStreamLine.self) { line in
        guard let title = line["title"] as? String else { return [:] }
        return (classicOffline["articles"] as? [[String: Any]])?.first { $0["title"] as? String == title && $0["lang"] as? String == line["lang"] as? String }
    }
    guard case .OfflineStreamHead? = offlineLines.first, case .OfflineStreamTail? = offlineLines.last, offlineLines.count == offlineBody.count + 2 else {
        throw Failure(description: "GET /offline streamed: not a head, one line per article and the token")
    }
    let badToken = try await alice.getOffline(query: .init(since: "not-a-token"))
    try roundTrip("GET /offline 400", try expect("GET /offline 400") { try badToken.badRequest.body.application_problem_plus_json }, aliceRec)
    let pinned = try present(offlineBody.articles.first { $0.title == "Albert Einstein" && $0.lang == .en }?.revision, "GET /offline: no Albert Einstein")
    let oneOffline = try await anon.getArticleOffline(path: .init(title: "Albert_Einstein"), query: .init(lang: .en, revision: pinned))
    try roundTrip("GET /article/{title}/offline 200", try expect("GET /article/{title}/offline") { try oneOffline.ok.body.json }, rec)
    let (full, fullRec) = client("demo-full")
    let overLimit = try await full.saveArticle(path: .init(title: "Madrid"), query: .init(lang: .en))
    let limitProblem = try expect("PUT /saved/{title} 409") { try overLimit.conflict.body.application_problem_plus_json }
    guard limitProblem.limit == 5000 else { throw Failure(description: "PUT /saved/{title} 409: no limit") }
    try roundTrip("PUT /saved/{title} 409", limitProblem, fullRec)
    let noTab = try await anon.getSaved()
    try roundTrip("GET /saved 401", try expect("GET /saved 401") { try noTab.unauthorized.body.application_problem_plus_json }, rec)
    let unconfirmed = try await bob.deleteAllSaved(query: .init(confirm: .all))
    try roundTrip("DELETE /saved 200", try expect("DELETE /saved") { try unconfirmed.ok.body.json }, bobRec)

    let link = try await anon.getPlacesDeepLink(query: .init(lat: "52.3547498", lon: "4.8339215", name: "Amsterdam"))
    try roundTrip("GET /places/deeplink 200", try expect("deeplink") { try link.ok.body.json }, rec)
    let articleLink = try await anon.getPlacesArticleDeepLink(path: .init(title: "Rijksmuseum"), query: .init(lang: .nl))
    try roundTrip("GET /places/deeplink/{title} 200", try expect("article deeplink") { try articleLink.ok.body.json }, rec)
    let badLink = try await anon.getPlacesDeepLink(query: .init(lat: "91", lon: "0"))
    try roundTrip("GET /places/deeplink 400", try expect("deeplink 400") { try badLink.badRequest.body.application_problem_plus_json }, rec)
    let locations = try await anon.getPlacesLocations()
    try roundTrip("GET /places/locations 200", try expect("locations") { try locations.ok.body.json }, rec)

    let animals = try await anon.listAnimals(query: .init(tags: "bird", favorites: "3,7"))
    try roundTrip("GET /animals 200", try expect("animals") { try animals.ok.body.json }, rec)
    let tags = try await anon.listAnimalTags()
    try roundTrip("GET /animals/tags 200", try expect("animal tags") { try tags.ok.body.json }, rec)
    let animal = try await anon.getAnimal(path: .init(id: 5), query: .init(favorites: "5"))
    try roundTrip("GET /animals/{id} 200", try expect("animal") { try animal.ok.body.json }, rec)
    let noAnimal = try await anon.getAnimal(path: .init(id: 999))
    try roundTrip("GET /animals/{id} 404", try expect("animal 404") { try noAnimal.notFound.body.application_problem_plus_json }, rec)
    let svg = try await anon.getAnimalImage(path: .init(id: 1), query: .init(size: 160))
    let svgBody = try expect("animal image") { try svg.ok.body.image_svg_plus_xml_charset_utf_hyphen_8 }
    let svgText = String(decoding: try await Data(collecting: svgBody, upTo: 1 << 20), as: UTF8.self)
    guard svgText.hasPrefix("<svg") || svgText.hasPrefix("<?xml") else { throw Failure(description: "GET /animals/{id}/image.svg: not SVG") }
    checked += 1; print("ok  GET /animals/{id}/image.svg 200")

    let images = try await anon.searchImages(query: .init(q: "cats"))
    let grid = try expect("images") { try images.ok.body.json }
    try roundTrip("GET /images 200", grid, rec)
    if let first = grid.items.first {
        let image = try await anon.getImage(path: .init(id: first.id), query: .init(q: "cats"))
        try roundTrip("GET /images/{id} 200", try expect("image") { try image.ok.body.json }, rec)
    }
    let noImage = try await anon.getImage(path: .init(id: "zzz999"), query: .init(q: "cats"))
    try roundTrip("GET /images/{id} 404", try expect("image 404") { try noImage.notFound.body.application_problem_plus_json }, rec)

    let summary = try await anon.getSummary(path: .init(title: "Albert_Einstein"))
    try roundTrip("GET /summary/{title} 200", try expect("summary") { try summary.ok.body.json }, rec)
    let redirected = try await anon.getSummary(path: .init(title: "Bombay"))
    try roundTrip("GET /summary/{title} redirect 200", try expect("summary redirect") { try redirected.ok.body.json }, rec)
    let missing = try await anon.getSummary(path: .init(title: "No_such_article_for_the_client_check"))
    try roundTrip("GET /summary/{title} 404", try expect("summary 404") { try missing.notFound.body.application_problem_plus_json }, rec)
    // An edition written in two scripts, read in the reader's (issue 59): zh in zh-tw, traditional characters, and
    // Content-Language in BCP 47 as MediaWiki writes it (issue 69): zh-Hant-TW.
    let zhTW = try await anon.getSummary(path: .init(title: "台湾"), query: .init(lang: .zh_hyphen_tw))
    let zhTWBody = try expect("summary zh-tw") { try zhTW.ok.body.json }
    try roundTrip("GET /summary/{title}?lang=zh-tw 200", zhTWBody, rec)
    guard zhTWBody.extract.hasPrefix("臺灣"), (try? zhTW.ok.headers.Content_hyphen_Language) == "zh-Hant-TW" else {
        throw Failure(description: "GET /summary/{title}?lang=zh-tw: not the traditional text, or Content-Language is not zh-Hant-TW")
    }
    let article = try await anon.getArticle(path: .init(title: "Albert_Einstein"), query: .init(lang: .en), headers: .init(Accept_hyphen_Language: "de, fr;q=0.8"))
    let articleBody = try expect("GET /article/{title}") { try article.ok.body.json }
    guard articleBody.languages.items.first?.lang == "de", !articleBody.media.items.isEmpty else { throw Failure(description: "GET /article/{title}: languages or media wrong") }
    try roundTrip("GET /article/{title} 200", articleBody, rec)
    let classicArticle = try JSONSerialization.jsonObject(with: rec.body) as? [String: Any] ?? [:]
    let streamedArticle = try await anon.getArticle(path: .init(title: "Albert_Einstein"), query: .init(lang: .en),
                                                    headers: .init(Accept_hyphen_Language: "de, fr;q=0.8", accept: [.init(contentType: .application_jsonl)]))
    let articleLines = try await checkLines("GET /article/{title} streamed", try expect("article streamed") { try streamedArticle.ok.body.application_jsonl }, rec,
                                            of: Components.Schemas.ArticleStreamLine.self) { line in
        if line["parts"] != nil { return (line["card"] as? [String: Any])?["title"] as? String == (classicArticle["card"] as? [String: Any])?["title"] as? String ? [:] : nil }
        if line["part"] as? String == "editable" {   // a member of the classic answer (an anonymous reader's there, as here)
            return ["part": "editable", "status": "ok", "editable": classicArticle["editable"] as? Bool ?? false]
        }
        guard let name = line["part"] as? String, var part = classicArticle[name] as? [String: Any] else { return nil }
        part["part"] = name
        return part
    }
    guard articleLines.count == 7, case .ArticleStreamHead? = articleLines.first else { throw Failure(description: "GET /article/{title} streamed: not a head and six parts") }
    guard articleBody.editable == false else { throw Failure(description: "GET /article/{title}: an anonymous reader may not edit (no anonymous edits by default)") }
    let bobsArticle = try await bob.getArticle(path: .init(title: "Rijksmuseum"), query: .init(lang: .en))
    let bobsArticleBody = try expect("GET /article/{title} as bob") { try bobsArticle.ok.body.json }
    guard bobsArticleBody.editable == false else { throw Failure(description: "GET /article/{title}: bob is blocked from Rijksmuseum, yet editable") }
    try roundTrip("GET /article/{title} as a blocked user 200", bobsArticleBody, bobRec)

    // The editor: open a section, save it, the conflict (a stale base), the warning and its confirmation, the captcha,
    // the 403s, a missing section.
    let opened = try await alice.openEditor(path: .init(title: "Albert_Einstein"), query: .init(lang: .en, section: "2"))
    let openedBody = try expect("GET /article/{title}/edit") { try opened.ok.body.json }
    guard openedBody.canEdit, openedBody.section == 2, !openedBody.wikitext.isEmpty else { throw Failure(description: "GET /article/{title}/edit: not alice's editable section 2") }
    try roundTrip("GET /article/{title}/edit 200", openedBody, aliceRec)
    let anonymousEditor = try await anon.openEditor(path: .init(title: "Mumbai"), query: .init(lang: .en))
    let anonymousBody = try expect("GET /article/{title}/edit anonymous") { try anonymousEditor.ok.body.json }
    guard !anonymousBody.canEdit, anonymousBody.reasons.first?.code == "needs-account", anonymousBody.reasons.contains(where: { $0.code == "protectedpage" }) else {
        throw Failure(description: "GET /article/{title}/edit anonymous: needs-account first, then the semi-protected page's reason")
    }
    try roundTrip("GET /article/{title}/edit anonymous 200", anonymousBody, rec)
    let blockedEditor = try await bob.openEditor(path: .init(title: "Rijksmuseum"), query: .init(lang: .en, section: "1"))
    let blockedBody = try expect("GET /article/{title}/edit blocked") { try blockedEditor.ok.body.json }
    guard blockedBody.reasons.first?.block?.partial == true else { throw Failure(description: "GET /article/{title}/edit: bob's partial block missing") }
    try roundTrip("GET /article/{title}/edit blocked 200", blockedBody, bobRec)
    let noSection = try await alice.openEditor(path: .init(title: "Albert_Einstein"), query: .init(lang: .en, section: "99"))
    try roundTrip("GET /article/{title}/edit 404", try expect("editor 404") { try noSection.notFound.body.application_problem_plus_json }, aliceRec)

    func edit(_ section: Int?, _ text: String, base: Int, captcha: Components.Schemas.EditRequest.captchaPayload? = nil) -> Components.Schemas.EditRequest {
        .init(section: section, wikitext: text, summary: "Client check", baseRevision: base, minor: true, captcha: captcha)
    }
    let base = Int(openedBody.revision)
    let savedEdit = try await alice.saveEdit(path: .init(title: "Albert_Einstein"), query: .init(lang: .en),
                                             body: .json(edit(2, "=== Early life ===\nBorn in Ulm (client check \(Date().timeIntervalSince1970)).\n", base: base)))
    let savedBody = try expect("POST /article/{title}/edit") { try savedEdit.ok.body.json }
    guard savedBody.result == .saved, let newRevision = savedBody.revision else { throw Failure(description: "POST /article/{title}/edit: not saved") }
    try roundTrip("POST /article/{title}/edit 200", savedBody, aliceRec)
    let stale = try await alice.saveEdit(path: .init(title: "Albert_Einstein"), query: .init(lang: .en),
                                         body: .json(edit(2, "=== Early life ===\nBorn in Munich.\n", base: base)))
    let conflict = try expect("POST /article/{title}/edit 409") { try stale.conflict.body.application_problem_plus_json }
    guard conflict.currentRevision == newRevision else { throw Failure(description: "POST /article/{title}/edit 409: not the revision to reload") }
    try roundTrip("POST /article/{title}/edit 409", conflict, aliceRec)
    let loud = edit(3, "=== Annus mirabilis ===\nFour papers in one year!!! (\(Date().timeIntervalSince1970))\n", base: Int(newRevision))
    let warned = try await alice.saveEdit(path: .init(title: "Albert_Einstein"), query: .init(lang: .en), body: .json(loud))
    try roundTrip("POST /article/{title}/edit 422", try expect("edit 422") { try warned.unprocessableContent.body.application_problem_plus_json }, aliceRec)
    let confirmed = try await alice.saveEdit(path: .init(title: "Albert_Einstein"), query: .init(lang: .en), body: .json(loud))
    let confirmedBody = try expect("POST /article/{title}/edit confirmed") { try confirmed.ok.body.json }
    try roundTrip("POST /article/{title}/edit confirmed 200", confirmedBody, aliceRec)
    let linked = edit(5, "== Scientific career ==\nSee https://example.org/client-check/\(Int(Date().timeIntervalSince1970))\n", base: Int(confirmedBody.revision ?? 0))
    let asked = try await alice.saveEdit(path: .init(title: "Albert_Einstein"), query: .init(lang: .en), body: .json(linked))
    let captchaProblem = try expect("POST /article/{title}/edit 428") { try asked.preconditionRequired.body.application_problem_plus_json }
    guard let captcha = captchaProblem.captcha else { throw Failure(description: "POST /article/{title}/edit 428: no captcha") }
    try roundTrip("POST /article/{title}/edit 428", captchaProblem, aliceRec)
    var solved = linked
    solved.captcha = .init(id: captcha.id, answer: "lede")
    let answered = try await alice.saveEdit(path: .init(title: "Albert_Einstein"), query: .init(lang: .en), body: .json(solved))
    try roundTrip("POST /article/{title}/edit with the captcha 200", try expect("edit captcha answered") { try answered.ok.body.json }, aliceRec)
    let protectedEdit = try await alice.saveEdit(path: .init(title: "Dam_Square"), query: .init(lang: .en), body: .json(edit(nil, "Dam Square.", base: 1)))
    try roundTrip("POST /article/{title}/edit 403 protected", try expect("edit 403 protected") { try protectedEdit.forbidden.body.application_problem_plus_json }, aliceRec)
    let blockedEdit = try await bob.saveEdit(path: .init(title: "Rijksmuseum"), query: .init(lang: .en), body: .json(edit(nil, "The museum.", base: 1)))
    let blockedProblem = try expect("POST /article/{title}/edit 403 blocked") { try blockedEdit.forbidden.body.application_problem_plus_json }
    guard blockedProblem.block?.partial == true else { throw Failure(description: "POST /article/{title}/edit 403: no block") }
    try roundTrip("POST /article/{title}/edit 403 blocked", blockedProblem, bobRec)
    let amsterdam = try await alice.openEditor(path: .init(title: "Amsterdam"), query: .init(lang: .en, section: "0"))
    let amsterdamBody = try expect("GET /article/{title}/edit Amsterdam") { try amsterdam.ok.body.json }
    let spam = try await alice.saveEdit(path: .init(title: "Amsterdam"), query: .init(lang: .en),
                                        body: .json(edit(0, "Amsterdam: https://spam.example/offer\n", base: Int(amsterdamBody.revision))))
    let spamProblem = try expect("POST /article/{title}/edit 403 disallowed") { try spam.forbidden.body.application_problem_plus_json }
    guard spamProblem.matches == ["spam.example"] else { throw Failure(description: "POST /article/{title}/edit 403: not the spam list's match") }
    try roundTrip("POST /article/{title}/edit 403 disallowed", spamProblem, aliceRec)
    let references = try await anon.getArticleReferences(path: .init(title: "Albert_Einstein"), query: .init(lang: .en))
    let referencesBody = try expect("GET /article/{title}/references") { try references.ok.body.json }
    guard referencesBody.lists.count == 2, referencesBody.citations.count == 6,
          referencesBody.references.additionalProperties["cite_note-Nobel-1"]?.citedFrom.count == 3 else {
        throw Failure(description: "GET /article/{title}/references: not the embedded page's lists, citations and notes")
    }
    try roundTrip("GET /article/{title}/references 200", referencesBody, rec)
    let noReferences = try await anon.getArticleReferences(path: .init(title: "No_such_article_for_the_client_check"))
    try roundTrip("GET /article/{title}/references 404", try expect("references 404") { try noReferences.notFound.body.application_problem_plus_json }, rec)
    let noArticle = try await anon.getArticle(path: .init(title: "No_such_article_for_the_client_check"))
    try roundTrip("GET /article/{title} 404", try expect("article 404") { try noArticle.notFound.body.application_problem_plus_json }, rec)
    // The share card (PNG and the JPEG for previews) and its link preview page.
    let cardPNG = try await anon.getShareCard(path: .init(title: "Albert_Einstein"), query: .init(lang: .en, scale: ._2))
    let png = try await Data(collecting: try expect("GET /share/{title}.png") { try cardPNG.ok.body.png }, upTo: 8 << 20)
    guard png.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { throw Failure(description: "GET /share/{title}.png: not a PNG") }
    checked += 1; print("ok  GET /share/{title}.png 200 (\(png.count) bytes)")
    let cardJPEG = try await anon.getShareCard(path: .init(title: "Rijksmuseum"), query: .init(lang: .en, format: .jpeg))
    let jpeg = try await Data(collecting: try expect("GET /share/{title}.png jpeg") { try cardJPEG.ok.body.jpeg }, upTo: 8 << 20)
    guard jpeg.starts(with: [0xFF, 0xD8]), jpeg.count < 300_000 else { throw Failure(description: "GET /share/{title}.png?format=jpeg: not a JPEG under 300 KB") }
    checked += 1; print("ok  GET /share/{title}.png?format=jpeg 200 (\(jpeg.count) bytes)")
    let sharePage = try await anon.getSharePage(path: .init(title: "Albert_Einstein"), query: .init(lang: .en, text: "Imagination is more important than knowledge."))
    let pageHTML = String(decoding: try await Data(collecting: try expect("GET /share/{title}") { try sharePage.ok.body.text_html_charset_utf_hyphen_8 }, upTo: 1 << 20), as: UTF8.self)
    guard pageHTML.contains("og:image"), pageHTML.contains("summary_large_image") else { throw Failure(description: "GET /share/{title}: no og:image") }
    checked += 1; print("ok  GET /share/{title} 200")
    let noCard = try await anon.getShareCard(path: .init(title: "No_such_article_for_the_client_check"))
    try roundTrip("GET /share/{title}.png 404", try expect("share 404") { try noCard.notFound.body.application_problem_plus_json }, rec)
    let related = try await anon.getRelated(path: .init(title: "Amsterdam"), query: .init(limit: 5))
    try roundTrip("GET /related/{title} 200", try expect("related") { try related.ok.body.json }, rec)
    let random = try await anon.getRandom()
    try roundTrip("GET /random 200", try expect("random") { try random.ok.body.json }, rec)
    let nearby = try await anon.getNearby(query: .init(lat: "52.3547498", lon: "4.8339215", radius: 5000))
    try roundTrip("GET /nearby 200", try expect("nearby") { try nearby.ok.body.json }, rec)
    let badNearby = try await anon.getNearby(query: .init(lat: "52.3547498", lon: "200"))
    try roundTrip("GET /nearby 400", try expect("nearby 400") { try badNearby.badRequest.body.application_problem_plus_json }, rec)
    let found = try await anon.search(query: .init(q: "Amst"))
    try roundTrip("GET /search 200", try expect("search") { try found.ok.body.json }, rec)

    let health = try await anon.getHealth()
    try roundTrip("GET /healthz 200", try expect("healthz") { try health.ok.body.json }, rec)
    let ready = try await anon.getReadiness()
    try roundTrip("GET /readyz 200", try expect("readyz") { try ready.ok.body.json }, rec)
    let metrics = try await anon.getMetrics()
    _ = try expect("metrics") { try metrics.ok.body }
    checked += 1; print("ok  GET /metrics 200")
}

do {
    try await run()
    print("lede-client-check: \(checked) answers decoded with nothing lost")
} catch {
    print("lede-client-check: FAILED: \(error)")
    exit(1)
}
