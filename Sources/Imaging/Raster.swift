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

    /// `source` scaled to cover `rect` (the overflowing side cropped around its centre), bilinear.
    public mutating func drawCover(_ source: RGBImage, in rect: PixelRect) {
        let iw = width
        let r = rect.clipped(to: width, height).intersect(clip)
        guard r.width > 0, r.height > 0, rect.width > 0, rect.height > 0 else { return }
        let scale = max(Double(rect.width) / Double(source.width), Double(rect.height) / Double(source.height))
        let shownW = Double(rect.width) / scale, shownH = Double(rect.height) / scale
        let originX = (Double(source.width) - shownW) / 2, originY = (Double(source.height) - shownH) / 2
        let sw = source.width, sh = source.height
        source.pixels.withUnsafeBufferPointer { s in
            image.pixels.withUnsafeMutableBufferPointer { d in
                for y in r.y..<r.maxY {
                    let fy = originY + (Double(y - rect.y) + 0.5) / scale - 0.5
                    let y0 = min(sh - 1, max(0, Int(fy.rounded(.down)))), y1 = min(sh - 1, y0 + 1)
                    let wy = max(0, min(1, fy - Double(y0)))
                    var di = 3 * (y * iw + r.x)
                    for x in r.x..<r.maxX {
                        let fx = originX + (Double(x - rect.x) + 0.5) / scale - 0.5
                        let x0 = min(sw - 1, max(0, Int(fx.rounded(.down)))), x1 = min(sw - 1, x0 + 1)
                        let wx = max(0, min(1, fx - Double(x0)))
                        for c in 0..<3 {
                            let a = Double(s[3 * (y0 * sw + x0) + c]), b = Double(s[3 * (y0 * sw + x1) + c])
                            let cc = Double(s[3 * (y1 * sw + x0) + c]), dd = Double(s[3 * (y1 * sw + x1) + c])
                            let top = a + (b - a) * wx, bottom = cc + (dd - cc) * wx
                            d[di + c] = UInt8(max(0, min(255, (top + (bottom - top) * wy).rounded())))
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
