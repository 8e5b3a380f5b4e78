import EventLoops
import LedeBasics
import Foundation

/// A calendar day (UTC) as the feed endpoint takes it.
public struct FeedDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int, month: Int, day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), (1...FeedDate.daysIn(month, year)).contains(day) else { return nil }
        self.year = year; self.month = month; self.day = day
    }

    /// `YYYY-MM-DD`, strictly.
    public init?(_ text: String) {
        let u = Array(text.utf8)
        guard u.count == 10, u[4] == 45, u[7] == 45,
              u.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || (48...57).contains($0.element) }),
              let y = Int(text.prefix(4)), let m = Int(text.dropFirst(5).prefix(2)), let d = Int(text.suffix(2)) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    public var description: String { "\(TextFormat.padded(year, 4))-\(TextFormat.padded(month, 2))-\(TextFormat.padded(day, 2))" }
    public var pathComponent: String { "\(TextFormat.padded(year, 4))/\(TextFormat.padded(month, 2))/\(TextFormat.padded(day, 2))" }

    public static func < (a: FeedDate, b: FeedDate) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    /// Days since 1970-01-01 (proleptic Gregorian).
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    public init(dayNumber z0: Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.year = yoe + era * 400 + (m <= 2 ? 1 : 0); self.month = m; self.day = d
    }

    public func adding(days: Int) -> FeedDate { FeedDate(dayNumber: dayNumber + days) }

    public static func today(now: Double = Date().timeIntervalSince1970) -> FeedDate {
        FeedDate(dayNumber: Int((now / 86_400).rounded(.down)))
    }

    static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
