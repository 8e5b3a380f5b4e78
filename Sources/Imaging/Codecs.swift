import CImageCodecs
import CZlib

/// PNG (RFC 2083) of an RGB image: 8-bit truecolour, rows filtered with `Sub` or `Up` (whichever is smaller by the
/// usual sum-of-absolute-values guess), deflated by zlib, every chunk with its CRC.
public enum PNG {
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func encode(_ image: RGBImage, level: Int32 = 4) -> [UInt8] {
        let stride = image.width * 3
        var filtered = [UInt8](repeating: 0, count: (stride + 1) * image.height)
        image.pixels.withUnsafeBufferPointer { p in
            filtered.withUnsafeMutableBufferPointer { f in
                for y in 0..<image.height {
                    let row = y * stride, out = y * (stride + 1)
                    // Sub: each byte less the byte of the pixel to its left. Up: less the byte above.
                    var sub = 0, up = 0
                    for i in 0..<stride {
                        let v = p[row + i]
                        let left = i >= 3 ? p[row + i - 3] : 0
                        let above = y > 0 ? p[row - stride + i] : 0
                        sub += abs(Int(Int8(bitPattern: v &- left)))
                        up += abs(Int(Int8(bitPattern: v &- above)))
                    }
                    let useUp = y > 0 && up < sub
                    f[out] = useUp ? 2 : 1
                    for i in 0..<stride {
                        let v = p[row + i]
                        f[out + 1 + i] = useUp ? v &- p[row - stride + i] : v &- (i >= 3 ? p[row + i - 3] : 0)
                    }
                }
            }
        }
        var out = signature
        var ihdr: [UInt8] = []
        append32(UInt32(image.width), to: &ihdr); append32(UInt32(image.height), to: &ihdr)
        ihdr += [8, 2, 0, 0, 0]   // bit depth 8, colour type 2 (RGB), deflate, adaptive filtering, no interlace
        chunk("IHDR", ihdr, to: &out)
        chunk("IDAT", deflate(filtered, level: level), to: &out)
        chunk("IEND", [], to: &out)
        return out
    }

    /// zlib's stream of `bytes` (compress2).
    static func deflate(_ bytes: [UInt8], level: Int32) -> [UInt8] {
        var size = compressBound(uLong(bytes.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let status = out.withUnsafeMutableBufferPointer { o in
            bytes.withUnsafeBufferPointer { b in compress2(o.baseAddress, &size, b.baseAddress, uLong(b.count), level) }
        }
        precondition(status == Z_OK, "compress2 into compressBound's size cannot fail")
        out.removeLast(out.count - Int(size))
        return out
    }

    static func chunk(_ type: String, _ data: [UInt8], to out: inout [UInt8]) {
        append32(UInt32(data.count), to: &out)
        let typed = Array(type.utf8) + data
        out += typed
        append32(crc(typed), to: &out)
    }

    /// CRC-32 (ISO 3309, as PNG's chunks use it), by zlib.
    public static func crc(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { b in UInt32(crc32(0, b.baseAddress, uInt(b.count))) }
    }

    static func append32(_ v: UInt32, to out: inout [UInt8]) {
        out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}

/// What an image file says of itself before anything is decoded: its format and size, read from its first bytes alone
/// (a JPEG's start-of-frame marker, a PNG's IHDR). The cap on pixels is checked on this, so a decompression bomb is
/// refused unread.
public struct ImageHeader: Sendable, Equatable {
    public enum Format: String, Sendable { case jpeg, png, gif, webp }
    public var format: Format
    public var width: Int
    public var height: Int

    public init(format: Format, width: Int, height: Int) { self.format = format; self.width = width; self.height = height }

    public var pixels: Int { width * height }

    /// Nil when the bytes are no image this reader knows, or its header is cut short or malformed.
    public static func read(_ bytes: [UInt8]) -> ImageHeader? {
        bytes.withUnsafeBufferPointer { read($0) }
    }

    public static func read(_ b: UnsafeBufferPointer<UInt8>) -> ImageHeader? {
        if b.count >= 24, Array(b[0..<8]) == PNG.signature, b[12] == 0x49, b[13] == 0x48, b[14] == 0x44, b[15] == 0x52 {
            let w = be32(b, 16), h = be32(b, 20)
            guard w > 0, h > 0, w < 1 << 31, h < 1 << 31 else { return nil }
            return ImageHeader(format: .png, width: w, height: h)
        }
        if b.count >= 10, b[0] == 0x47, b[1] == 0x49, b[2] == 0x46, b[3] == 0x38 {   // GIF8
            let w = Int(b[6]) | Int(b[7]) << 8, h = Int(b[8]) | Int(b[9]) << 8
            return w > 0 && h > 0 ? ImageHeader(format: .gif, width: w, height: h) : nil
        }
        if b.count >= 30, b[0] == 0x52, b[1] == 0x49, b[2] == 0x46, b[3] == 0x46, b[8] == 0x57, b[9] == 0x45, b[10] == 0x42, b[11] == 0x50 {
            // WebP's size is read by its decoder only; Lede does not decode WebP.
            return ImageHeader(format: .webp, width: 0, height: 0)
        }
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        // JPEG: markers from offset 2; each but the standalone ones carries a big-endian length that counts itself.
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { return nil }
            var marker = b[i + 1]
            var j = i + 1
            while marker == 0xFF {   // fill bytes before a marker
                j += 1
                guard j < b.count else { return nil }
                marker = b[j]
            }
            i = j + 1
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }   // no length
            if marker == 0xD9 || marker == 0xDA { return nil }   // end of image or scan data before any frame header
            guard i + 2 <= b.count else { return nil }
            let length = Int(b[i]) << 8 | Int(b[i + 1])
            guard length >= 2 else { return nil }
            // SOF0…SOF15 but DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                guard length >= 7, i + 7 <= b.count else { return nil }
                let h = Int(b[i + 3]) << 8 | Int(b[i + 4]), w = Int(b[i + 5]) << 8 | Int(b[i + 6])
                guard w > 0, h > 0 else { return nil }
                return ImageHeader(format: .jpeg, width: w, height: h)
            }
            i += length
        }
        return nil
    }

