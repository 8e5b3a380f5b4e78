// libFuzzer target for RequestParser. Build and run with Fuzz/run.sh.
// The first input byte chooses how the rest is cut into pieces, so the fuzzer explores incremental
// arrival as well as content. Any crash, hang, sanitizer report or broken invariant is a finding.

let allowedErrors: Set<Int> = [400, 413, 414, 417, 431, 501, 505]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let piece = Int(bytes[0] % 32) + 1
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
            if steps > 100_000 { fatalError("parser made no progress") }
            switch parser.next() {
            case .needMore: continue outer
            case .continueRequested: continue
            case .request(let r):
                precondition(!r.method.isEmpty && (r.path == "*" || r.path.hasPrefix("/")), "invalid request accepted")
                precondition(r.body.count <= 8192, "body over the limit")
                // Segments are decoded lazily; every accepted path must decode.
                if r.path != "*" {
                    for seg in Array(r.path.utf8).split(separator: 47, omittingEmptySubsequences: false).dropFirst() {
                        _ = try! RequestParser.decodeSegment(Array(seg))
                    }
                    _ = r.pathSegments
                }
            case .error(let e):
                precondition(allowedErrors.contains(e.status), "unexpected status \(e.status)")
                if case .error = parser.next() {} else { fatalError("parser recovered after an error") }
                break outer
            }
        }
    }
    return 0
}
