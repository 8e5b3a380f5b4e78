import EventLoops
import TestSupport
import XCTest
@testable import HTTPServer
@testable import HTTPCore

final class ParserRandomizedTests: XCTestCase {
    static let corpus: [String] = [
        "GET /feed?lang=en HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n",
        "POST /notifications/read HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"all\":true}",
        "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4;a=b\r\nwiki\r\n0\r\nT: 1\r\n\r\n",
        "GET http://h/summary/Caf%C3%A9 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "HEAD / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi",
    ]
    static let allowedErrors: Set<Int> = [400, 413, 414, 417, 431, 501, 505]

    func mutate(_ input: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
        var b = input
        let specials: [UInt8] = [0, 9, 10, 13, 32, 37, 58, 59, 0x7f, 0xff, 48, 70]
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            guard !b.isEmpty else { break }
            let i = Int.random(in: 0..<b.count, using: &rng)
            switch Int.random(in: 0..<7, using: &rng) {
            case 0: b[i] = UInt8.random(in: 0...255, using: &rng)
            case 1: b[i] = specials.randomElement(using: &rng)!
            case 2: b.insert(specials.randomElement(using: &rng)!, at: i)
            case 3: b.remove(at: i)
            case 4: b.insert(contentsOf: b[i..<min(b.count, i + Int.random(in: 1...20, using: &rng))], at: i)
            case 5: b = Array(b[0..<i])
            default: b.insert(contentsOf: Array("\r\nContent-Length: 9999999999999999999\r\n".utf8), at: i)
            }
        }
        return b
    }

    /// Random and mutated requests in random pieces: the parser never crashes, never loops, and every
    /// outcome is a request, a need for more bytes, or an error status from the allowed set.
    /// The written-out token set is the token rule: every byte, both ways.
    func testTheTokenBitSetIsTheTokenRule() {
        for c in 0...255 {
            XCTAssertEqual(ByteScan.inSet(UInt8(c), ByteScan.tokenBits), ByteScan.isToken(UInt8(c)), "byte \(c)")
        }
    }

    /// A field name's end found eight bytes at a time is where the token rule, byte by byte, ends it: every byte
    /// value in every place of a word (bytes above 0x7F, letters next to `@`, `[`, `` ` `` and `{`, dashes, digits).
    func testTheTokenEndAWordAtATimeIsTheTokenRule() {
        var rng = SeededGenerator(state: 0x70ce)
        let letters = Array(UInt8(ascii: "a")...UInt8(ascii: "z")) + Array(UInt8(ascii: "A")...UInt8(ascii: "Z")) + [45, 45, 45]
        for round in 0..<40_000 {
            let n = Int(rng.next() % 24)
            var b = (0..<n).map { _ in letters[Int(rng.next() % UInt64(letters.count))] }
            if n > 0 && round % 4 != 0 {
                // One byte of any value somewhere.
                b[Int(rng.next() % UInt64(n))] = UInt8(truncatingIfNeeded: rng.next())
            }
            let from = n > 0 ? Int(rng.next() % UInt64(min(n, 3) + 1)) : 0
            var expected = from
            while expected < n, ByteScan.isToken(b[expected]) { expected += 1 }
            b.withUnsafeBufferPointer { p in XCTAssertEqual(ByteScan.tokenEnd(p, from: from, to: n), expected, "\(b) from \(from)") }
        }
        // Every byte value in every place of two words.
        for c in 0...255 {
            for at in 0..<16 {
                var b = Array("Content-Encoding".utf8)
                b[at] = UInt8(c)
                b.withUnsafeBufferPointer { p in XCTAssertEqual(ByteScan.tokenEnd(p, from: 0, to: 16), ByteScan.isToken(UInt8(c)) ? 16 : at, "byte \(c) at \(at)") }
            }
        }
    }

    /// A name compared with a lower-case one eight bytes at a time matches exactly when, byte by byte, each byte folded
    /// to lower case is the pattern's: every byte value in every place of the words of each pattern's length (the
    /// capitals, the control bytes whose 0x20 bit makes them look like `-` or a digit, DEL, bytes above 0x7F).
    func testNamesComparedAWordAtATimeAreComparedByTheByteRule() {
        func byByte(_ b: [UInt8], _ pattern: String) -> Bool {
            b.count == pattern.utf8.count && zip(b, pattern.utf8).allSatisfy { ASCII.lower($0) == $1 }
        }
        let patterns: [(StaticString, String)] = [("authorization", "authorization"), ("keep-alive", "keep-alive"),
            ("content-length", "content-length"), ("x-request-id", "x-request-id"), ("transfer-encoding", "transfer-encoding"),
            ("bearer", "bearer"), ("x-0123456789-y", "x-0123456789-y")]
        for (pattern, text) in patterns {
            let word = Array(text.utf8)
            for at in 0..<word.count {
                for c in 0...255 {
                    var b = word
                    b[at] = UInt8(c)
                    b.withUnsafeBufferPointer { p in XCTAssertEqual(ASCII.equalsLowercase(p, pattern), byByte(b, text), "byte \(c) at \(at) of \(text)") }
                }
            }
            let upper = Array(text.uppercased().utf8)
            upper.withUnsafeBufferPointer { p in XCTAssertTrue(ASCII.equalsLowercase(p, pattern), text) }
        }
    }

    /// The word-at-a-time hex digits are the digits written one at a time, for every nibble in every place.
    func testHexDigitsAWordAtATimeAreTheDigitsOneAtATime() {
        var rng = SeededGenerator(state: 0x4e78)
        var values: [UInt64] = [0, 1, 9, 10, 15, 16, .max, 0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210, 0x9999_9999_aaaa_aaaa]
        for shift in 0..<64 { values.append(1 << UInt64(shift)); values.append(0xA << UInt64(shift / 4 * 4)) }
        for _ in 0..<10_000 { values.append(rng.next()) }
        var a = [UInt8](repeating: 0, count: 16), b = a
        for v in values {
            a.withUnsafeMutableBufferPointer { FNV1a.writeHex(v, $0.baseAddress!) }
            b.withUnsafeMutableBufferPointer { FNV1a.writeHexByDigit(v, $0.baseAddress!) }
            XCTAssertEqual(a, b, "\(v)")
        }
        XCTAssertEqual(FNV1a.hex(0x0123_4567_89ab_cdef), "0123456789abcdef")
    }

    /// The written-out set of a Host value's bytes is the host rule: every byte, both ways.
    func testTheHostBitSetIsTheHostRule() {
        for c in 0...255 {
            XCTAssertEqual(ByteScan.inSet(UInt8(c), RequestParser.hostBits), RequestParser.isHostChar(UInt8(c)), "byte \(c)")
        }
    }

    /// A host's end found eight bytes at a time is where the host rule, byte by byte, ends it: every byte value in every
    /// place of two words, and random hosts of the common bytes with any byte somewhere.
    func testTheHostEndAWordAtATimeIsTheHostRule() {
        func byByte(_ b: [UInt8], _ from: Int) -> Int {
            var k = from
            while k < b.count, RequestParser.isHostChar(b[k]) { k += 1 }
            return k
        }
        for c in 0...255 {
            for at in 0..<16 {
                var b = Array("a-b.example:8080".utf8)
                b[at] = UInt8(c)
                b.withUnsafeBufferPointer { p in
                    XCTAssertEqual(ByteScan.hostEnd(p, from: 0, to: 16, bits: RequestParser.hostBits), byByte(b, 0), "byte \(c) at \(at)")
                }
            }
        }
        var rng = SeededGenerator(state: 0x4057)
        let common = Array("abcxyzABCXYZ0189-.:".utf8)
        for _ in 0..<40_000 {
            let n = Int(rng.next() % 30)
            var b = (0..<n).map { _ in common[Int(rng.next() % UInt64(common.count))] }
            if n > 0, rng.next() % 3 != 0 { b[Int(rng.next() % UInt64(n))] = UInt8(truncatingIfNeeded: rng.next()) }
            let from = n > 0 ? Int(rng.next() % UInt64(min(n, 3) + 1)) : 0
            b.withUnsafeBufferPointer { p in
                XCTAssertEqual(ByteScan.hostEnd(p, from: from, to: n, bits: RequestParser.hostBits), byByte(b, from), "\(b) from \(from)")
            }
        }
    }

    /// The word-at-a-time scans find the first byte a byte-by-byte loop finds, wherever it lies and whatever lies
    /// after it (bytes above 0x7F included: a borrow must not flag a byte before the first real one).
    func testTheWordScansFindTheFirstByteTheRuleFinds() {
        var rng = SeededGenerator(state: 0x5ca7)
        let alphabet: [UInt8] = [0, 9, 10, 13, 31, 32, 33, 0x7E, 0x7F, 0x80, 0x9F, 0xA0, 0xFF] + Array(UInt8(ascii: "a")...UInt8(ascii: "z"))
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            let from = Int.random(in: 0...max(0, bytes.count), using: &rng)
            bytes.withUnsafeBufferPointer { b in
                XCTAssertEqual(ByteScan.firstControl(b, from: from), (from..<b.count).first { b[$0] < 0x20 || b[$0] == 0x7F }, "\(bytes) from \(from)")
                XCTAssertEqual(ByteScan.firstLineBreak(b, from: from), (from..<b.count).first { b[$0] == 10 || b[$0] == 13 }, "\(bytes) from \(from)")
            }
        }
    }

    func testRandomAndMutatedInputsEndInARequestOrACleanError() {
        var rng = SeededGenerator(state: 0x1ede)
        var errors = 0, requests = 0
        for iteration in 0..<20_000 {
            let input: [UInt8]
            if iteration % 10 == 0 {
                input = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                let seed = Array(Self.corpus.randomElement(using: &rng)!.utf8)
                input = mutate(seed + (Bool.random(using: &rng) ? seed : []), &rng)
            }
            var parser = RequestParser(limits: ParserLimits(maxRequestLine: 256, maxHeaderBytes: 1024, maxBody: 4096))
            var offset = 0
            var steps = 0
            outer: while offset < input.count {
                let n = min(input.count - offset, Int.random(in: 1...64, using: &rng))
                parser.append(input[offset..<(offset + n)])
                offset += n
                while true {
                    steps += 1
                    XCTAssertLessThan(steps, 10_000, "no progress on iteration \(iteration)")
                    if steps >= 10_000 { break outer }
                    switch parser.next() {
                    case .needMore: continue outer
                    case .continueRequested: continue
                    case .request(let r):
                        requests += 1
                        XCTAssertTrue(r.method.utf8.allSatisfy(ByteScan.isToken))
                        XCTAssertTrue(r.path == "*" || r.path.hasPrefix("/"))
                    case .error(let e):
                        errors += 1
                        XCTAssertTrue(Self.allowedErrors.contains(e.status), "status \(e.status) on iteration \(iteration)")
                        if case .error = parser.next() {} else { XCTFail("parser must stay failed") }
                        break outer
                    }
                }
            }
        }
        XCTAssertGreaterThan(errors, 100)
        XCTAssertGreaterThan(requests, 100)
    }
}
