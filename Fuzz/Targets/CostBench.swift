#if LEDE_FUZZ_TESTABLE && !FUZZING
@testable import HTTPClient
@testable import HTTPServer
@testable import Lede
import Foundation
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Cost as a property: every reader and text rule on adversarial shapes at growing sizes. Linear work grows 8× from
/// one size to the next (4 KB → 32 KB → 256 KB); the table says how each grows and how long the largest took.
enum CostBench {
    struct Case: Sendable {
        let name: String
        /// The input of about `n` bytes.
        let make: @Sendable (Int) -> [UInt8]
        let run: @Sendable ([UInt8]) -> Void
    }

    static func repeated(_ unit: String, _ n: Int, then tail: String = "", times tailTimes: Bool = false) -> [UInt8] {
        let u = Array(unit.utf8)
        let k = max(1, n / max(1, u.count + (tailTimes ? tail.utf8.count : 0)))
        var out: [UInt8] = []
        for _ in 0..<k { out += u }
        if tailTimes { for _ in 0..<k { out += Array(tail.utf8) } } else { out += Array(tail.utf8) }
        return out
    }

    static func text(_ b: [UInt8]) -> String { String(decoding: b, as: UTF8.self) }

    static func feedPieces(_ b: [UInt8], piece: Int) {
        var p = ResponseParser(limits: .init(maxBody: 8 << 20))
        var i = 0
        while i < b.count {
            let end = min(b.count, i + piece)
            guard let done = try? b[i..<end].withUnsafeBytes({ try p.feed($0) }), !done else { return }
            i = end
        }
    }

    /// A Parsoid page of about `n` bytes shaped as real ones are: paragraphs with citations, then one reference list
    /// of web and book citations (a tenth of a page's bytes are references on long articles; here about half).
    static func parsoidPage(_ n: Int) -> [UInt8] {
        var out = Array("<!DOCTYPE html><html><head><meta charset=\"utf-8\"/></head><body class=\"mw-parser-output\"><section data-mw-section-id=\"0\"><p>".utf8)
        let notes = max(1, n / 1_100)
        for k in 0..<notes {
            out += Array("Some sentence of the article's text with <a rel=\"mw:WikiLink\" href=\"./Other_page_\(k)\" title=\"Other\">a link</a> in it.".utf8)
            out += Array("<sup about=\"#mwt\(k)\" class=\"mw-ref reference\" id=\"cite_ref-\(k)\" rel=\"dc:references\" typeof=\"mw:Extension/ref\" data-mw='{\"name\":\"ref\",\"body\":{\"id\":\"mw-reference-text-cite_note-\(k)\"}}'><a href=\"./Page#cite_note-\(k)\"><span class=\"mw-reflink-text\"><span class=\"cite-bracket\">[</span>\(k + 1)<span class=\"cite-bracket\">]</span></span></a></sup>".utf8)
        }
        out += Array("</p></section><section><h2 id=\"References\">References</h2><div class=\"mw-references-wrap\" typeof=\"mw:Extension/references\"><ol class=\"mw-references references\">".utf8)
        for k in 0..<notes {
            out += Array("<li about=\"#cite_note-\(k)\" id=\"cite_note-\(k)\"><span class=\"mw-cite-backlink\"><a href=\"./Page#cite_ref-\(k)\" rel=\"mw:referencedBy\"><span class=\"mw-linkback-text\">↑ </span></a></span> <span id=\"mw-reference-text-cite_note-\(k)\" class=\"mw-reference-text reference-text\"><cite id=\"CITEREF\(k)\" class=\"citation \(k % 2 == 0 ? "web" : "book") cs1\">\"<a rel=\"mw:ExtLink\" href=\"https://example.org/articles/\(k)?a=1&amp;b=2\" class=\"external text\">A source, number \(k)</a>\". <i>Example</i>. Retrieved 2026-11-20.</cite><span title=\"ctx_ver=Z39.88-2004&amp;rft_val_fmt=info\" class=\"Z3988\"></span></span></li>".utf8)
        }
        out += Array("</ol></div></section></body></html>".utf8)
        return out
    }

