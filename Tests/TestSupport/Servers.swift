import HTTPCore
import HTTPServer

// The tests' one way to start a server of their own routes (docs/TESTING.md); Lede itself starts with `startLede`.

/// A server configuration for tests: loopback, an ephemeral port, `loops` loops, no access log, short ticks, drain and
/// linger; then `configure`.
public func testConfiguration(loops: Int = 2, _ configure: (inout ServerConfiguration) -> Void = { _ in }) -> ServerConfiguration {
    var config = ServerConfiguration()
    config.host = "127.0.0.1"
    config.port = 0
    config.loops = loops
    config.accessLog = false
    config.tickInterval = 0.05
    config.timeouts.drain = 5
    config.timeouts.linger = 0.5
    configure(&config)
    return config
}

/// A server of `router`'s routes with the test configuration, not yet started (a fake that registers routes after).
public func makeServer(_ router: Router, loops: Int = 1, logger: Logger = Logger(level: .off), localizer: (any ProblemLocalizer)? = nil,
                       _ configure: (inout ServerConfiguration) -> Void = { _ in }) -> HTTPServer {
    HTTPServer(configuration: testConfiguration(loops: loops, configure), router: router, logger: logger, localizer: localizer)
}

/// The same, started.
public func startServer(_ router: Router, loops: Int = 1, logger: Logger = Logger(level: .off), localizer: (any ProblemLocalizer)? = nil,
                        _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    let server = makeServer(router, loops: loops, logger: logger, localizer: localizer, configure)
    try server.start()
    return server
}
