import Glibc

/// HTTP-dates (RFC 9110 §5.6.7), written and read in one place: IMF-fixdate only — the form senders must generate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`). The server writes its `Date` header with it; the upstream guard reads
/// `Retry-After` with it.
public enum HTTPDate {
    static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `seconds` since 1970 as an IMF-fixdate: `Sun, 22 Nov 2026 02:03:04 GMT`.
    public static func format(seconds: Int) -> String {
        var t = time_t(seconds)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        let pad = Timestamp.pad
        return "\(days[Int(tm.tm_wday)]), \(pad(Int(tm.tm_mday))) \(months[Int(tm.tm_mon)]) \(tm.tm_year + 1900) \(pad(Int(tm.tm_hour))):\(pad(Int(tm.tm_min))):\(pad(Int(tm.tm_sec))) GMT"
    }

    /// Seconds since 1970, or nil when `text` is not an IMF-fixdate (its weekday is not checked against the date).
    public static func parse(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int(parts[1]), parts[1].count == 2, let month = months.firstIndex(of: String(parts[2])),
              let year = Int(parts[3]), parts[3].count == 4 else { return nil }
        let hms = parts[4].split(separator: ":")
        guard hms.count == 3, hms.allSatisfy({ $0.count == 2 }), let h = Int(hms[0]), let m = Int(hms[1]), let s = Int(hms[2]),
              h < 24, m < 60, s < 61, day >= 1, day <= Timestamp.daysIn(month: month + 1, year: year) else { return nil }
        return Double(Timestamp.daysSinceEpoch(year: year, month: month + 1, day: day) * 86_400 + h * 3_600 + m * 60 + s)
    }
}
