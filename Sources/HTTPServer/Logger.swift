import Glibc

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
        var name: String { ["debug", "info", "warning", "error", "off"][rawValue] }
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

    public static func iso8601(seconds: Int, millis: Int) -> String {
        var t = time_t(seconds)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        return "\(tm.tm_year + 1900)-\(pad(Int(tm.tm_mon) + 1))-\(pad(Int(tm.tm_mday)))T\(pad(Int(tm.tm_hour))):\(pad(Int(tm.tm_min))):\(pad(Int(tm.tm_sec))).\(pad3(millis))Z"
    }

    /// IMF-fixdate for the `Date` header: `Sun, 22 Nov 2026 02:03:04 GMT`.
    public static func httpDate(seconds: Int) -> String {
        var t = time_t(seconds)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return "\(days[Int(tm.tm_wday)]), \(pad(Int(tm.tm_mday))) \(months[Int(tm.tm_mon)]) \(tm.tm_year + 1900) \(pad(Int(tm.tm_hour))):\(pad(Int(tm.tm_min))):\(pad(Int(tm.tm_sec))) GMT"
    }

    static func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    static func pad3(_ n: Int) -> String { n < 10 ? "00\(n)" : (n < 100 ? "0\(n)" : "\(n)") }
}
