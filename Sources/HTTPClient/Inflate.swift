import CZlib

/// gzip (or zlib) inflation through the system zlib, bounded: whole bodies at once, or a stream piece by piece as
/// it arrives (a streamed response whose every piece was flushed is readable as each piece lands).
public final class Inflater {
    private var stream = z_stream()
    /// zlib's state exists (and is freed in deinit), whatever happened to the data since.
    private let initialised: Bool
    /// The data so far was good; false after corrupt data, bytes past the end or the limit.
    private var ok: Bool
    /// Most bytes this inflater will produce in all.
    public let limit: Int
    public private(set) var produced = 0
    /// The end of the compressed stream was read.
    public private(set) var finished = false

    public init(limit: Int = 64 << 20) {
        self.limit = limit
        // windowBits 15 + 32: gzip or zlib, detected from the header.
        initialised = inflateInit2_(&stream, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        ok = initialised
    }

    // Freed whether or not the data was good (a fuzz target found the state of every refused body leaked).
    deinit { if initialised { inflateEnd(&stream) } }

    /// What `input` inflates to; nil when the data is corrupt, runs past the end of the stream, or the limit is passed.
    public func feed(_ input: [UInt8]) -> [UInt8]? {
        guard ok else { return nil }
        if input.isEmpty { return [] }
        if finished { ok = false; return nil }
        var result = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        return input.withUnsafeBufferPointer { inp -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: inp.baseAddress)
            stream.avail_in = UInt32(inp.count)
            while true {
                let (status, made): (Int32, Int) = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    let s = inflate(&stream, Z_NO_FLUSH)
                    return (s, out.count - Int(stream.avail_out))
                }
                result.append(contentsOf: chunk[0..<made])
                produced += made
                if produced > limit { ok = false; return nil }
                if status == Z_STREAM_END {
                    finished = true
                    if stream.avail_in != 0 { ok = false; return nil }   // bytes after the end
                    return result
                }
                if status == Z_BUF_ERROR && stream.avail_in == 0 { return result }   // all input taken; more to come
                if status != Z_OK { ok = false; return nil }
                if stream.avail_in == 0 && made < chunk.count { return result }
            }
        }
    }

    /// A whole gzip (or zlib) body inflated; nil when corrupt, truncated or larger than `limit`.
    public static func decompress(_ input: [UInt8], limit: Int = 64 << 20) -> [UInt8]? {
        let inflater = Inflater(limit: limit)
        guard let out = inflater.feed(input), inflater.finished else { return nil }
        return out
    }
}
