import TestSupport
import Foundation
import Glibc
@testable import HTTPServer
@testable import HTTPCore

func startTestServer(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    let config = testConfiguration(configure)
    let router = Router()
    router.get("/hello") { _ in .response(.text("hello")) }
    router.post("/echo") { ctx in .response(HTTPResponse(status: 200, contentType: "application/octet-stream", bytes: ctx.request.body)) }
    router.get("/slow") { ctx in
        let ms = Int(ctx.request.queryParameter("ms") ?? "200") ?? 200
        return .async {
            try? await Task.sleep(nanoseconds: UInt64(ms) * 1_000_000)
            return .text("slow \(ms)")
        }
    }
    router.get("/big") { _ in .response(.json(Array(("[" + (0..<300).map { "\"item \($0)\"" }.joined(separator: ",") + "]").utf8))) }
    let cached = PreparedBody(contentType: "application/json", bytes: Array(("{\"list\":[" + (0..<300).map { "\($0)" }.joined(separator: ",") + "]}").utf8))
    router.get("/cached") { _ in .response(.prepared(cached)) }
    let parts = (0..<4).map { i in BodyFragment("[" + (0..<200).map { "\"part \(i) item \($0)\"" }.joined(separator: ",") + "]") }
    router.get("/assembled") { ctx in
        var body = AssembledBody()
        body.append(literal: "{\"who\":\"\(ctx.request.queryParameter("who") ?? "")\",\"parts\":[")
        for (i, p) in parts.enumerated() {
            if i > 0 { body.append(literal: ",") }
            body.append(p)
        }
        body.append(literal: "]}")
        return .response(.assembled(body, headers: ["Cache-Control": "private, max-age=60"]))
    }
    router.get("/items/{id}") { ctx in .response(.text("item \(ctx.parameter("id") ?? "")")) }
    // Large bodies (sent from their own storage): 300 KB of a repeating, position-dependent pattern.
    let largeBytes: [UInt8] = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    let largePrepared = PreparedBody(contentType: "application/octet-stream", bytes: largeBytes)
    router.get("/large") { ctx in
        ctx.request.queryParameter("shared") == "1" ? .response(.prepared(largePrepared)) : .response(HTTPResponse(status: 200, contentType: "application/octet-stream", bytes: largeBytes))
    }
    return try startServer(router, loops: config.loops, logger: Logger(level: ProcessInfo.processInfo.environment["LEDE_TEST_LOG"] == nil ? .off : .debug)) { $0 = config }
}

func stop(_ server: HTTPServer) {
    server.shutdown()
    server.waitUntilStopped()
}
