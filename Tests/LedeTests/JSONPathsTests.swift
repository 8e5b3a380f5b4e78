import Foundation
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// The badge's JSON reader: strict about the whole document, lenient about the one number it reads.
final class JSONPathsTests: XCTestCase {
    func read(_ text: String, _ paths: [[String]]) throws -> [[String]: JSONPaths.Value] {
        try JSONPaths.values(Array(text.utf8), at: paths)
    }

    func testValuesAtPathsAndNothingElse() throws {
        let doc = #"{"batchcomplete":true,"query":{"notifications":{"list":[{"id":1,"query":{"x":2}}],"count":"99+","rawcount":120}},"x":null}"#
        let found = try read(doc, WikimediaClient.unreadPaths)
        XCTAssertEqual(found[["query", "notifications"]]?.kind, .object)
        XCTAssertEqual(found[["query", "notifications", "rawcount"]], .init(kind: .number, text: "120"))
        XCTAssertNil(found[["error"]])
        XCTAssertEqual(found.count, 2, "values inside the list are not paths from the top")
        let e = try read(#"{"error":{"code":"mwoauth-invalid-authorization","info":"\u00e9\"\n"}}"#, [["error", "code"], ["error", "info"]])
        XCTAssertEqual(e[["error", "code"]]?.text, "mwoauth-invalid-authorization")
        XCTAssertEqual(e[["error", "info"]]?.text, "é\"\n")
        XCTAssertEqual(try read(#" {"a" : "\ud83d\ude00 ok" } "#, [["a"]])[["a"]]?.text, "😀 ok")
    }

    /// The first eight values are held in place and the rest in an array: a query of twelve paths reads each where it is.
    func testAQueryOfMoreThanEightPathsReadsEveryOne() throws {
        let doc = Array(("{" + (0..<12).map { "\"k\($0)\":\($0 * 10)" }.joined(separator: ",") + "}").utf8)
        let query = JSONPaths.Query((0..<12).reversed().map { ["k\($0)"] } + [["missing"]])
        let found = try query.read(doc)
        for i in 0..<12 { XCTAssertEqual(found[i]?.text, String((11 - i) * 10), "path \(i)") }
        XCTAssertNil(found[12])
    }

    func testTheNumberIsReadLeniently() throws {
        for (raw, want) in [("7", 7), ("\"12\"", 12), ("3.0", 3), ("1e2", 100), ("\"x\"", nil), ("[]", nil), ("2.5", nil), ("null", nil), ("true", nil)] as [(String, Int?)] {
            let v = try read(#"{"n":\#(raw)}"#, [["n"]])[["n"]]
            XCTAssertEqual(v?.lenientInt, want, raw)
        }
    }

    func testEveryRecordedAnswerIsValidAndAgreesWithFoundation() throws {
        for url in try RealAnswersTests.fixtureFiles() {
            let bytes = [UInt8](try Data(contentsOf: url))
            XCTAssertNoThrow(try JSONPaths.values(bytes, at: [["query"]]), url.lastPathComponent)
        }
    }

    /// A `\u` escape takes four hex digits by their byte ranges: control bytes 0x10–0x19 are not digits (a fuzzer
    /// found them read as `0`–`9`), and upper-case digits still are.
    func testAUnicodeEscapeOfControlBytesIsRefused() throws {
        var doc = Array(#"{"x":"\u"#.utf8)
        doc += [0x10, 0x11, 0x12, 0x13]
        doc += Array(#""}"#.utf8)
        XCTAssertThrowsError(try JSONPaths.values(doc, at: [["x"]]))
        XCTAssertEqual(try read(#"{"x":"\u00E9\u00e9"}"#, [["x"]])[["x"]]?.text, "éé")
    }

    /// RFC 8259 allows unpaired surrogate escapes: a high one followed by an escape that is not a low one is valid
    /// JSON (the fuzz target's strict reference found it refused). Each unpaired half reads as U+FFFD.
    func testUnpairedSurrogateEscapesAreValidJSON() throws {
        XCTAssertEqual(try read(#"{"x":"\ud800\u0041"}"#, [["x"]])[["x"]]?.text, "\u{FFFD}A")
        XCTAssertEqual(try read(#"{"x":"\ud800\ud83d\ude00"}"#, [["x"]])[["x"]]?.text, "\u{FFFD}😀")
        XCTAssertEqual(try read(#"{"x":"\udc00\ud800"}"#, [["x"]])[["x"]]?.text, "\u{FFFD}\u{FFFD}")
        XCTAssertThrowsError(try read(#"{"x":"\ud800\u00G0"}"#, [["x"]]), "the escape after it is still read strictly")
    }

    func testMalformedDocumentsAreRefused() {
        let bad = ["", " ", "{", "}", "{\"a\":}", "{\"a\" 1}", "{\"a\":1,}", "[1,]", "{a:1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}",
                   "{\"a\":.5}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"\u{01}\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12G4\"}",
                   "{\"a\":\"open}", "{\"a\":1} x", "{\"a\":1}{}", "[[[[", "{\"a\":[1 2]}", "'a'"]
        for text in bad {
            XCTAssertThrowsError(try read(text, [["a"]]), text.debugDescription)
            // Foundation refuses them too, except trailing commas, which it tolerates and RFC 8259 does not.
            if !text.contains(",}") && !text.contains(",]") {
                XCTAssertNil(try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]), "Foundation agrees: \(text.debugDescription)")
            }
        }
        // Invalid UTF-8 inside a string (a lone continuation byte, an overlong, a surrogate, a truncated sequence).
        for bytes: [UInt8] in [[0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF5, 0x80, 0x80, 0x80]] {
            XCTAssertThrowsError(try JSONPaths.values(Array("{\"a\":\"".utf8) + bytes + Array("\"}".utf8), at: [["a"]]), "\(bytes)")
        }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        XCTAssertThrowsError(try read(deep, []), "nesting is bounded")
        XCTAssertNoThrow(try read(String(repeating: "[", count: 100) + String(repeating: "]", count: 100), []))
    }
}
