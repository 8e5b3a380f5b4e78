import Dispatch
import Foundation
import Glibc
import Synchronization

/// A socket address getaddrinfo returned, kept as bytes (IPv4 or IPv6).
struct ResolvedAddress: Sendable, Equatable {
    var family: Int32
    var bytes: [UInt8]

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        bytes.withUnsafeBytes { p in body(p.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(p.count)) }
    }
}

/// Name resolution off the event loops: getaddrinfo runs on a small pool of threads (it blocks), answers are
/// kept for `ttl` seconds, IPv4 and IPv6 alike. Concurrent look-ups of one name share one getaddrinfo.
final class Resolver: Sendable {
    typealias Completion = @Sendable (Result<[ResolvedAddress], HTTPClientError>) -> Void
    let ttl: Double
    private let queue = DispatchQueue(label: "lede.resolver", attributes: .concurrent)
    private let slots = DispatchSemaphore(value: 2)
    private struct Table {
        var cache: [String: (addresses: [ResolvedAddress], expires: Double)] = [:]
        var waiting: [String: [Completion]] = [:]
    }
    private let table = Mutex(Table())

    init(ttl: Double = 30) { self.ttl = ttl }

    /// The cached addresses of `host:port`, if fresh.
    func cached(host: String, port: Int) -> [ResolvedAddress]? {
        let key = "\(host):\(port)"
        let now = Self.now()
        return table.withLock { t in
            guard let hit = t.cache[key], hit.expires > now else { return nil }
            return hit.addresses
        }
    }

    func resolve(host: String, port: Int, completion: @escaping Completion) {
        let key = "\(host):\(port)"
        enum Step { case hit([ResolvedAddress]), joined, first }
        let now = Self.now()
        let step: Step = table.withLock { t in
            if let hit = t.cache[key], hit.expires > now { return .hit(hit.addresses) }
            if t.waiting[key] != nil { t.waiting[key]!.append(completion); return .joined }
            t.waiting[key] = [completion]
            return .first
        }
        switch step {
        case .hit(let addresses): completion(.success(addresses)); return
        case .joined: return
        case .first: break
        }
        queue.async { [self] in
            slots.wait()
            let result = Self.lookup(host: host, port: port)
            slots.signal()
            let expires = Self.now() + ttl
            let callers = table.withLock { t in
                if case .success(let addresses) = result { t.cache[key] = (addresses, expires) }
                return t.waiting.removeValue(forKey: key) ?? []
            }
            for c in callers { c(result) }
        }
    }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    static func lookup(host: String, port: Int) -> Result<[ResolvedAddress], HTTPClientError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            return .failure(.resolve("\(host): \(String(cString: gai_strerror(rc)))"))
        }
        defer { freeaddrinfo(list) }
        var out: [ResolvedAddress] = []
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let a = p {
            if let addr = a.pointee.ai_addr, a.pointee.ai_family == AF_INET || a.pointee.ai_family == AF_INET6 {
                let bytes = [UInt8](UnsafeRawBufferPointer(start: addr, count: Int(a.pointee.ai_addrlen)))
                let r = ResolvedAddress(family: a.pointee.ai_family, bytes: bytes)
                if !out.contains(r) { out.append(r) }
            }
            p = a.pointee.ai_next
        }
        return out.isEmpty ? .failure(.resolve("\(host): no address")) : .success(out)
    }
}
