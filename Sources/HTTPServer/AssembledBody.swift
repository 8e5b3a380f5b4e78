import HTTPCore
import CZlib

/// A piece of a body encoded once and shared between responses: its bytes, the same bytes compressed as a raw
/// deflate stream that ends on a byte boundary with no final block (a full flush, so streams of different
/// fragments concatenate into one valid deflate stream), their CRC-32 and a 64-bit identity (FNV-1a of the bytes).
/// Immutable; safe to share between event loops.
public final class BodyFragment: Sendable {
    public let bytes: [UInt8]
    public let deflated: [UInt8]
    public let crc: UInt32
    /// zlib's operator for appending this fragment's CRC to another (`crc32_combine_gen` of its length), made once:
    /// combining is then one multiplication, where `crc32_combine` rebuilt it per request (log2 of the length steps).
    let combineOp: UInt
    public let identity: UInt64

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.deflated = Deflate.flushed(bytes) ?? Deflate.stored(bytes)
        self.crc = Deflate.crc(bytes)
        self.combineOp = UInt(crc32_combine_gen(off_t(bytes.count)))
        self.identity = FNV1a.value(bytes)
    }

    public convenience init(_ string: String) { self.init(Array(string.utf8)) }

    /// An assembled body kept as one fragment, with nothing compressed again: its deflate stream is the pieces'
    /// streams and stored literals as assembled, its CRC the combined one. A body assembled per request that is asked
    /// for again (a user's nearby section for the same point) is then one piece, not one per fragment and number.
    public init(assembled body: AssembledBody) {
        bytes = body.identityBytes()
        var deflated: [UInt8] = []
        deflated.reserveCapacity(body.gzipCount)
        crc = body.appendDeflated(to: &deflated)
        self.deflated = deflated
        combineOp = UInt(crc32_combine_gen(off_t(bytes.count)))
        identity = FNV1a.mix(body.identity, 0x6173_7365_6d62_6c65)   // not the same word as the pieces' marks
    }
}

/// A body assembled per request from fragments encoded once and the few bytes that differ per request
/// (literals). Its identity representation is the concatenation; its gzip representation concatenates the
/// fragments' deflate streams (literals as stored blocks), ends the stream and combines the CRCs — nothing is
/// compressed per request. Its strong ETag comes from the fragments' identities and the literals' bytes, never from
/// hashing the assembled body.
public struct AssembledBody: Sendable {
    enum Piece {
        /// A fragment retained once by the storage that holds the piece (and released when it goes): read with no
        /// reference count taken (a body's pieces are read on their way to the socket, and each retain and release of
        /// a fragment is an atomic read-modify-write on memory both loops share: 17 of them a warm personal feed).
        case fragment(Unmanaged<BodyFragment>)
        /// A run of per-request bytes in `literals`.
        case literal(Range<Int>)
        /// A few per-request bytes (the commas between sections, the closing brackets) held in the piece itself.
        case short(ShortBytes)
    }

    /// Up to 15 bytes held inline: a body whose literals are all this short needs no buffer for them.
    public struct ShortBytes: Sendable {
        static let capacity = 15
        private var bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)
            = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        private var length: UInt8 = 0
        public var count: Int { Int(length) }

        init() {}

        /// Appends `more` when it fits (false when it does not: nothing is appended).
        mutating func append(_ more: UnsafeBufferPointer<UInt8>) -> Bool {
            let n = Int(length)
            guard more.count <= Self.capacity - n else { return false }
            withUnsafeMutableBytes(of: &bytes) { raw in
                for (i, b) in more.enumerated() { raw[n + i] = b }
            }
            length += UInt8(more.count)
            return true
        }

