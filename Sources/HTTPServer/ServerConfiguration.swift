/// Every limit and timeout of the server, with its default.
public struct ServerConfiguration: Sendable {
    /// Address to bind. Default `0.0.0.0`.
    public var host: String = "0.0.0.0"
    /// Port to bind; 0 picks an ephemeral port. Default 8080.
    public var port: Int = 8080
    /// Event loops (threads with one epoll instance each). Default: the number of cores.
    public var loops: Int = ServerConfiguration.coreCount
    public var timeouts = Timeouts()
    public var limits = Limits()
    /// One JSON access-log line per request on stdout.
    public var accessLog: Bool = true
    /// How often connection deadlines are checked.
    public var tickInterval: Double = 0.1

    public struct Timeouts: Sendable {
        /// Seconds a client has to send a complete header section (slowloris guard). Default 10.
        public var header: Double = 10
        /// Seconds a keep-alive connection may sit idle between requests. Default 60.
        public var idle: Double = 60
        /// Seconds in-flight requests get to finish on SIGTERM/SIGINT. Default 10.
        public var drain: Double = 10
        /// Seconds to keep reading (and discarding) after a response that closes the connection, so the
        /// client receives it before the socket is closed.
        public var linger: Double = 2
        public init() {}
    }

    public struct Limits: Sendable {
        /// Open connections; past it new connections get 503 and are closed. Default 10000.
        public var maxConnections: Int = 10_000
        /// Request body bytes. Default 1 MiB.
        public var maxBody: Int = 1 << 20
        /// Request line bytes (414 past it). Default 8 KiB.
        public var maxRequestLine: Int = 8 * 1024
        /// Header section bytes (431 past it). Default 32 KiB.
        public var maxHeaderBytes: Int = 32 * 1024
        public init() {}
    }

    public init() {}

    public var parserLimits: ParserLimits {
        ParserLimits(maxRequestLine: limits.maxRequestLine, maxHeaderBytes: limits.maxHeaderBytes, maxBody: limits.maxBody)
    }

    public static var coreCount: Int {
        let n = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return n > 0 ? n : 1
    }
}

#if canImport(Glibc)
import Glibc
#endif
