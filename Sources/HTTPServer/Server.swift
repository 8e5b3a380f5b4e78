import Dispatch
import EventLoops
import Foundation
import Synchronization
import Glibc
import HTTPCore

/// What every event loop shares: configuration, routes, metrics, readiness.
final class ServerCore: Sendable {
    let configuration: ServerConfiguration
    let router: Router
    let metrics: ServerMetrics
    let logger: Logger
    /// Every connection's parser limits: the configuration's, with the routes' larger body limits.
    let parserLimits: ParserLimits
    /// Per-client token buckets (accepted tokens, addresses); nil when `clients.rate` is 0.
    let budgets: ClientBudgets?
    /// Whose forwarding headers are believed.
    let forwarding: ForwardingPolicy
    /// Bytes of request bodies being received on every loop together (`bodies.maxInFlight`).
    let bodyBytesInFlight = Atomic<Int>(0)
    /// What each address holds of the connections (`limits.connectionsPerAddress`) and of the bodies' bytes
    /// (`bodies.perAddress`).
    let connectionShares: AddressShares
    let bodyShares: AddressShares
    private let stoppedLoops = DispatchSemaphore(value: 0)

    /// Words for problems in the request's language (the app's), if any.
    let localizer: (any ProblemLocalizer)?

    init(configuration: ServerConfiguration, router: Router, logger: Logger, localizer: (any ProblemLocalizer)? = nil) {
        self.localizer = localizer
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.metrics = ServerMetrics(loops: max(1, configuration.loops), prefix: configuration.naming.metricPrefix)
        overloadedBody = Problem(status: 503, slug: "overloaded", .overloaded)
            .jsonBytes(typeBase: configuration.naming.problemTypeBase)
        var limits = configuration.parserLimits
        // Asked only for a body over `maxBody`; the routes are read once the server has started (they are frozen then).
        limits.bodyLimit = { [router] method, path in router.maxBody(method: method, path: path) }
        parserLimits = limits
        let clients = configuration.clients
        budgets = clients.rate > 0 ? ClientBudgets(clients) : nil
        connectionShares = AddressShares(limit: configuration.limits.connectionsPerAddress)
        bodyShares = AddressShares(limit: configuration.bodies.perAddress)
        forwarding = ForwardingPolicy(trusted: clients.trustedProxies)
        if let budgets {
            metrics.addCollector {
                PrometheusText.single(configuration.naming.metricPrefix + "rate_limited_total", "counter", "Requests refused with 429 rate-limited (per-client token buckets).", budgets.refusals)
            }
        }
    }

    /// Reserves `n` bytes of the bodies' shared budget for `address`; false (nothing reserved) when they would not
    /// fit in the whole or in the address's share.
    func reserveBody(_ n: Int, for address: ClientAddress) -> Bool {
        let limit = configuration.bodies.maxInFlight
        let after = bodyBytesInFlight.wrappingAdd(n, ordering: .relaxed).newValue
        if after > limit || !bodyShares.take(address, n) { bodyBytesInFlight.wrappingSubtract(n, ordering: .relaxed); return false }
        return true
    }
    func releaseBody(_ n: Int, for address: ClientAddress) {
        guard n > 0 else { return }
        bodyBytesInFlight.wrappingSubtract(n, ordering: .relaxed)
        bodyShares.give(address, n)
    }

    func loopStopped() { stoppedLoops.signal() }
    func waitForLoop(timeout: DispatchTime) -> Bool { stoppedLoops.wait(timeout: timeout) == .success }

    /// The 503 a connection past the limit gets, encoded once with the app's type base.
    let overloadedBody: [UInt8]

    func overloadedResponse(date: [UInt8]) -> [UInt8] {
        var out = Array("HTTP/1.1 503 Service Unavailable\r\nServer: lede\r\nX-Content-Type-Options: nosniff\r\nDate: ".utf8)
        out += date
        out += Array("\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: \(overloadedBody.count)\r\n\r\n".utf8)
        out += overloadedBody
        return out
    }
}

/// Lede's HTTP/1.1 server: N event loops, each with its own epoll instance and its own SO_REUSEPORT
/// listener. Adds `/healthz`, `/readyz` and `/metrics` to the router it is given.
public final class HTTPServer: Sendable {
    public let configuration: ServerConfiguration
    public let router: Router
    public let logger: Logger
    public var metrics: ServerMetrics { core.metrics }
    private let core: ServerCore
    /// What `start` made and whether a drain has begun.
    private struct State {
        var loops: [LoopBound<ServerLoop>] = []
        var port = 0
        var adminPort: Int?
        var draining = false
    }
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    /// The port actually bound (useful with port 0).
    public var port: Int { state.withLock { $0.port } }
    /// The operators' port actually bound (`adminPort`), when there is one.
    public var adminPort: Int? { state.withLock { $0.adminPort } }

