import CLinux
import Glibc

/// Standard output as the access log uses it.
public enum StandardOutput {
    /// Full buffering of `size` bytes (call once at start, before any thread writes).
    public static func useFullBuffering(size: Int = 1 << 16) { lede_buffer_stdout(size) }
}

/// Structured logs: one JSON object per line on stderr (the access log goes to stdout).
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug = 0, info, warning, error, off
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public init?(name: String) {
            switch name.lowercased() {
            case "debug", "trace": self = .debug
            case "info": self = .info
            case "warning", "warn": self = .warning
            case "error": self = .error
            case "off", "none": self = .off
            default: return nil
            }
        }
        public var name: String { ["debug", "info", "warning", "error", "off"][rawValue] }
    }

    public var level: Level
    public init(level: Level = .info) { self.level = level }

    public func debug(_ message: String, _ fields: [(String, String)] = []) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [(String, String)] = []) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [(String, String)] = []) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [(String, String)] = []) { log(.error, message, fields) }

    public func log(_ l: Level, _ message: String, _ fields: [(String, String)]) {
        guard l >= level, level != .off else { return }
        var out = Array("{\"time\":".utf8)
        JSONText.appendQuoted(Timestamp.iso8601(), to: &out)
        out.append(contentsOf: Array(",\"level\":\"\(l.name)\",\"msg\":".utf8))
        JSONText.appendQuoted(message, to: &out)
        for (k, v) in fields {
            out.append(44); JSONText.appendQuoted(k, to: &out); out.append(58); JSONText.appendQuoted(v, to: &out)
        }
        out.append(contentsOf: [125, 10])
        _ = out.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }
}

/// Wall-clock formatting without Foundation.
public enum Timestamp {
    /// `2026-11-22T02:03:04.123Z`
    public static func iso8601() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        return iso8601(seconds: Int(tv.tv_sec), millis: Int(tv.tv_usec) / 1000)
    }

    /// `2026-11-22T02:03:04Z`: RFC 3339 UTC in whole seconds, the one form API answers carry (default date
    /// decoders, Swift's `.iso8601` and the OpenAPI generator's, read it; they refuse fractions).
    public static func rfc3339Seconds() -> String {
        var tv = timeval()
        gettimeofday(&tv, nil)
        return rfc3339(seconds: Int(tv.tv_sec))
    }

    /// `2026-11-22T02:03:04Z`.
    public static func rfc3339(seconds: Int) -> String { dateTime(seconds, then: "Z") }

    /// `2026-11-22T02:03:04.056Z`.
    public static func iso8601(seconds: Int, millis: Int) -> String { dateTime(seconds, then: ".\(pad3(millis))Z") }

    /// `2026-11-22T02:03:04` (UTC) and then `suffix`: written as its bytes for a four-digit year (every notification
    /// of a list has one; interpolating it cost ~5,700 instructions), interpolated for any other.
    static func dateTime(_ seconds: Int, then suffix: String) -> String {
        var t = time_t(seconds)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        let year = Int(tm.tm_year) + 1900
        guard (1000...9999).contains(year) else { return dateTime(tm) + suffix }
        var suffix = suffix
        return suffix.withUTF8 { tail in
            String(unsafeUninitializedCapacity: 19 + tail.count) { out in
                func two(_ v: Int32, _ at: Int) { out[at] = UInt8(48 + v / 10); out[at + 1] = UInt8(48 + v % 10) }
                out[0] = UInt8(48 + year / 1000); out[1] = UInt8(48 + year / 100 % 10); out[2] = UInt8(48 + year / 10 % 10); out[3] = UInt8(48 + year % 10)
                out[4] = UInt8(ascii: "-"); two(tm.tm_mon + 1, 5); out[7] = UInt8(ascii: "-"); two(tm.tm_mday, 8)
                out[10] = UInt8(ascii: "T"); two(tm.tm_hour, 11); out[13] = UInt8(ascii: ":"); two(tm.tm_min, 14)
                out[16] = UInt8(ascii: ":"); two(tm.tm_sec, 17)
                for i in 0..<tail.count { out[19 + i] = tail[i] }
                return 19 + tail.count
            }
        }
    }

    /// `2026-11-22T02:03:04` (UTC), interpolated: any year.
    static func dateTime(_ tm: Glibc.tm) -> String {
        "\(tm.tm_year + 1900)-\(pad(Int(tm.tm_mon) + 1))-\(pad(Int(tm.tm_mday)))T\(pad(Int(tm.tm_hour))):\(pad(Int(tm.tm_min))):\(pad(Int(tm.tm_sec)))"
    }

    /// Seconds since 1970 of an RFC 3339 date-time (`2026-11-20T08:30:00Z`, `…:00.5Z`, `…:00+01:00`; `T`/`t`,
    /// `Z`/`z`; at most 9 fraction digits), or nil. Strict: every field in range (leap second 60 accepted as 59),
    /// nothing before or after. No formatter, no allocation: it runs on the event loop for every request carrying one.
    public static func parseRFC3339(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parseRFC3339(bytes: $0) }
    }

    public static func parseRFC3339(bytes b: UnsafeBufferPointer<UInt8>) -> Double? {
        guard b.count >= 20, b.count <= 40 else { return nil }
        guard let year = decimalDigits(b, 0, 4), b[4] == 45, let month = decimalDigits(b, 5, 2), b[7] == 45, let day = decimalDigits(b, 8, 2),
              b[10] == 84 || b[10] == 116, let hour = decimalDigits(b, 11, 2), b[13] == 58, let minute = decimalDigits(b, 14, 2), b[16] == 58,
              let second = decimalDigits(b, 17, 2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        var i = 19
        var fraction = 0.0
        if b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start, i - start <= 9 else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            guard let oh = decimalDigits(b, i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = decimalDigits(b, i + 4, 2), oh <= 23, om <= 59 else { return nil }
            offset = (oh * 60 + om) * 60 * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Double(days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset) + fraction
    }

    /// The number `n` ASCII digits at `at` spell; nil when one is not a digit or they run past the end. (Not a closure
    /// over the buffer: called as one, seven times a timestamp, it made reading one cost twice as much, ~540 instructions.)
    @inline(__always)
    private static func decimalDigits(_ b: UnsafeBufferPointer<UInt8>, _ at: Int, _ n: Int) -> Int? {
        guard at >= 0, at + n <= b.count else { return nil }
        var v = 0, i = at
        while i < at + n {
            let d = b[i] &- 48
            guard d <= 9 else { return nil }
            v = v &* 10 &+ Int(d)
            i += 1
        }
        return v
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    package static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    package static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    static func pad3(_ n: Int) -> String { n < 10 ? "00\(n)" : (n < 100 ? "0\(n)" : "\(n)") }
}
