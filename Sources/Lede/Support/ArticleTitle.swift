/// Article titles as Wikipedia normalises them: spaces and underscores are the same, the first letter
/// is upper-case (for the namespaces Lede reads).
public enum ArticleTitle {
    /// The database form: `Albert_Einstein`.
    public static func normalise(_ title: String) -> String {
        var t = title.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: " ", with: "_")
        while t.contains("__") { t = t.replacingOccurrences(of: "__", with: "_") }
        if let first = t.first, first.isLowercase {
            t = first.uppercased() + t.dropFirst()
        }
        return t
    }

    /// The display form: `Albert Einstein`.
    public static func display(_ title: String) -> String {
        normalise(title).replacingOccurrences(of: "_", with: " ")
    }
}

/// Coordinates written for upstream and for links: at most 7 decimals, never an exponent, `-0` as `0`.
public enum Coordinates {
    public static func format(_ value: Double) -> String {
        var s = String(format: "%.7f", value)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        if s == "-0" { s = "0" }
        return s
    }
}

import Foundation