        /// The bytes, lent to `body`.
        public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
            try withUnsafeBytes(of: bytes) { raw in try body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: Int(length))) }
        }
    }

    /// Everything behind one reference: a body is copied several times on its way to the socket (into the response,
    /// out of it, into the encoder), and each copy of five fields cost four reference-count operations where one
    /// reference costs one. Copy-on-write: `append` copies it first when it is shared.
    final class Storage: @unchecked Sendable {   // invariant: mutated only through AssembledBody's mutating members, after isKnownUniquelyReferenced
        let contentType: String
        /// Whether `contentType` is one gzip is offered for, decided once (it was decided per response: 1.4k instructions).
        let compressible: Bool
        var fields: AssembledFields?
        var pieces: [Piece] = []
        var literals: [UInt8] = []
        var count = 0
        var hash: UInt64 = FNV1a.offset

        init(contentType: String, compressible: Bool) { self.contentType = contentType; self.compressible = compressible }

        func copy() -> Storage {
            let c = Storage(contentType: contentType, compressible: compressible)
            c.fields = fields; c.pieces = pieces; c.literals = literals; c.count = count; c.hash = hash
            c.forEachFragment { _ = $0.retain() }   // the copy holds its own
            return c
        }

        /// Each fragment piece holds the one retain `append` (or `copy`) took.
        deinit { forEachFragment { $0.release() } }

        /// By index, in place (a debug build's iterator allocates at each step).
        private func forEachFragment(_ body: (Unmanaged<BodyFragment>) -> Void) {
            pieces.withUnsafeBufferPointer { p in
                var i = 0
                while i < p.count {
                    if case .fragment(let f) = p[i] { body(f) }
                    i += 1
                }
            }
        }
    }

    private var storage: Storage

    public var contentType: String { storage.contentType }
    private var compressible: Bool { storage.compressible }
    /// The response fields this body always travels with, rendered once (then the response itself carries none).
    public var fields: AssembledFields? {
        get { storage.fields }
        set { unique(); storage.fields = newValue }
    }
    var pieces: [Piece] { storage.pieces }
    /// Every per-request byte, in order; literal pieces are ranges of it (one buffer, not one array per piece).
    public var literals: [UInt8] { storage.literals }
    /// Identity length.
    public var count: Int { storage.count }
    private var hash: UInt64 { storage.hash }

    public init(contentType: String = "application/json", capacity: Int = 16) {
        // JSON (nearly every body) without scanning the type's bytes.
        let compressible = contentType == Self.json || Compression.isCompressible(contentType)
        storage = Storage(contentType: contentType, compressible: compressible)
        storage.pieces.reserveCapacity(capacity)
    }

    private static let json = "application/json"

    private mutating func unique() {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    }

    /// Calls `body` with each piece in order, read in place (no copy of the list or of a piece's reference).
    func forEachPiece(_ body: (Piece, UnsafeBufferPointer<UInt8>) -> Void) {
        storage.literals.withUnsafeBufferPointer { literals in
            storage.pieces.withUnsafeBufferPointer { pieces in
                for i in 0..<pieces.count { body(pieces[i], literals) }
            }
        }
    }

    /// Fragments smaller than this are copied as literals: a stored block costs less than a tiny deflate stream.
    static let smallFragment = 48

    public mutating func append(_ fragment: BodyFragment) {
        guard !fragment.bytes.isEmpty else { return }
        if fragment.bytes.count < Self.smallFragment { append(literal: fragment.bytes); return }
        unique()
        let s = storage
        s.pieces.append(.fragment(Unmanaged.passRetained(fragment)))
        s.count += fragment.bytes.count
        // The fragment's identity enters the tag as one 64-bit word, marked so it cannot collide with literal bytes.
        s.hash = FNV1a.mix(s.hash ^ 0xff, fragment.identity)
    }

    /// Per-request bytes; consecutive literals merge into one piece. A few bytes are held in the piece itself (the
    /// literals' buffer is made only for a longer run).
    public mutating func append(literal bytes: UnsafeBufferPointer<UInt8>) {
        guard !bytes.isEmpty else { return }
        unique()
        let s = storage
        var h = s.hash
        for b in bytes { h = (h ^ UInt64(b)) &* FNV1a.prime }
        s.hash = h
        s.count += bytes.count
        if bytes.count <= ShortBytes.capacity {
            if case .short(var last)? = s.pieces.last, last.append(bytes) { s.pieces[s.pieces.count - 1] = .short(last); return }
            var short = ShortBytes()
            if short.append(bytes) { s.pieces.append(.short(short)); return }
        }
        let start = s.literals.count
        s.literals.append(contentsOf: bytes)
        if case .literal(let last)? = s.pieces.last, last.upperBound == start {
            s.pieces[s.pieces.count - 1] = .literal(last.lowerBound..<s.literals.count)
        } else {
            s.pieces.append(.literal(start..<s.literals.count))
        }
    }

    public mutating func append(literal bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append(literal: $0) }
    }

    /// One per-request byte (the comma between sections).
    public mutating func append(byte: UInt8) {
        var byte = byte
        withUnsafePointer(to: &byte) { append(literal: UnsafeBufferPointer(start: $0, count: 1)) }
    }

    public mutating func append(literal string: String) {
        var s = string
        s.withUTF8 { append(literal: $0) }
    }

    /// The strong ETag of the identity representation.
    public var etag: String { "\"" + FNV1a.hex(hash) + "\"" }
    /// The strong ETag of the gzip representation.
    public var gzipETag: String { "\"" + FNV1a.hex(hash) + "-gz\"" }

    /// Whether a gzip representation is offered (the same threshold as other bodies).
    public var offersGzip: Bool { count > Compression.threshold && compressible }

    public func identityBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        for p in pieces {
            switch p {
            case .fragment(let f): f._withUnsafeGuaranteedRef { out.append(contentsOf: $0.bytes) }
            case .literal(let r): out.append(contentsOf: literals[r])
            case .short(let b): b.withBytes { out.append(contentsOf: $0) }
            }
        }
        return out
    }

    /// The gzip member's size, computed without building it.
    public var gzipCount: Int {
        var n = Deflate.gzipHeader.count + Deflate.finalBlock.count + 8
        for p in pieces {
            switch p {
            case .fragment(let f): n += f._withUnsafeGuaranteedRef { $0.deflated.count }
            case .literal(let r): n += Deflate.storedCount(r.count)
            case .short(let b): n += Deflate.storedCount(b.count)
            }
        }
        return n
    }

    public func gzipBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(gzipCount)
        out.append(contentsOf: Deflate.gzipHeader)
        let crc = appendDeflated(to: &out)
        out.append(contentsOf: Deflate.finalBlock)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift))) }
        let size = UInt32(truncatingIfNeeded: count)
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: size >> UInt32(shift))) }
        return out
    }

    /// The body as raw deflate blocks (the fragments' streams, literals as stored blocks; no final block) appended to
    /// `out`; returns the CRC-32 of the identity bytes.
    func appendDeflated(to out: inout [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for p in pieces {
            switch p {
            case .fragment(let u):
                u._withUnsafeGuaranteedRef { f in
                    out.append(contentsOf: f.deflated)
                    crc = UInt32(truncatingIfNeeded: crc32_combine_op(UInt(crc), UInt(f.crc), f.combineOp))
                }
            case .literal(let r):
                literals.withUnsafeBufferPointer { l in crc = Deflate.appendStored(UnsafeBufferPointer(rebasing: l[r]), crc: crc, to: &out) }
            case .short(let b):
                b.withBytes { crc = Deflate.appendStored($0, crc: crc, to: &out) }
            }
        }
        return crc
    }

    /// The identity of the body (what its ETag is made of).
    var identity: UInt64 { hash }

    /// The most bytes `writeETagField` writes.
    static let etagFieldBound = 32

    /// `ETag: "…"` (with `-gz` for the gzip representation) and its line end, written in place.
    func writeETagField(gzipped: Bool, to w: inout ByteWriter) {
        let p = w.position
        // `ETag: "` (iterating a string literal's UTF-8 here cost ~500 instructions a response)
        p[0] = 69; p[1] = 84; p[2] = 97; p[3] = 103; p[4] = 58; p[5] = 32; p[6] = 34
        FNV1a.writeHex(hash, p + 7)
        var n = 23
        if gzipped { p[n] = 45; p[n + 1] = 103; p[n + 2] = 122; n += 3 }   // -gz
        p[n] = 34; p[n + 1] = 13; p[n + 2] = 10
        w.advance(n + 3)
    }
}

