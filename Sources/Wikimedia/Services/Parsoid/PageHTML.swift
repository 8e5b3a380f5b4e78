import EventLoops
import LedeBasics
import Foundation

/// A page's HTML as Parsoid renders it.
public struct PageHTML: Sendable {
    public var bytes: [UInt8]
    /// Parsoid's `ETag` (`W/"<revision>/<render id>"`), when it sent one.
    public var etag: String?
    public init(bytes: [UInt8], etag: String?) { self.bytes = bytes; self.etag = etag }
}
