/// Every limit and timeout of the server, with its default.
public struct ServerConfiguration: Sendable {
    /// Address to bind. Default `0.0.0.0`.
    public var host: String = "0.0.0.0"
    /// Port to bind; 0 picks an ephemeral port. Default 8080.
    public var port: Int = 8080
    /// A port of its own for the operators (`/metrics`, and the probes), on `host`: with it, `/metrics` is served
    /// there only (404 on `port`). 0 picks an ephemeral port; nil (the default): none, `/metrics` on `port`.
    public var adminPort: Int?
    /// Event loops (threads with one epoll instance each). Default: the number of cores.
    public var loops: Int = ServerConfiguration.coreCount
    public var timeouts = Timeouts()
    public var limits = Limits()
    public var streams = Streams()
    public var clients = Clients()
    /// One JSON access-log line per request on stdout.
    public var accessLog: Bool = true
    /// How often connection deadlines are checked.
    public var tickInterval: Double = 0.1
    /// What the app calls its problems, metrics and messages: the server knows no app.
    public var naming = Naming()

    /// The names the server writes on the app's behalf.
    public struct Naming: Sendable {
        /// A problem's `type` is this followed by its slug (RFC 9457 §3.1.1: a URI reference). Default `urn:problem:`.
        public var problemTypeBase: String = "urn:problem:"
        /// The prefix of every metric the server writes (`<prefix>requests_total`). Default `http_`.
        public var metricPrefix: String = "http_"
        public init() {}
        public init(problemTypeBase: String, metricPrefix: String) {
            self.problemTypeBase = problemTypeBase; self.metricPrefix = metricPrefix
        }
    }

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
        /// Open connections; at it the longest-idle keep-alive connection on the accepting loop is closed for a new
        /// one, or (none idle) the new one gets 503 and is closed. Default 10000.
        public var maxConnections: Int = 10_000
        /// Open connections one address (IPv6: one /64) may hold, trusted proxies exempt; nil: a tenth of
        /// `maxConnections`, at least 8.
        public var maxConnectionsPerAddress: Int?
        /// `maxConnectionsPerAddress` as it applies.
        public var connectionsPerAddress: Int { maxConnectionsPerAddress ?? max(8, maxConnections / 10) }
        /// Request body bytes. Default 1 MiB.
        public var maxBody: Int = 1 << 20
        /// Request line bytes (414 past it). Default 8 KiB.
        public var maxRequestLine: Int = 8 * 1024
        /// Header section bytes (431 past it). Default 32 KiB.
        public var maxHeaderBytes: Int = 32 * 1024
        /// Answer bytes a connection holds unsent before it stops reading and parsing until the client takes them
        /// (a pipelining client that never reads holds no more than this, besides the kernel's buffers). Default
        /// 256 KiB.
        public var maxUnsentBytes: Int = 256 * 1024
        public init() {}
    }

    /// Streamed responses (`HTTPResponse.stream`, server-sent events).
    public struct Streams: Sendable {
        /// Streams open at once; past it a stream request gets 503 with `Retry-After`. Default 10000.
        public var maxStreams: Int = 10_000
        /// Outbound bytes a stream's connection buffers before its producer's write suspends. Default 64 KiB.
        public var highWater: Int = 64 * 1024
        /// A suspended write resumes once the buffer is down to this. Default 16 KiB.
        public var lowWater: Int = 16 * 1024
        /// Seconds a stream may hold unsent bytes with the client taking none; then it is closed and its producer
        /// cancelled. Default 30.
        public var stallTimeout: Double = 30
        /// Seconds of quiet after which an event stream gets a comment heartbeat. Default 25.
        public var heartbeat: Double = 25
        /// The reconnection time (ms) an event stream is told on drain, spread up to twice it so that clients do not
        /// all come back at once. Default 1000.
        public var drainRetry: Int = 1000
        public init() {}
    }

    /// Who a client is and what it may spend: a bearer token its verifier accepted is a client of its own
    /// (`rate`, `burst`); everything else is charged to its address (`addressRate`, `addressBurst`).
    public struct Clients: Sendable {
        /// Units an accepted token's bucket refills a second; 0 turns all limiting off. Default 0 (Lede's own
        /// default, set by its options, is 20).
        public var rate: Double = 0
        /// Units an accepted token may spend at once. Default 400.
        public var burst: Double = 400
        /// Units an address's bucket (IPv6: a /64's) refills a second; nil: `rate`.
        public var addressRate: Double?
        /// Units an address may spend at once; nil: `burst`.
        public var addressBurst: Double?
        /// Seconds an accepted token is remembered as a client of its own. Default 3600.
        public var remember: Double = 3600
        /// Seconds a refused token is remembered as refused (no check is made for it meanwhile). Default 600.
        public var forgetRefused: Double = 600
        /// Who checks a token nothing is known of (nil: tokens become clients only when a route vouches for them).
        public var verifier: (any CredentialVerifier)?
        /// Buckets kept (16 bytes each). Default 2^20.
        public var capacity: Int = 1 << 20
        /// Peers whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed. Default none.
        public var trustedProxies: [AddressBlock] = []
        public init() {}
    }

    /// Request bodies, all connections together.
    public struct Bodies: Sendable {
        /// Bytes of request bodies being received at once, across connections; past it a request whose body would
        /// not fit is answered 503 with `Retry-After` (before any of it is read, when it is refused at its start).
        /// A body reserves what has arrived of it and `window` bytes more, not what its head announces. Default 64 MiB.
        public var maxInFlight: Int = 64 << 20
        /// Of `maxInFlight`, what one address (IPv6: one /64) may hold; nil: an eighth of it.
        public var maxPerAddress: Int?
        /// `maxPerAddress` as it applies.
        public var perAddress: Int { maxPerAddress ?? max(1, maxInFlight / 8) }
        /// Bytes a body reserves ahead of what has arrived of it. Default 64 KiB.
        public var window: Int = 64 << 10
        /// Seconds from a body's head after which it must average `minRate` from that head on: a few round trips
        /// of a slow phone, not a time to hold a reservation in. Default 1.
        public var grace: Double = 1
        /// Bytes a second a body must average after `grace`, or the request is a 408. Default 1024.
        public var minRate: Int = 1024
        public init() {}
    }
    public var bodies = Bodies()

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
