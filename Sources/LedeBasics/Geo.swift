import Foundation

/// A point on Earth; valid by construction (finite, latitude in [-90, 90], longitude in [-180, 180]).
public struct Coordinate: Sendable, Equatable {
    public let latitude: Double
    public let longitude: Double

    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        self.latitude = latitude; self.longitude = longitude
    }

    /// Strict decimal text: optional minus, digits, optional `.digits`. No `+`, exponents, hex, commas, spaces,
    /// `nan` or `inf`; at most 40 characters.
    public static func parseDecimal(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parseDecimal(bytes: $0) }
    }

    /// The same over the text's bytes.
    public static func parseDecimal(bytes u: UnsafeBufferPointer<UInt8>) -> Double? {
        guard !u.isEmpty, u.count <= 40 else { return nil }
        var i = 0
        if u[0] == UInt8(ascii: "-") { i = 1 }
        let intStart = i
        var mantissa = 0, digits = 0, fractionDigits = 0
        func digit(_ b: UInt8) { if digits < 18 { mantissa = mantissa * 10 + Int(b - 48) }; digits += 1 }
        while i < u.count, (48...57).contains(u[i]) { digit(u[i]); i += 1 }
        guard i > intStart else { return nil }
        if i < u.count {
            guard u[i] == UInt8(ascii: "."), i + 1 < u.count else { return nil }
            i += 1
            let fracStart = i
            while i < u.count, (48...57).contains(u[i]) { digit(u[i]); i += 1 }
            fractionDigits = i - fracStart
            guard fractionDigits > 0, i == u.count else { return nil }
        }
        // Exact fast path (Clinger): a mantissa below 2^53 and a power of ten up to 10^22 are exact doubles, and one
        // division of exact values is correctly rounded: the same double strtod gives, without a string.
        if digits <= 15, fractionDigits <= 22 {
            let v = Double(mantissa) / powersOfTen[fractionDigits]
            return u[0] == UInt8(ascii: "-") ? -v : v
        }
        return Double(String(decoding: u, as: UTF8.self))
    }

    private static let powersOfTen: [Double] = (0...22).reduce(into: [1.0]) { p, _ in p.append(p.last! * 10) }
}

/// Great-circle maths on a spherical Earth (mean radius 6,371,008.8 m).
public enum Geo {
    public static let earthRadius = 6_371_008.8

    /// Haversine distance in metres.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let rad = Double.pi / 180
        let dlat = (b.latitude - a.latitude) * rad, dlon = (b.longitude - a.longitude) * rad
        let h = sin(dlat / 2) * sin(dlat / 2) + cos(a.latitude * rad) * cos(b.latitude * rad) * sin(dlon / 2) * sin(dlon / 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }

    /// Initial bearing from `a` to `b` in degrees, [0, 360), 0 = north, 90 = east.
    public static func bearing(_ a: Coordinate, _ b: Coordinate) -> Double {
        let rad = Double.pi / 180
        let φ1 = a.latitude * rad, φ2 = b.latitude * rad, Δλ = (b.longitude - a.longitude) * rad
        let y = sin(Δλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(Δλ)
        let θ = atan2(y, x) / rad
        let normalised = (θ + 360).truncatingRemainder(dividingBy: 360)
        return normalised >= 360 ? 0 : normalised
    }
}
