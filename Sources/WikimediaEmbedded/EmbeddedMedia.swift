import Foundation
import Synchronization
import Imaging
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The embedded default's `upload.wikimedia.org`: every thumbnail path the embedded summaries name answers with a
/// JPEG drawn by Lede for that file (a sky, a horizon and a few buildings in colours taken from the file's name —
/// stand-ins, not the photographs), 640 pixels wide as Wikimedia's thumbnails are. Made once per file, kept.
public final class EmbeddedMediaTransport: UpstreamTransport, Sendable {
    public init() {}
    private let made = Mutex<[String: [UInt8]]>([:])

    public func baseURL(lang: String) -> String { "https://upload.wikimedia.org" }

    public func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        let name = String(request.path.split(separator: "/").last ?? "")
        guard request.path.hasPrefix("/wikipedia/"), name.lowercased().hasSuffix(".jpg") || name.lowercased().hasSuffix(".jpeg") else {
            return UpstreamResponse(status: 404, body: Array("Not found".utf8))
        }
        if let bytes = made.withLock({ $0[name] }) { return UpstreamResponse(status: 200, body: bytes, headers: ["content-type": "image/jpeg"]) }
        let bytes = JPEG.encode(Self.picture(seed: name), quality: 82)
        made.withLock { table in if table.count < 256 { table[name] = bytes } }
        return UpstreamResponse(status: 200, body: bytes, headers: ["content-type": "image/jpeg"])
    }

    /// A 640×427 picture whose colours and skyline come from `seed`.
    static func picture(seed: String) -> RGBImage {
        var h = FNV1a.value(Array(seed.utf8))
        func next() -> Int { h = h &* 6364136223846793005 &+ 1442695040888963407; return Int(h >> 33) }
        let w = 640, ht = 427
        let skyTop = RGB(UInt8(60 + next() % 80), UInt8(110 + next() % 90), UInt8(170 + next() % 80))
        let skyLow = RGB(UInt8(200 + next() % 55), UInt8(170 + next() % 70), UInt8(120 + next() % 100))
        let ground = RGB(UInt8(40 + next() % 60), UInt8(60 + next() % 70), UInt8(50 + next() % 60))
        var canvas = Canvas(width: w, height: ht, background: skyTop)
        let horizon = ht * 2 / 3
        for y in 0..<horizon {
            let t = Double(y) / Double(horizon)
            func mix(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8(Double(a) + (Double(b) - Double(a)) * t) }
            canvas.fill(PixelRect(x: 0, y: y, width: w, height: 1), RGB(mix(skyTop.r, skyLow.r), mix(skyTop.g, skyLow.g), mix(skyTop.b, skyLow.b)))
        }
        canvas.fill(PixelRect(x: 0, y: horizon, width: w, height: ht - horizon), ground)
        var x = 0
        while x < w {
            let bw = 30 + next() % 70, bh = 40 + next() % 160
            let shade = UInt8(50 + next() % 120)
            canvas.fill(PixelRect(x: x, y: horizon - bh, width: bw, height: bh), RGB(shade, shade &- shade / 4, shade / 2 + 40))
            for wy in stride(from: horizon - bh + 10, to: horizon - 10, by: 18) {
                for wx in stride(from: x + 6, to: x + bw - 10, by: 14) { canvas.fill(PixelRect(x: wx, y: wy, width: 6, height: 8), RGB(250, 230, 160)) }
            }
            x += bw + next() % 20
        }
        return canvas.image
    }
}
