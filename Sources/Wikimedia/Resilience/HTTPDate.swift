import Foundation
import Synchronization
import HTTPServer
import LedeBasics

/// HTTP-dates (RFC 9110 §5.6.7), IMF-fixdate only — the form senders must generate: `Sun, 06 Nov 1994 08:49:37 GMT`.
public enum HTTPDate {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Seconds since 1970, or nil when `text` is not an IMF-fixdate.
    public static func parse(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int(parts[1]), parts[1].count == 2, let month = months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]), parts[3].count == 4 else { return nil }
        let hms = parts[4].split(separator: ":")
        guard hms.count == 3, hms.allSatisfy({ $0.count == 2 }), let h = Int(hms[0]), let m = Int(hms[1]), let s = Int(hms[2]),
              h < 24, m < 60, s < 61, let date = FeedDate(year: year, month: month + 1, day: day) else { return nil }
        return Double(date.dayNumber * 86_400 + h * 3_600 + m * 60 + s)
    }
}