    static func be32(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> Int {
        Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
    }
}

/// JPEG through libjpeg-turbo (its errors caught in C, see CImageCodecs.h).
public enum JPEG {
    public enum Failure: Error, Equatable, Sendable {
        /// More pixels than allowed: refused before decoding.
        case tooLarge(width: Int, height: Int)
        /// Not a JPEG, or one cut short or damaged.
        case unreadable
    }

    /// Decodes `bytes` to RGB; one of more than `maxPixels` is refused from its header, nothing decoded.
    public static func decode(_ bytes: [UInt8], maxPixels: Int) throws(Failure) -> RGBImage {
        guard let header = ImageHeader.read(bytes), header.format == .jpeg else { throw .unreadable }
        guard header.pixels <= maxPixels else { throw .tooLarge(width: header.width, height: header.height) }
        var w: Int32 = 0, h: Int32 = 0
        // libjpeg's own reading of the header must agree (the frame header above may not be the one it uses).
        let sized = bytes.withUnsafeBufferPointer { lede_jpeg_size($0.baseAddress, $0.count, &w, &h) }
        guard sized == 0, w > 0, h > 0 else { throw .unreadable }
        guard Int(w) * Int(h) <= maxPixels else { throw .tooLarge(width: Int(w), height: Int(h)) }
        var pixels = [UInt8](repeating: 0, count: Int(w) * Int(h) * 3)
        var ow: Int32 = 0, oh: Int32 = 0
        let status = bytes.withUnsafeBufferPointer { b in
            pixels.withUnsafeMutableBufferPointer { p in
                lede_jpeg_decode_rgb(b.baseAddress, b.count, UInt64(maxPixels), p.baseAddress, p.count, &ow, &oh)
            }
        }
        switch status {
        case 0: break
        case 2: throw .tooLarge(width: Int(w), height: Int(h))
        default: throw .unreadable
        }
        guard ow == w, oh == h else { throw .unreadable }
        return RGBImage(width: Int(w), height: Int(h), pixels: pixels)
    }

    public static func encode(_ image: RGBImage, quality: Int) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        let status = image.pixels.withUnsafeBufferPointer { p in
            lede_jpeg_encode_rgb(p.baseAddress, Int32(image.width), Int32(image.height), Int32(max(1, min(100, quality))), &out, &length)
        }
        guard status == 0, let out else { return [] }
        defer { lede_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}
