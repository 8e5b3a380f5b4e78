import CLinux
import Glibc

/// errno-safe wrappers: errno is read right after the call, EINTR is retried, EAGAIN means "not now".
public enum Syscall {
    public enum IOResult: Sendable {
        case bytes(Int)
        case wouldBlock
        case endOfFile
        case failed(Int32)
    }

    public static func ignoreSIGPIPE() { signal(SIGPIPE, SIG_IGN) }

    @inline(never)
    public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> IOResult {
        while true {
            let n = lede_read(fd, buffer, count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfFile }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return .wouldBlock }
            return .failed(e)
        }
    }

    @inline(never)
    public static func send(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> IOResult {
        sent { lede_send(fd, buffer, count) }
    }

    /// A send call's outcome: errno read right after it, EINTR retried, EAGAIN as `wouldBlock`.
    @inline(__always)
    private static func sent(_ call: () -> Int) -> IOResult {
        while true {
            let n = call()
            if n >= 0 { return .bytes(n) }
            let e = errno
            if e == EINTR { continue }
            if e == EAGAIN || e == EWOULDBLOCK { return .wouldBlock }
            return .failed(e)
        }
    }

    /// Two buffers in one `sendmsg` (gathered like writev, but with MSG_NOSIGNAL).
    @inline(never)
    public static func send2(_ fd: Int32, _ a: UnsafeRawPointer, _ aCount: Int, _ b: UnsafeRawPointer, _ bCount: Int) -> IOResult {
        sent { lede_send2(fd, a, aCount, b, bCount) }
    }

    /// `count` buffers in one `sendmsg` (gathered like writev, with MSG_NOSIGNAL).
    @inline(never)
    public static func sendv(_ fd: Int32, _ iov: UnsafePointer<iovec>, _ count: Int) -> IOResult {
        sent { lede_sendv(fd, iov, Int32(count)) }
    }

    public struct BindError: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// A non-blocking listening socket with SO_REUSEADDR and SO_REUSEPORT (one per event loop, so the
    /// kernel spreads new connections across loops).
    public static func listen(host: String, port: Int, backlog: Int32 = 4096) throws -> (fd: Int32, port: Int) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &result)
        guard rc == 0, let info = result else {
            throw BindError(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(result) }
        let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BindError(description: "socket(): \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let e = errno; close(fd)
            throw BindError(description: "cannot bind \(host):\(port): \(String(cString: strerror(e)))")
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let e = errno; close(fd)
            throw BindError(description: "listen(): \(String(cString: strerror(e)))")
        }
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let bound: Int = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                getsockname(fd, sa, &len)
                if sa.pointee.sa_family == sa_family_t(AF_INET6) {
                    return sa.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
                }
                return sa.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
        return (fd, bound)
    }

    public static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    public static func monotonicNanos() -> UInt64 { lede_monotonic_ns() }
}
