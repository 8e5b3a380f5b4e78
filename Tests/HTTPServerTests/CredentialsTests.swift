import XCTest
import HTTPCore
@testable import HTTPServer

/// The credentials of a parsed request are read where the parser noted its `Authorization` field (no search by name):
/// the same verdict as the search over its fields gives, wherever the field is, however its name is written, once or
/// more, and on the parser's second request of a connection (its recycled box).
final class CredentialsTests: XCTestCase {
    func testCredentialsReadWhereTheParserNotedThemAreTheFieldsOwn() throws {
        let cases: [(fields: String, expected: Credentials)] = [
            ("", .none),
            ("Authorization: Bearer abc\r\n", .bearer("Bearer abc")),
            ("Accept: */*\r\nX-A: 1\r\nauthorization: bearer t0k.en=\r\n", .bearer("Bearer t0k.en=")),
            ("AUTHORIZATION: Bearer x\r\nX-B: 2\r\n", .bearer("Bearer x")),
            ("Authorization: Bearer a\r\nX-C: 3\r\nAuthorization: Bearer a\r\n", .invalid(.repeated)),
            ("Authorization: Basic Zm9vOmJhcg==\r\n", .invalid(.scheme)),
            ("X-D: 4\r\nAuthorization: Bearer a b\r\n", .invalid(.token)),
            ("Authorization: Bearer\r\n", .invalid(.scheme)),
            ("X-Authorization: Bearer nope\r\n", .none),
        ]
        var parser = RequestParser()
        for (fields, expected) in cases {
            // Twice on one parser: the second request is built in the first one's recycled box.
            for round in 0..<2 {
                parser.append(Array("GET /x HTTP/1.1\r\nHost: h\r\n\(fields)\r\n".utf8))
                guard case .request(var request) = parser.next() else { return XCTFail("\(fields) did not parse") }
                XCTAssertEqual(Credentials.read(request), expected, "\(fields) (request \(round + 1))")
                XCTAssertEqual(Credentials.read(request.headers), expected, "\(fields), searched by name")
                parser.recycle(&request)
            }
        }
    }

    func testFieldsSetInCodeAreSearchedByName() {
        var request = HTTPRequest(method: "GET", target: "/x", path: "/x", query: nil)
        XCTAssertEqual(Credentials.read(request), .none)
        request.headers = ["X-A": "1", "Authorization": "Bearer set-in-code"]
        XCTAssertEqual(Credentials.read(request), .bearer("Bearer set-in-code"))
    }
}
