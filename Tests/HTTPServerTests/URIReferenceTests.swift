import HTTPServer
import XCTest
@testable import HTTPCore

/// RFC 3986 §5.4: every example of reference resolution, normal and abnormal.
final class URIReferenceTests: XCTestCase {
    let base = URIReference("http://a/b/c/d;p?q")

    func resolve(_ ref: String) -> String { base.resolving(URIReference(ref)).description }

    func testNormalExamples() {
        let cases = [
            ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
            ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"),
            ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"),
            ("g;x?y#s", "http://a/b/c/g;x?y#s"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"),
            ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
            ("../../g", "http://a/g"),
        ]
        for (ref, want) in cases { XCTAssertEqual(resolve(ref), want, ref) }
    }

    func testAbnormalExamples() {
        let cases = [
            ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
            ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
            ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
            ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"),
            ("g?y/../x", "http://a/b/c/g?y/../x"), ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"),
            ("http:g", "http:g"),
        ]
        for (ref, want) in cases { XCTAssertEqual(resolve(ref), want, ref) }
    }

    /// What Wikimedia's REST API sends for a redirect: `Location: Mumbai`, relative to the summary URL.
    func testWikimediaRelativeLocation() {
        let summary = URIReference("https://en.wikipedia.org/api/rest_v1/page/summary/Bombay")
        XCTAssertEqual(summary.resolving(URIReference("Mumbai")).description, "https://en.wikipedia.org/api/rest_v1/page/summary/Mumbai")
        XCTAssertEqual(summary.resolving(URIReference("Caf%C3%A9")).description, "https://en.wikipedia.org/api/rest_v1/page/summary/Caf%C3%A9")
        XCTAssertEqual(URIReference("http://127.0.0.1:9000/en").origin, "http://127.0.0.1:9000")
        XCTAssertNil(URIReference("/en/x").origin)
    }
}