    static let cases: [Case] = [
        Case(name: "ReferenceScanner.scan  Parsoid page (citations, one list)", make: parsoidPage,
             run: { _ = ReferenceScanner.scan($0, lang: .english).jsonBytes }),
        Case(name: "ReferenceScanner.scan  <b> ×k in one note (nesting)", make: { n in
            [UInt8]("<ol class=\"mw-references\"><li id=\"cite_note-1\"><span class=\"mw-reference-text\">".utf8) + repeated("<b>", n)
        }, run: { _ = ReferenceScanner.scan($0, lang: .english).jsonBytes }),
        Case(name: "ReferenceScanner.scan  <li id=cite_note- ×k (notes)", make: { n in
            [UInt8]("<ol class=\"mw-references\">".utf8) + repeated("<li id=\"cite_note-x\"><span class=\"mw-reference-text\">a</span>", n)
        }, run: { _ = ReferenceScanner.scan($0, lang: .english).jsonBytes }),
        Case(name: "ReferenceScanner.scan  <a  ×k (unclosed tags)", make: { repeated("<a ", $0) }, run: { _ = ReferenceScanner.scan($0, lang: .english) }),
        Case(name: "PronunciationStripper.clean  [ˈɑ ( ×k )×k", make: { repeated("[ˈɑ (", $0, then: ")", times: true) },
             run: { _ = PronunciationStripper.clean(text($0)) }),
        Case(name: "PronunciationStripper.clean  (ˈ ×k", make: { repeated("(ˈ", $0) }, run: { _ = PronunciationStripper.clean(text($0)) }),
        Case(name: "PronunciationStripper.cleanHTML  <span>[ˈɑ ( ×k )×k", make: { repeated("<span>[ˈɑ (", $0, then: ")</span>", times: true) },
             run: { _ = PronunciationStripper.cleanHTML(text($0)) }),
        Case(name: "HTMLText.plain  <a  ×k (unclosed tags)", make: { repeated("<a ", $0) }, run: { _ = HTMLText.plain(text($0)) }),
        Case(name: "HTMLText.plain  <script>< ×k", make: { [UInt8]("<script>".utf8) + repeated("<", $0) }, run: { _ = HTMLText.plain(text($0)) }),
        Case(name: "HTMLText.plain  &#x1F600 ×k (unended references)", make: { repeated("&#x1F600", $0) }, run: { _ = HTMLText.plain(text($0)) }),
        Case(name: "JSONPaths  [[[…]]] and \\u escapes", make: { n in
            [UInt8]("{\"query\":{\"notifications\":{\"rawcount\":1,\"x\":\"".utf8) + repeated("\\u00e9\\ud83d\\ude00", n) + [UInt8]("\"}},\"a\":".utf8)
                + repeated("[", 500) + repeated("]", 500) + [UInt8]("}".utf8)
        }, run: { _ = try? JSONPaths.values($0, at: WikimediaClient.unreadPaths) }),
        Case(name: "JSONPaths  {\"a\":1,… ×k keys", make: { [UInt8]("{".utf8) + repeated("\"query\":{},", $0) + [UInt8]("\"a\":1}".utf8) },
             run: { _ = try? JSONPaths.values($0, at: WikimediaClient.unreadPaths) }),
        Case(name: "ResponseParser  1-byte pieces, one long field (head cap 64 KB)", make: { n in
            [UInt8]("HTTP/1.1 200 OK\r\nX-A: ".utf8) + repeated("b", n) + [UInt8]("\r\nContent-Length: 0\r\n\r\n".utf8)
        }, run: { feedPieces($0, piece: 1) }),
        Case(name: "ResponseParser  1-byte pieces, 150 fields then a body of k", make: { n in
            [UInt8]("HTTP/1.1 200 OK\r\n".utf8) + repeated("X-A: b\r\n", 1200) + [UInt8]("Content-Length: \(n)\r\n\r\n".utf8) + repeated("x", n)
        }, run: { feedPieces($0, piece: 1) }),
        Case(name: "ResponseParser  1-byte pieces, trailer lines of k (cap 16 KB)", make: { n in
            [UInt8]("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-T: ".utf8) + repeated("t", n) + [UInt8]("\r\n\r\n".utf8)
        }, run: { feedPieces($0, piece: 1) }),
        Case(name: "ResponseParser  chunks 1\\r\\nx\\r\\n ×k, 7-byte pieces", make: { n in
            [UInt8]("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8) + repeated("1\r\nx\r\n", n) + [UInt8]("0\r\n\r\n".utf8)
        }, run: { feedPieces($0, piece: 7) }),
        Case(name: "RequestParser  1-byte pieces, fields ×k", make: { n in
            [UInt8]("GET / HTTP/1.1\r\nHost: a\r\n".utf8) + repeated("X-A: b\r\n", n) + [UInt8]("\r\n".utf8)
        }, run: { b in
            var p = RequestParser(limits: ParserLimits(maxHeaderBytes: 1 << 20, maxHeaderCount: 1 << 20))
            for byte in b { p.append(CollectionOfOne(byte)); if case .error = p.next() { return } }
            _ = p.next()
        }),
        Case(name: "Inflater  zeros bomb (cap 64 KB)", make: { n in
            Gzip.compress([UInt8](repeating: 0, count: n * 256))!
        }, run: { _ = Inflater.decompress($0, limit: 64 << 10) }),
        Case(name: "decoders  summary with an extract of [ˈɑ ( ×k )×k", make: { n in
            [UInt8]("{\"title\":\"Dog\",\"extract\":\"".utf8) + repeated("[ˈɑ (", n, then: ")", times: true)
                + [UInt8]("\",\"extract_html\":\"<p>".utf8) + repeated("[ˈɑ (", n, then: ")", times: true) + [UInt8]("</p>\"}".utf8)
        }, run: { b in
            guard let s = try? UpstreamJSONDecoder().decode(PageSummary.self, from: b) else { fatalError("the summary does not decode") }
            _ = JSONLines.encode(Card(summary: s, lang: LanguageCode("en")!))
        }),
        Case(name: "decoders  a summary of ×k members (each key looked up among them all)", make: { n in
            [UInt8]("{\"title\":\"Dog\"".utf8) + repeated(",\"k\":0", n) + [UInt8]("}".utf8)
        }, run: { b in
            guard (try? UpstreamJSONDecoder().decode(PageSummary.self, from: b)) != nil else { fatalError("the summary does not decode") }
        }),
        Case(name: "decoders  notifications of [ ×k ] nested 500 deep", make: { n in
            [UInt8]("{\"query\":{\"notifications\":{\"list\":[".utf8)
                + Array(repeating: [UInt8]((String(repeating: "[", count: 500) + String(repeating: "]", count: 500) + ",").utf8), count: max(1, n / 1001)).joined()
                + [UInt8]("{}]}}}".utf8)
        }, run: { b in
            _ = try? UpstreamJSONDecoder().decode(ActionEnvelope<NotificationsQuery>.self, from: b)
        }),
        Case(name: "ServerSentEvent.encoded  \\r ×k", make: { repeated("\r", $0) },
             run: { _ = ServerSentEvent(event: "e", id: "1", data: text($0)).encoded }),
        Case(name: "ArticleURL  https://en.wikipedia.org/wiki/%C3%A9 ×k", make: { [UInt8]("https://en.wikipedia.org/wiki/".utf8) + repeated("%C3%A9", min($0, 2000)) },
             run: { _ = ArticleURL(text($0)) }),
    ]

    /// Median seconds of `run` over a few repetitions (more for small inputs).
    static func time(_ c: Case, _ input: [UInt8]) -> Double {
        var samples: [Double] = []
        let start = Date()
        repeat {
            let t0 = DispatchTime.now().uptimeNanoseconds
            c.run(input)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
        } while samples.count < 3 || (samples.count < 50 && Date().timeIntervalSince(start) < 0.5)
        return samples.sorted()[samples.count / 2]
    }

    static func run(sizes: [Int], only: String? = nil) {
        print("| reader and shape | " + sizes.map { "\($0 >> 10) KB" }.joined(separator: " | ") + " | growth per step | largest, ms |")
        print("|---|" + sizes.map { _ in "---:|" }.joined() + "---:|---:|")
        for c in cases where only.map({ c.name.contains($0) }) ?? true {
            let times = sizes.map { time(c, c.make($0)) }
            var growth: [String] = []
            for k in 1..<times.count { growth.append(String(format: "%.1f×", times[k] / max(times[k - 1], 1e-9))) }
            print("| \(c.name) | " + times.map { String(format: "%.3f ms", $0 * 1000) }.joined(separator: " | ")
                  + " | \(growth.joined(separator: ", ")) | \(String(format: "%.2f", (times.last ?? 0) * 1000)) |")
        }
    }
}
#endif
