import AllocationCounter
import HTTPServer
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore

/// A started Lede server on one loop, quiet, with `/_test/arm` (arms the allocation counter on the loop's own thread):
/// what an allocation ceiling measures. `configure` sets the rest (an upstream, say). Stop it with `shutdown()` and
/// `waitUntilStopped()`, and call `lede_allocations_disarm()`.
func armedLedeServer(_ configure: (inout Options) -> Void = { _ in }) throws -> HTTPServer {
    var options = Options()
    options.server.host = "127.0.0.1"; options.server.port = 0; options.server.loops = 1; options.server.accessLog = false
    options.logLevel = .off
    options.server.clients.rate = 0
    configure(&options)
    let app = try LedeApp(options: options)
    app.router.get("/_test/arm") { _ in lede_allocations_arm(); return .response(.text("armed")) }
    let server = app.makeServer(logger: Logger(level: .off))
    try server.start()
    return server
}
