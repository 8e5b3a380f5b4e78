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
