import Foundation
import XCTest
import TestSupport
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// The upstream decoder against Foundation's `JSONDecoder`, which it replaced: the same values from Wikimedia's
/// recorded answers and from shapes the lenient readers were written for, the same errors by the same rules.
final class UpstreamJSONDecoderTests: XCTestCase {
    func ours<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        var d = UpstreamJSONDecoder()
        d.userInfo[SkippedItems.key] = SkippedItems(pagesKind: "test")
        return try d.decode(type, from: bytes)
    }

    func foundation<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        let d = JSONDecoder()
        d.userInfo[SkippedItems.key] = SkippedItems(pagesKind: "test")
        return try d.decode(type, from: Data(bytes))
    }

    /// Values both decoders gave (and compared), across a test.
    var compared = 0

    /// Both decoders on one document: both fail, or both give values that print the same.
    func agree<T: Decodable>(_ type: T.Type, _ bytes: [UInt8], _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        let a = Result { try ours(type, bytes) }, b = Result { try foundation(type, bytes) }
        switch (a, b) {
        case (.success(let x), .success(let y)):
            compared += 1
            XCTAssertEqual(String(reflecting: x), String(reflecting: y), name, file: file, line: line)
        case (.failure, .failure): break
        default: XCTFail("\(name): ours \(a), Foundation \(b)", file: file, line: line)
        }
    }

    func agreeOnEveryModel(_ bytes: [UInt8], _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        agree(FeaturedFeed.self, bytes, name, file: file, line: line)
        agree(PageSummary.self, bytes, name, file: file, line: line)
        agree(ActionEnvelope<PagesQuery>.self, bytes, name, file: file, line: line)
        agree(ActionEnvelope<NotificationsQuery>.self, bytes, name, file: file, line: line)
        agree(ActionEnvelope<TokensQuery>.self, bytes, name, file: file, line: line)
        agree(ActionEnvelope<ImageInfoQuery>.self, bytes, name, file: file, line: line)
        agree(ActionEnvelope<LangLinksQuery>.self, bytes, name, file: file, line: line)
        agree(ActionEnvelope<SiteInfoQuery>.self, bytes, name, file: file, line: line)
        agree(ParseAnswer.self, bytes, name, file: file, line: line)
    }

    func testRecordedAnswersDecodeAsFoundationDecodesThem() throws {
        for url in try RealAnswersTests.fixtureFiles() {
            agreeOnEveryModel([UInt8](try Data(contentsOf: url)), url.lastPathComponent)
        }
    }

    func testLenientShapesDecodeAsFoundationDecodesThem() {
        let docs = [
            #"{"tfa":{"no":"title"},"mostread":{"articles":[{"title":"A","views":1},7,{"views":2}]},"news":[{"story":"s","links":[{"title":"B"},[]]},{"links":[]}],"onthisday":[{"text":"t","year":"1969","pages":[{"title":"C"}]},{"year":1}]}"#,
            #"{"query":{"pages":[{"ns":"0","title":"Gone","missing":""},{"ns":0,"title":"Mercury","pageprops":{"disambiguation":""}}]}}"#,
            #"{"query":{"pages":[{"ns":0},{"ns":0,"title":"Ok","index":2.0,"coordinates":[{"lat":"1.5","lon":2,"primary":""}]}]}}"#,
            #"{"batchcomplete":true,"query":{"notifications":{"list":[{"id":"31","read":"","timestamp":{"utcunix":"1473272185"}},{"id":1.5},null,[]],"count":7,"rawcount":"7","continue":12}}}"#,
            #"{"title":"T","extract":"e","thumbnail":{"source":"s","width":"320","height":2.5},"coordinates":{"lat":1e1,"lon":-0}}"#,
            #"{"error":{"code":"badtoken","info":"x"},"servedby":"mw"}"#,
            #"{"query":{"tokens":{"csrftoken":null}}}"#,
            #"{"query":"nope"}"#, #"[]"#, #"null"#, #"{}"#, #"{"query":{"pages":{}}}"#,
            #"{"title":123,"extract":["x"]}"#, #"{"query":{"pages":[{"ns":1e400,"title":"Big"}]}}"#,
            #"{"query":{"pages":[{"ns":99999999999999999999,"title":"Huge"}]}}"#,
            #"{"a":1,"a":2,"query":{"tokens":{"csrftoken":"one","csrftoken":"two"}}}"#,
        ]
        for doc in docs { agreeOnEveryModel(Array(doc.utf8), doc) }
        XCTAssertGreaterThan(compared, 40)
    }

    /// Mutated recorded answers (seeded: a failure replays): both decoders fail, or they agree.
    func testMutatedAnswersDecodeAsFoundationDecodesThemOrFail() throws {
        var rng = SeededGenerator(state: 20261125)
        let files = try RealAnswersTests.fixtureFiles().map { [UInt8](try Data(contentsOf: $0)) }
        let tokens: [[UInt8]] = ["null", "0", "1.5", "\"\"", "[]", "{}", "true", "\"7\"", "-1e3"].map { Array($0.utf8) }
        for round in 0..<300 {
            var doc = files[Int(rng.next() % UInt64(files.count))]
            // Replace a value after some colon with another JSON value: the document stays JSON, its types change.
            let colons = doc.indices.filter { doc[$0] == UInt8(ascii: ":") }
            guard let at = colons.isEmpty ? nil : colons[Int(rng.next() % UInt64(colons.count))] else { continue }
            var end = at + 1
            if let first = doc[(at + 1)...].first, first != UInt8(ascii: "{"), first != UInt8(ascii: "[") {
                var inString = false, escaped = false
                while end < doc.count {
                    let c = doc[end]
                    if inString { if escaped { escaped = false } else if c == UInt8(ascii: "\\") { escaped = true } else if c == UInt8(ascii: "\"") { inString = false } }
                    else if c == UInt8(ascii: "\"") { inString = true }
                    else if c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") { break }
                    end += 1
                }
                doc.replaceSubrange((at + 1)..<end, with: tokens[Int(rng.next() % UInt64(tokens.count))])
            }
            agreeOnEveryModel(doc, "round \(round)")
        }
        XCTAssertGreaterThan(compared, 1000, "most mutated answers still decode, and are compared")
    }

    func testNumbersNullsAndTypesFollowJSONDecodersRules() throws {
        struct N: Decodable { var i: Int?; var d: Double?; var s: String?; var b: Bool?; var u8: UInt8? }
        func both(_ doc: String) -> (N?, N?) { (try? ours(N.self, Array(doc.utf8)), try? foundation(N.self, Array(doc.utf8))) }
        for doc in [#"{"i":3.0}"#, #"{"i":1e2}"#, #"{"i":-0}"#, #"{"i":3.5}"#, #"{"i":"3"}"#, #"{"i":9223372036854775807}"#,
                    #"{"i":9223372036854775808}"#, #"{"d":1e400}"#, #"{"d":"1"}"#, #"{"s":1}"#, #"{"b":0}"#, #"{"b":"true"}"#,
                    #"{"u8":256}"#, #"{"u8":-1}"#, #"{"i":null,"s":null}"#, #"{}"#] {
            let (a, b) = both(doc)
            XCTAssertEqual(a.map { String(reflecting: $0) }, b.map { String(reflecting: $0) }, doc)
        }
        struct Link: Decodable { var url: URL?; var urls: [URL]? }
        for doc in [#"{"url":"https://en.wikipedia.org/wiki/Dog","urls":["/wiki/A","b"]}"#, #"{"url":""}"#, #"{"url":7}"#, #"{"url":{"relative":"x"}}"#] {
            let a = try? ours(Link.self, Array(doc.utf8)), b = try? foundation(Link.self, Array(doc.utf8))
            XCTAssertEqual(a.map { String(reflecting: $0) }, b.map { String(reflecting: $0) }, doc)
        }
        struct Required: Decodable { var n: Int }
        XCTAssertThrowsError(try ours(Required.self, Array(#"{"n":null}"#.utf8)))
        XCTAssertThrowsError(try ours(Required.self, Array(#"{}"#.utf8)))
        XCTAssertEqual(try ours(Required.self, Array(#" { "n" : 7 } "#.utf8)).n, 7)
        XCTAssertEqual(try ours([Int?].self, Array("[1,null,3]".utf8)), [1, nil, 3])
        XCTAssertEqual(try ours([String: [Int]].self, Array(#"{"a":[1],"b":[]}"#.utf8)), ["a": [1], "b": []])
    }

    func testMalformedOrTooDeepDocumentsAreRefused() {
        for doc in ["", "{", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "{\"a\":01}", "{\"a\":\"\u{01}\"}", "{\"a\":1}x", "nul"] {
            XCTAssertThrowsError(try ours([String: Int].self, Array(doc.utf8)), doc.debugDescription)
        }
        XCTAssertThrowsError(try ours(JSONValue.self, Array((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8)))
        XCTAssertNoThrow(try ours(JSONValue.self, Array((String(repeating: "[", count: 100) + String(repeating: "]", count: 100)).utf8)))
    }
}

