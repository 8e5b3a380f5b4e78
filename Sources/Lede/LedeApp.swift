import HTTPServer

/// Wires Lede's features into a router. The HTTP core adds `/healthz`, `/readyz` and `/metrics` itself.
public enum LedeApp {
    public static func makeRouter(options: Options) -> Router {
        let router = Router()
        router.get("/") { _ in .response(.prepared(LedeApp.banner)) }
        if options.benchRoutes { BenchRoutes.register(on: router) }
        return router
    }

    static let banner = PreparedBody(contentType: "application/json", bytes: Array("""
    {"service":"lede","description":"Backend-for-frontend for Wikipedia-style mobile apps","health":"/healthz","readiness":"/readyz","metrics":"/metrics"}
    """.utf8))
}
