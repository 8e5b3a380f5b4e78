import Foundation
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import Upstream

/// docs/UPSTREAM.md is the contract the client follows: every request the client builds is listed there, on one line,
/// with its path and each parameter (the fixed ones with their values), so a call added or changed in the code without
/// the document fails here.
final class UpstreamContractTests: XCTestCase {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/UPSTREAM.md")

    /// Each call built twice, from different inputs: what is the same in both is fixed by the contract.
    static func calls() -> [(name: String, a: UpstreamRequest, b: UpstreamRequest)] {
        let en = LanguageCode("en")!, de = LanguageCode("de")!
        let d1 = FeedDate(year: 2026, month: 11, day: 20)!, d2 = FeedDate(year: 2025, month: 1, day: 2)!
        typealias C = WikimediaClient
        return [
            ("featured", C.featuredRequest(en, d1), C.featuredRequest(de, d2)),
            ("summary", C.summaryRequest(en, "Alpha"), C.summaryRequest(de, "Beta gamma")),
            ("related", C.relatedRequest(en, "Alpha"), C.relatedRequest(de, "Beta gamma")),
            ("random", C.randomRequest(en), C.randomRequest(de)),
            ("nearby", C.nearbyRequest(en, 52.1, 4.2, 10_000), C.nearbyRequest(de, -33.9, 151.2, 5_000)),
            ("prefix", C.prefixSearchRequest(en, "alp"), C.prefixSearchRequest(de, "bet")),
            ("full text", C.fullTextSearchRequest(en, "alp"), C.fullTextSearchRequest(de, "bet")),
            ("contents", C.contentsRequest(en, "Alpha"), C.contentsRequest(de, "Beta gamma")),
            ("languages", C.languagesRequest(en, "Alpha"), C.languagesRequest(de, "Beta gamma")),
            ("siteinfo", C.siteInfoRequest(en), C.siteInfoRequest(de)),
            ("media", C.mediaRequest(en, "Alpha"), C.mediaRequest(de, "Beta gamma")),
            ("page html", C.pageHTMLRequest(en, "Alpha"), C.pageHTMLRequest(de, "Beta gamma")),
            ("files", C.filesRequest(en, ["File:A.jpg"]), C.filesRequest(de, ["File:B.jpg", "File:C.png"])),
            ("notifications", C.notificationsRequest(en, "Bearer a", .unread, 20, nil), C.notificationsRequest(de, "Bearer b", .all, 50, "123|456")),
            ("unread count", C.unreadCountRequest(en, "Bearer a"), C.unreadCountRequest(de, "Bearer b")),
            ("token", C.tokenRequest(en, "Bearer a"), C.tokenRequest(de, "Bearer b")),
            ("mark read", C.markReadRequest(en, "Bearer a", [1, 2], "t1"), C.markReadRequest(de, "Bearer b", nil, "t2")),
            ("reading lists", C.readingListsRequest(en, "Bearer a", next: nil), C.readingListsRequest(de, "Bearer b", next: nil)),
            ("reading lists setup", C.readingListsSetupRequest(en, "Bearer a"), C.readingListsSetupRequest(de, "Bearer b")),
            ("reading list entries", C.readingListEntriesRequest(en, "Bearer a", list: 1, next: nil), C.readingListEntriesRequest(de, "Bearer b", list: 2, next: nil)),
            ("reading list add", C.readingListAddRequest(en, "Bearer a", list: 1, project: "https://en.wikipedia.org", title: "A"),
             C.readingListAddRequest(de, "Bearer b", list: 2, project: "https://de.wikipedia.org", title: "B")),
            ("reading list delete", C.readingListDeleteRequest(en, "Bearer a", list: 1, entry: 5), C.readingListDeleteRequest(de, "Bearer b", list: 2, entry: 6)),
            ("editor", C.editorRequest(en, "Alpha", section: 2, "Bearer a"), C.editorRequest(de, "Beta gamma", section: 0, nil)),
            ("edit permission", C.editPermissionRequest(en, "Alpha", "Bearer a"), C.editPermissionRequest(de, "Beta gamma", nil)),
            ("anonymous token", C.tokenRequest(en, nil), C.tokenRequest(de, nil)),
            ("edit", C.editRequest(en, EditSubmission(title: "Alpha", section: 2, wikitext: "a", summary: "s", baseRevision: 1, minor: true, captcha: ("1", "x")), token: "t1", "Bearer a"),
             C.editRequest(de, EditSubmission(title: "Beta", section: 0, wikitext: "b", summary: "t", baseRevision: 2, minor: true, captcha: ("2", "y")), token: "t2", "Bearer b")),
            ("reddit", RedditClient.request("cats"), RedditClient.request("EarthPorn")),
        ]
    }

    /// What a listing must say of a call: the path up to its first varying segment, `GET`/`POST`, and each parameter
    /// (`name=value` when fixed, `name=` when it varies).
    static func expectations(_ a: UpstreamRequest, _ b: UpstreamRequest) -> [String] {
        let common = zip(a.path, b.path).prefix { $0 == $1 }.map { $0.0 }
        var path = String(common)
        if path != a.path || path != b.path { path = String(path[..<(path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.endIndex)]) }
        var wanted = [path, a.method.rawValue]
        let pa = a.query + a.form, pb = b.query + b.form
        var names: [String] = []
        for (name, _) in pa + pb where !names.contains(name) { names.append(name) }
        for name in names {
            let va = pa.first { $0.0 == name }?.1, vb = pb.first { $0.0 == name }?.1
            wanted.append(va != nil && va == vb ? "\(name)=\(va!)" : "\(name)=")
        }
        return wanted
    }

    func testEveryCallTheClientMakesIsInTheContract() throws {
        let text = try String(contentsOf: Self.document, encoding: .utf8).replacingOccurrences(of: "\\|", with: "|")
        let lines = text.split(separator: "\n").map(String.init)
        for (name, a, b) in Self.calls() {
            let wanted = Self.expectations(a, b)
            let line = lines.first { line in wanted.allSatisfy { line.contains($0) } }
            if line == nil {
                let best = lines.max { l, r in wanted.filter { l.contains($0) }.count < wanted.filter { r.contains($0) }.count } ?? ""
                XCTFail("\(name): no line of docs/UPSTREAM.md says \(wanted); the closest lacks \(wanted.filter { !best.contains($0) })")
            }
        }
    }

    func testNoFileInTheRepositoryNamesAPathOutsideIt() throws {
        let root = Self.document.deletingLastPathComponent().deletingLastPathComponent()
        let outside = "../" + "shared"   // written in two pieces so this file does not name it
        var offenders: [String] = []
        let skip: Set<String> = [".build", ".git", ".build-readers", "out", ".swiftpm"]
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey])!
        for case let url as URL in walker {
            if skip.contains(url.lastPathComponent) { walker.skipDescendants(); continue }
            guard (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) != true,
                  let data = try? Data(contentsOf: url), data.count < 4 << 20,
                  let text = String(data: data, encoding: .utf8) else { continue }
            if text.contains(outside) { offenders.append(String(url.path.dropFirst(root.path.count))) }
        }
        XCTAssertEqual(offenders, [], "files that point outside the repository")
    }
}
