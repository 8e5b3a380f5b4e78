import CZlib

/// gzip through the system zlib.
public enum Gzip {
    public static func compress(_ input: [UInt8], level: Int32 = 6) -> [UInt8]? {
        // windowBits 15 + 16 selects the gzip wrapper.
        deflated(input, level: level, windowBits: 15 + 16, flush: Z_FINISH, done: Z_STREAM_END)
    }

    /// One zlib deflate call over all of `input` with `flush`; nil unless it returns `done` having read everything.
    static func deflated(_ input: [UInt8], level: Int32, windowBits: Int32, flush: Int32, done: Int32) -> [UInt8]? {
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        return deflateAll(&stream, input, flush: flush, done: done)
    }

    /// One deflate call on a ready stream over all of `input`; nil unless it returns `done` having read everything.
    static func deflateAll(_ stream: inout z_stream, _ input: [UInt8], flush: Int32, done: Int32) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        let result: Int32 = input.withUnsafeBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: inp.baseAddress)
                stream.avail_in = UInt32(inp.count)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                return deflate(&stream, flush)
            }
        }
        guard result == done, stream.avail_in == 0, stream.avail_out > 0 else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }
}

/// Raw deflate for streamed bodies, one compressor kept per event loop: each piece is compressed on its own (the
/// compressor is reset) and ends with a full flush, so pieces concatenate into one deflate stream that the client
/// can read up to the end of every piece as it arrives — while a stream itself keeps no compressor state (a CRC and
/// a length), whatever the number of open streams.
final class PieceDeflater {
    private var stream = z_stream()
    private let ok: Bool

    init(level: Int32 = 5) {
        ok = deflateInit2_(&stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit { if ok { deflateEnd(&stream) } }

    /// `bytes` as non-final deflate blocks ending on a byte boundary (stored blocks when that is smaller or zlib fails).
    func flushed(_ bytes: [UInt8]) -> [UInt8] {
        guard ok, bytes.count >= AssembledBody.smallFragment else { return Deflate.stored(bytes) }
        deflateReset(&stream)
        guard let output = Gzip.deflateAll(&stream, bytes, flush: Z_FULL_FLUSH, done: Z_OK),
              output.count < Deflate.storedCount(bytes.count) else { return Deflate.stored(bytes) }
        return output
    }
}