/// The fields an assembled body is always answered with (a handler's fixed set: `Cache-Control`, `Vary`,
/// `Content-Language`…, then `Content-Type`), rendered once: a response with them copies their bytes and adds only
/// its ETag, encoding and length. Safe to share between event loops.
public final class AssembledFields: Sendable {
    let rendered: [UInt8]
    /// The handler's `Vary` already names Accept-Encoding.
    let namesAcceptEncoding: Bool
    public let headers: HTTPHeaders

    public init(contentType: String, headers: HTTPHeaders) {
        self.headers = headers
        let summary = ResponseEncoder.FieldSummary(headers.fields)
        var out: [UInt8] = []
        ResponseEncoder.appendFields(headers.fields, summary: summary, status: 200, contentType: contentType, etag: nil, gzipped: false,
                                     varies: false, bodyCount: nil, to: &out)
        rendered = out
        namesAcceptEncoding = ResponseEncoder.mentionsAcceptEncoding(summary.vary)
    }
}

/// Raw deflate pieces that concatenate (RFC 1951 blocks ending on a byte boundary, none of them final).
enum Deflate {
    /// gzip member header: deflate, no flags, no mtime, no extra flags, OS unknown (RFC 1952).
    static let gzipHeader: [UInt8] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]
    /// An empty fixed-Huffman block with BFINAL set: ends the concatenated stream.
    static let finalBlock: [UInt8] = [0x03, 0x00]
    static let maxStored = 65_535

    /// `bytes` as one raw deflate stream ended by a full flush (no final block); nil if zlib fails.
    static func flushed(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        Gzip.deflated(bytes, level: level, windowBits: -15, flush: Z_FULL_FLUSH, done: Z_OK)
    }

    /// `bytes` as non-final stored blocks.
    static func stored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        appendStored(bytes[...], to: &out)
        return out
    }

    static func storedCount(_ n: Int) -> Int { n + 5 * max(1, (n + maxStored - 1) / maxStored) }

    /// `bytes` as stored blocks appended to `out`; returns `crc` continued over them (a literal's part in the CRC).
    static func appendStored(_ bytes: UnsafeBufferPointer<UInt8>, crc: UInt32, to out: inout [UInt8]) -> UInt32 {
        appendStored(bytes, to: &out)
        return Deflate.crc(bytes, continuing: crc)
    }

    static func appendStored<C: RandomAccessCollection<UInt8>>(_ bytes: C, to out: inout [UInt8]) where C.Index == Int {
        var start = bytes.startIndex
        repeat {
            let n = min(maxStored, bytes.endIndex - start)
            out.append(0)   // BFINAL 0, BTYPE 00, padded to the byte boundary
            out.append(UInt8(n & 0xff)); out.append(UInt8(n >> 8))
            out.append(UInt8(~n & 0xff)); out.append(UInt8((~n >> 8) & 0xff))
            out.append(contentsOf: bytes[start..<(start + n)])
            start += n
        } while start < bytes.endIndex
    }

    static func crc(_ bytes: [UInt8]) -> UInt32 { crc(bytes[...]) }

    static func crc(_ bytes: ArraySlice<UInt8>, continuing start: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBufferPointer { crc($0, continuing: start) }
    }

    static func crc(_ bytes: UnsafeBufferPointer<UInt8>, continuing start: UInt32) -> UInt32 {
        UInt32(crc32(UInt(start), bytes.baseAddress, UInt32(bytes.count)))
    }
}
