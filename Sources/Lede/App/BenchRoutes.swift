import HTTPServer
import Synchronization
import LedeBasics
import Wikimedia

/// Benchmark fixtures, served only with `--bench-routes on`: the same bytes nginx serves as static files
/// in `Benchmarks/run.sh`.
enum BenchRoutes {
    static let plaintext = Array("Hello, World!".utf8)

    /// A deterministic ~10 KB JSON document shaped like a list of article cards.
    static let json: [UInt8] = {
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

    static func register(on router: Router) {
        let plain = PreparedBody(contentType: "text/plain", bytes: plaintext)
        let doc = PreparedBody(contentType: "application/json", bytes: json)
        router.get("/_bench/plaintext") { _ in .response(.prepared(plain)) }
        router.get("/_bench/json") { _ in .response(.prepared(doc)) }
        let hub = BroadcastHub()
        // Server-sent events: `count` `tick` events (0: until the client leaves) of `size` bytes every `interval` ms
        // (0: none), and every broadcast.
        router.get("/_bench/events") { ctx in
            let q = ctx.request
            let interval = min(Int(q.queryParameter("interval") ?? "0") ?? 0, 3_600_000)
            let count = Int(q.queryParameter("count") ?? "0") ?? 0
            let size = min(max(Int(q.queryParameter("size") ?? "16") ?? 16, 0), 1 << 20)
            // Broadcasts only (what Benchmarks/streams.sh opens): a pushed channel, no task per stream.
            if interval <= 0 && count <= 0 {
                return .response(.eventChannel { channel in
                    let id = hub.subscribe(channel)
                    channel.onClose { _ in hub.unsubscribe(id) }
                })
            }
            return .response(.eventStream { events in
                let (stream, inbox) = AsyncStream<[UInt8]>.makeStream(bufferingPolicy: .bufferingNewest(64))
                let id = hub.subscribe(inbox)
                defer { hub.unsubscribe(id) }
                let ticker: Task<Void, Never>? = interval <= 0 ? nil : Task {
                    let payload = String(repeating: "x", count: size)
                    var sequence = Int(events.lastEventID ?? "") ?? 0
                    while !Task.isCancelled {
                        try? await Task.sleep(nanoseconds: UInt64(interval) * 1_000_000)
                        sequence += 1
                        inbox.yield(ServerSentEvent(event: "tick", id: String(sequence), data: payload).encoded)
                    }
                }
                defer { ticker?.cancel() }
                var sent = 0
                for await bytes in stream {
                    try await events.body.write(bytes)
                    sent += 1
                    if count > 0 && sent >= count { break }
                }
            })
        }
        // Sends the body (at most 64 KiB of UTF-8) as one `broadcast` event to every open /_bench/events stream.
        router.post("/_bench/broadcast") { ctx in
            let data = String(decoding: ctx.request.body.prefix(65_536), as: UTF8.self)
            let n = hub.publish(ServerSentEvent(event: "broadcast", data: data).encoded)
            return .response(.json(Array("{\"subscribers\":\(n)}".utf8), headers: ["Cache-Control": "no-store"]))
        }
    }
}

/// The subscribers of the benchmark's event streams: each publish is encoded once and handed to every stream, a task's
/// inbox or a pushed channel.
final class BroadcastHub: Sendable {
    private struct State {
        var next = 0
        var inboxes: [Int: AsyncStream<[UInt8]>.Continuation] = [:]
        var channels: [Int: EventChannel] = [:]
    }
    private let state = Mutex(State())

    func subscribe(_ inbox: AsyncStream<[UInt8]>.Continuation) -> Int {
        state.withLock { s in
            s.next += 1
            s.inboxes[s.next] = inbox
            return s.next
        }
    }

    func subscribe(_ channel: EventChannel) -> Int {
        state.withLock { s in
            s.next += 1
            s.channels[s.next] = channel
            return s.next
        }
    }

    func unsubscribe(_ id: Int) {
        let inbox = state.withLock { s in
            s.channels[id] = nil
            return s.inboxes.removeValue(forKey: id)
        }
        inbox?.finish()
    }

    /// Returns how many streams were handed the event.
    func publish(_ event: [UInt8]) -> Int {
        let (inboxes, channels) = state.withLock { (Array($0.inboxes.values), Array($0.channels.values)) }
        for inbox in inboxes { inbox.yield(event) }
        for channel in channels { channel.send(encoded: event) }
        return inboxes.count + channels.count
    }
}
