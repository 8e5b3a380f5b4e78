/// Chunked transfer coding (RFC 9112 §7.1), read the same way in both directions: a chunk-size line is hexadecimal
/// digits (at most 15, so the size never overflows), then optional chunk extensions (`BWS ";" …`, ignored) whose bytes
/// hold no control character but tab. The request parser and the response parser each keep their own state machine and
/// their own errors; what a chunk-size line says is decided here.
public enum ChunkedFraming {
    /// What a chunk-size line (without its CRLF) says.
    public enum SizeLine: Equatable, Sendable {
        case size(Int)
        /// No hexadecimal digit first.
        case notHexadecimal
        /// More than 15 digits.
        case tooLarge
        /// Something other than an extension after the digits.
        case invalidAfterSize
        /// Whitespace after the digits with no extension (RFC 9112 allows BWS only before `;`).
        case whitespaceWithoutExtension
        /// A control character (other than tab) or DEL in an extension.
        case controlInExtension
    }

    /// Reads a chunk-size line. `lenient`: whitespace after the digits with no extension is read as nothing (some
    /// servers write it; a client reads it, a server refuses it).
    public static func size(_ line: UnsafeBufferPointer<UInt8>, lenient: Bool = false) -> SizeLine {
        var size = 0, digits = 0, i = 0
        while i < line.count, let h = PercentDecoding.hexValue(line[i]) {
            digits += 1
            if digits > 15 { return .tooLarge }
            size = size << 4 | Int(h)
            i += 1
        }
        guard digits > 0 else { return .notHexadecimal }
        var j = i
        while j < line.count, line[j] == 32 || line[j] == 9 { j += 1 }
        if j == line.count { return j == i || lenient ? .size(size) : .whitespaceWithoutExtension }
        guard line[j] == 59 else { return .invalidAfterSize }
        for k in (j + 1)..<line.count where (line[k] < 32 && line[k] != 9) || line[k] == 127 { return .controlInExtension }
        return .size(size)
    }
}
