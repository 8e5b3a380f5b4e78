/// An 8-bit RGB image, rows top to bottom, no padding.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3)
        self.width = width; self.height = height; self.pixels = pixels
    }

    public init(width: Int, height: Int, fill: RGB) {
        self.width = width; self.height = height
        var p = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) { p[3 * i] = fill.r; p[3 * i + 1] = fill.g; p[3 * i + 2] = fill.b }
        pixels = p
    }

    public func pixel(_ x: Int, _ y: Int) -> RGB {
        let i = 3 * (y * width + x)
        return RGB(pixels[i], pixels[i + 1], pixels[i + 2])
    }
}

public struct RGB: Sendable, Equatable {
    public var r: UInt8, g: UInt8, b: UInt8
    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) { self.r = r; self.g = g; self.b = b }
    public init(hex: UInt32) { r = UInt8((hex >> 16) & 0xFF); g = UInt8((hex >> 8) & 0xFF); b = UInt8(hex & 0xFF) }
    public static let white = RGB(255, 255, 255)
}

/// An integer rectangle in pixels.
public struct PixelRect: Sendable, Equatable {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    func clipped(to w: Int, _ h: Int) -> PixelRect {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(w, maxX), y1 = min(h, maxY)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}

/// Drawing on an RGB image: fills, a cover-cropped image, a horizontal fade, and coverage masks (glyphs) blended in a
/// colour, each clipped to `clip`.
public struct Canvas: Sendable {
    public private(set) var image: RGBImage
    /// Drawing outside it changes nothing.
    public var clip: PixelRect

    public init(width: Int, height: Int, background: RGB) {
        image = RGBImage(width: width, height: height, fill: background)
        clip = PixelRect(x: 0, y: 0, width: width, height: height)
    }

    public var width: Int { image.width }
    public var height: Int { image.height }

    public mutating func fill(_ rect: PixelRect, _ color: RGB) {
        let iw = width
        let r = rect.clipped(to: width, height).intersect(clip)
        guard r.width > 0, r.height > 0 else { return }
        image.pixels.withUnsafeMutableBufferPointer { p in
            for y in r.y..<r.maxY {
                var i = 3 * (y * iw + r.x)
                for _ in 0..<r.width { p[i] = color.r; p[i + 1] = color.g; p[i + 2] = color.b; i += 3 }
            }
        }
    }

    /// `source` scaled to cover `rect` (the overflowing side cropped around its centre), bilinear in fixed point: each
    /// column's two source columns and weight worked out once, each row's once.
    public mutating func drawCover(_ source: RGBImage, in rect: PixelRect) {
        let iw = width
        let r = rect.clipped(to: width, height).intersect(clip)
        guard r.width > 0, r.height > 0, rect.width > 0, rect.height > 0 else { return }
        let scale = max(Double(rect.width) / Double(source.width), Double(rect.height) / Double(source.height))
        let originX = (Double(source.width) - Double(rect.width) / scale) / 2, originY = (Double(source.height) - Double(rect.height) / scale) / 2
        let sw = source.width, sh = source.height
        /// Source index pairs and the second's weight (0…256) along one axis.
        func taps(_ from: Int, _ to: Int, _ origin: Int, _ o: Double, _ n: Int) -> ([Int], [Int], [Int]) {
            var a = [Int](), b = [Int](), w = [Int]()
            a.reserveCapacity(to - from); b.reserveCapacity(to - from); w.reserveCapacity(to - from)
            for i in from..<to {
                let f = o + (Double(i - origin) + 0.5) / scale - 0.5
                let i0 = min(n - 1, max(0, Int(f.rounded(.down))))
                a.append(i0); b.append(min(n - 1, i0 + 1)); w.append(Int((max(0, min(1, f - Double(i0))) * 256).rounded()))
            }
            return (a, b, w)
        }
        let (xa, xb, xw) = taps(r.x, r.maxX, rect.x, originX, sw)
        let (ya, yb, yw) = taps(r.y, r.maxY, rect.y, originY, sh)
        source.pixels.withUnsafeBufferPointer { s in
            image.pixels.withUnsafeMutableBufferPointer { d in
                for row in 0..<r.height {
                    let top = 3 * ya[row] * sw, bottom = 3 * yb[row] * sw, wy = yw[row]
                    var di = 3 * ((r.y + row) * iw + r.x)
                    for col in 0..<r.width {
                        let a = 3 * xa[col], b = 3 * xb[col], wx = xw[col]
                        for c in 0..<3 {
                            let t = Int(s[top + a + c]) * (256 - wx) + Int(s[top + b + c]) * wx
                            let u = Int(s[bottom + a + c]) * (256 - wx) + Int(s[bottom + b + c]) * wx
                            d[di + c] = UInt8((t * (256 - wy) + u * wy + 32_768) >> 16)
                        }
                        di += 3
                    }
                }
            }
        }
    }

    /// `color` laid over `rect` with an opacity going from `from` at its left edge to `to` at its right (0…1).
    public mutating func fade(_ rect: PixelRect, _ color: RGB, from: Double, to: Double) {
        let iw = width
        let r = rect.clipped(to: width, height).intersect(clip)
        guard r.width > 0, r.height > 0 else { return }
        image.pixels.withUnsafeMutableBufferPointer { p in
            for x in r.x..<r.maxX {
                let t = rect.width > 1 ? Double(x - rect.x) / Double(rect.width - 1) : 0
                let a = Int(((from + (to - from) * t) * 256).rounded())
                guard a > 0 else { continue }
                for y in r.y..<r.maxY {
                    let i = 3 * (y * iw + x)
                    p[i] = Self.blend(p[i], color.r, a); p[i + 1] = Self.blend(p[i + 1], color.g, a); p[i + 2] = Self.blend(p[i + 2], color.b, a)
                }
            }
        }
    }

    /// A coverage mask (0 = none, 255 = full: an anti-aliased glyph) with its top-left at (`x`, `y`), in `color`.
    public mutating func blend(mask: UnsafeBufferPointer<UInt8>, maskWidth: Int, rows: Int, pitch: Int, x: Int, y: Int, color: RGB) {
        let iw = width
        let r = PixelRect(x: x, y: y, width: maskWidth, height: rows).clipped(to: width, height).intersect(clip)
        guard r.width > 0, r.height > 0 else { return }
        image.pixels.withUnsafeMutableBufferPointer { p in
            for py in r.y..<r.maxY {
                let row = (py - y) * pitch
                for px in r.x..<r.maxX {
                    let a = Int(mask[row + px - x])
                    guard a > 0 else { continue }
                    let w = a + (a >> 7)   // 0…256
                    let i = 3 * (py * iw + px)
                    p[i] = Self.blend(p[i], color.r, w); p[i + 1] = Self.blend(p[i + 1], color.g, w); p[i + 2] = Self.blend(p[i + 2], color.b, w)
                }
            }
        }
    }

    @inline(__always)
    static func blend(_ under: UInt8, _ over: UInt8, _ a: Int) -> UInt8 {
        UInt8((Int(under) * (256 - a) + Int(over) * a) >> 8)
    }
}

extension PixelRect {
    func intersect(_ o: PixelRect) -> PixelRect {
        let x0 = max(x, o.x), y0 = max(y, o.y), x1 = min(maxX, o.maxX), y1 = min(maxY, o.maxY)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}
