import Foundation
import Glibc

/// An IP address as 128 bits (IPv4 as `::ffff:a.b.c.d`), held as two integers so that comparing, hashing and masking
/// it costs a few instructions.
public struct ClientAddress: Hashable, Sendable, CustomStringConvertible {
    /// The first and last 64 bits, in network order read as big-endian integers.
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) { self.high = high; self.low = low }

    /// The all-zero address: a connection whose peer is not known (a test's request made without a socket).
    public static let unknown = ClientAddress(high: 0, low: 0)

    /// From 16 bytes in network order.
    init(bytes: UnsafePointer<UInt8>) {
        var h: UInt64 = 0, l: UInt64 = 0
        for i in 0..<8 { h = h << 8 | UInt64(bytes[i]) }
        for i in 8..<16 { l = l << 8 | UInt64(bytes[i]) }
        high = h; low = l
    }

    /// `a.b.c.d` or an IPv6 address (RFC 4291 text, no zone, no brackets); nil for anything else.
    public init?<S: StringProtocol>(_ text: S) {
        let s = String(text)
        guard !s.isEmpty, s.utf8.count <= 45 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        if s.utf8.contains(58) {  // ':'
            guard bytes.withUnsafeMutableBytes({ inet_pton(AF_INET6, s, $0.baseAddress) }) == 1 else { return nil }
        } else {
            var four = [UInt8](repeating: 0, count: 4)
            guard four.withUnsafeMutableBytes({ inet_pton(AF_INET, s, $0.baseAddress) }) == 1 else { return nil }
            bytes[10] = 0xff; bytes[11] = 0xff
            bytes.replaceSubrange(12..<16, with: four)
        }
        self = bytes.withUnsafeBufferPointer { ClientAddress(bytes: $0.baseAddress!) }
    }

    public var isIPv4: Bool { high == 0 && low >> 32 == 0xffff }

    /// Dotted quad for IPv4, RFC 5952 text for IPv6.
    public var description: String {
        if isIPv4 {
            let v = UInt32(truncatingIfNeeded: low)
            return "\(v >> 24).\(v >> 16 & 255).\(v >> 8 & 255).\(v & 255)"
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(i))) }
        for i in 0..<8 { bytes[8 + i] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(i))) }
        var text = [CChar](repeating: 0, count: 64)
        _ = bytes.withUnsafeBytes { b in text.withUnsafeMutableBufferPointer { inet_ntop(AF_INET6, b.baseAddress, $0.baseAddress, 64) } }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// An address block in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`; an address alone is its own block).
public struct AddressBlock: Hashable, Sendable, CustomStringConvertible {
    public let base: ClientAddress
    /// Leading bits that must match, over the 128 (an IPv4 block's prefix plus 96).
    public let bits: Int

    public init?<S: StringProtocol>(_ text: S) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = ClientAddress(parts[0]) else { return nil }
        let full = address.isIPv4 ? 32 : 128
        var prefix = full
        if parts.count == 2 {
            guard let p = Int(parts[1]), p >= 0, p <= full, parts[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            prefix = p
        }
        bits = address.isIPv4 ? prefix + 96 : prefix
        base = AddressBlock.masked(address, bits)
    }

    static func masked(_ a: ClientAddress, _ bits: Int) -> ClientAddress {
        let hm: UInt64 = bits >= 64 ? ~0 : (bits == 0 ? 0 : ~0 << UInt64(64 - bits))
        let lm: UInt64 = bits <= 64 ? 0 : (bits >= 128 ? ~0 : ~0 << UInt64(128 - bits))
        return ClientAddress(high: a.high & hm, low: a.low & lm)
    }

    public func contains(_ address: ClientAddress) -> Bool { AddressBlock.masked(address, bits) == base }

    public var description: String { base.isIPv4 ? "\(base)/\(bits - 96)" : "\(base)/\(bits)" }

    /// A comma-separated list of blocks; nil naming the first entry that is not one.
    public static func list(_ text: String) -> Result<[AddressBlock], ListError> {
        var blocks: [AddressBlock] = []
        for item in text.split(separator: ",") {
            let t = item.trimmingCharacters(in: .whitespaces)
            if t.isEmpty { continue }
            guard let b = AddressBlock(t) else { return .failure(ListError(entry: t)) }
            blocks.append(b)
        }
        return .success(blocks)
    }

    public struct ListError: Error, Sendable { public let entry: String }
}

/// Who a request comes from: the peer of its connection, or — when that peer is a proxy the operator trusts — the
/// address that proxy says it forwarded for. `X-Forwarded-For` and `X-Forwarded-Proto` are believed only from a trusted
/// peer; `Forwarded` (RFC 7239) is never read.
public struct ForwardingPolicy: Sendable {
    public var trusted: [AddressBlock]

    public init(trusted: [AddressBlock] = []) { self.trusted = trusted }

    public func isTrusted(_ address: ClientAddress) -> Bool {
        for block in trusted where block.contains(address) { return true }
        return false
    }

    /// The client of a request from `peer` carrying these `X-Forwarded-For` values (in the order they came): the peer
    /// itself unless it is trusted; else, reading the list from the right, the first address that is not a trusted
    /// proxy (an entry that is not an address stops the walk at the hop that wrote it). `viaProxy`: the peer is trusted.
    public func client(peer: ClientAddress, forwardedFor: [String]) -> (address: ClientAddress, viaProxy: Bool) {
        guard !trusted.isEmpty, isTrusted(peer) else { return (peer, false) }
        var current = peer
        for value in forwardedFor.reversed() {
            for item in value.split(separator: ",").reversed() {
                var t = item.trimmingCharacters(in: .whitespaces)
                if t.hasPrefix("[") , let end = t.firstIndex(of: "]") { t = String(t[t.index(after: t.startIndex)..<end]) }
                else if t.utf8.filter({ $0 == 58 }).count == 1, let colon = t.firstIndex(of: ":") { t = String(t[..<colon]) }  // a.b.c.d:port
                guard let address = ClientAddress(t) else { return (current, true) }
                current = address
                if !isTrusted(address) { return (address, true) }
            }
        }
        return (current, true)
    }
}
