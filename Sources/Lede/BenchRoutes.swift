import HTTPServer

/// Benchmark fixtures, served only with `--bench-routes on`: the same bytes nginx serves as static files
/// in `Benchmarks/run.sh`.
public enum BenchRoutes {
    public static let plaintext = Array("Hello, World!".utf8)

    /// A deterministic ~10 KB JSON document shaped like a list of article cards.
    public static let json: [UInt8] = {
        var s = "{\"items\":["
        var i = 0
        while s.utf8.count < 10_000 - 200 {
            if i > 0 { s += "," }
            s += "{\"title\":\"Article_\(i)\",\"description\":\"Bench fixture number \(i)\",\"extract\":\"Lorem ipsum dolor sit amet, consectetur adipiscing elit.\",\"views\":\(1000 + i * 37)}"
            i += 1
        }
        s += "]}"
        return Array(s.utf8)
    }()

    public static func register(on router: Router) {
        let plain = PreparedBody(contentType: "text/plain", bytes: plaintext)
        let doc = PreparedBody(contentType: "application/json", bytes: json)
        router.get("/_bench/plaintext") { _ in .response(.prepared(plain)) }
        router.get("/_bench/json") { _ in .response(.prepared(doc)) }
    }
}
