/// What an upstream call is for: the label its metrics are counted under, and the unit an origin's `Retry-After`
/// stops (a 429 on one kind of call to an origin pauses that kind there, not the others). Open: each service names
/// its own kinds where it makes its calls (Wikimedia's beside its client, the rgallery screen's `reddit` beside it).
public struct CallKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}