    /// `localizer`: words for problems in each request's language (titles, `Content-Language`).
    public init(configuration: ServerConfiguration, router: Router, logger: Logger = Logger(), localizer: (any ProblemLocalizer)? = nil) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.core = ServerCore(configuration: configuration, router: router, logger: logger, localizer: localizer)
    }

    /// Whether `/readyz` says ready (false once draining has begun).
    public var isReady: Bool { state.withLock { !$0.draining } }

    /// Binds and starts the loops. Returns once the server accepts connections.
    @discardableResult
    public func start() throws -> Int {
        Syscall.ignoreSIGPIPE()
        addOperationalRoutes()
        core.metrics.routeLabels = router.patterns
        router.freeze()
        let loopCount = max(1, configuration.loops)
        var fds: [Int32] = []
        var boundPort = configuration.port
        for _ in 0..<loopCount {
            let (fd, p) = try Syscall.listen(host: configuration.host, port: boundPort)
            fds.append(fd); boundPort = p
        }
        var loops: [ServerLoop] = []
        for i in 0..<loopCount {
            let loop = try ServerLoop(id: i, core: core)
            loop.addListener(fds[i])
            loops.append(loop)
        }
        // The operators' listener: one, on the first loop (a scrape every few seconds).
        var adminBound: Int?
        if let adminPort = configuration.adminPort {
            let (fd, p) = try Syscall.listen(host: configuration.host, port: adminPort)
            loops[0].addListener(fd, admin: true)
            adminBound = p
        }
        let bound = loops.map { LoopBound($0, on: $0.loop) }
        state.withLock { $0.loops = bound; $0.port = boundPort; $0.adminPort = adminBound }
        for loop in loops { loop.start() }
        logger.info("listening", [("host", configuration.host), ("port", "\(boundPort)"), ("loops", "\(loopCount)")]
                                 + (adminBound.map { [("admin_port", "\($0)")] } ?? []))
        return boundPort
    }

    /// Blocks SIGTERM and SIGINT in the calling thread. Call it first thing in `main`, before any other thread
    /// exists: every thread inherits the mask, so from then on the signals stay pending — never lost, never
    /// acted on by a default handler — until `installSignalHandlers` reads them.
    public static func blockTerminationSignals() {
        var set = terminationSignals
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    static var terminationSignals: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        return set
    }

    /// SIGTERM and SIGINT begin a graceful drain. A thread of its own takes them with `sigwait`, so a signal
    /// that arrived before this call (held pending by `blockTerminationSignals`) is acted on too: there is no
    /// window in which one is ignored.
    public func installSignalHandlers() {
        HTTPServer.blockTerminationSignals()
        let t = Thread { [weak self] in
            var set = HTTPServer.terminationSignals
            while true {
                var sig: Int32 = 0
                guard sigwait(&set, &sig) == 0 else { continue }
                guard let self else { return }
                self.logger.info("signal received; draining", [("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT")])
                self.shutdown()
            }
        }
        t.name = "lede-signals"
        t.stackSize = 1 << 16
        t.start()
    }

    /// Graceful shutdown: readiness turns 503, listeners close, in-flight requests finish (up to the drain
    /// timeout), idle connections close. Returns when every loop has stopped. Safe to call more than once.
    public func shutdown() {
        let loops: [LoopBound<ServerLoop>]? = state.withLock { s in
            if s.draining { return nil }
            s.draining = true
            return s.loops
        }
        guard let loops else { return }
        DispatchQueue.global().async { [self] in
            for loop in loops { loop.loop.execute { loop.value.beginDrain() } }
            let deadline = DispatchTime.now() + configuration.timeouts.drain
            var stopped = 0
            while stopped < loops.count, core.waitForLoop(timeout: deadline) { stopped += 1 }
            if stopped < loops.count {
                logger.warning("drain timeout; closing remaining connections", [("loops_left", "\(loops.count - stopped)")])
                for loop in loops { loop.loop.execute { loop.value.forceClose() } }
                while stopped < loops.count, core.waitForLoop(timeout: .now() + 2) { stopped += 1 }
            }
            logger.info("stopped")
            finished.signal()
        }
    }

    /// Blocks until `shutdown()` has finished.
    public func waitUntilStopped() {
        finished.wait()
        finished.signal()
    }

    private func addOperationalRoutes() {
        let health = PreparedBody(contentType: "application/json", bytes: Array("{\"status\":\"ok\"}".utf8))
        let ready = PreparedBody(contentType: "application/json", bytes: Array("{\"status\":\"ready\"}".utf8))
        let noStore: HTTPHeaders = ["Cache-Control": "no-store"]
        router.add("GET", "/healthz", limited: false) { _ in .response(.prepared(health, headers: noStore)) }
        router.add("GET", "/readyz", limited: false) { [weak self] _ in
            if self?.isReady ?? false { return .response(.prepared(ready, headers: noStore)) }
            // The slug says draining; the problem's `status` member stays the number (no second `status` key).
            return .response(Problem(status: 503, slug: "draining", .draining).response)
        }
        router.add("GET", "/metrics", limited: false, adminOnly: true) { [weak self] _ in
            let text = self?.core.metrics.render() ?? ""
            var h = HTTPHeaders()
            h.set("Cache-Control", "no-store")
            return .response(HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", bytes: Array(text.utf8), headers: h))
        }
    }
}
