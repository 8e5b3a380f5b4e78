import CLinux
import Glibc
import Synchronization
import HTTPCore

/// Request counters, a latency histogram, connections and bytes. Each event loop records into its own
/// shard (an uncontended mutex); a scrape adds the shards up. Other layers add their own text through
/// `addCollector`.
public final class ServerMetrics: Sendable {
    /// Upper bounds of the latency histogram, in seconds.
    public static let latencyBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct ShardData {
        var requests = CounterTable()      // (route index + 2) << 10 | status
        var buckets = [Int](repeating: 0, count: ServerMetrics.latencyBuckets.count + 1)
        var durationSum: Double = 0
        var bytesOut = 0
    }
    /// One loop's counts: written by its loop, read by a scrape (an uncontended mutex).
    final class Shard: Sendable {
        let data = Mutex(ShardData())
    }

    let shards: [Shard]
    private let open = Atomic<Int>(0), accepted = Atomic<Int>(0), rejected = Atomic<Int>(0), evicted = Atomic<Int>(0)
    private let streamsOpen = Atomic<Int>(0), streamsTotal = Atomic<Int>(0), streamBytes = Atomic<Int>(0)
    private let bodiesRefused = Atomic<Int>(0)
    private let streamsStalled = Atomic<Int>(0), streamsRefused = Atomic<Int>(0), bufferedBytes = Atomic<Int>(0)
    private let collectors = Mutex<[@Sendable () -> String]>([])
    /// Route patterns by index, set when the server starts.
    private let labels = Mutex<[String]>([])
    var routeLabels: [String] {
        get { labels.withLock { $0 } }
        set { labels.withLock { $0 = newValue } }
    }

    /// The prefix of every metric name (`ServerConfiguration.Naming.metricPrefix`).
    public let prefix: String

    init(loops: Int, prefix: String = "http_") {
        self.prefix = prefix
        shards = (0..<loops).map { _ in Shard() }
    }

    public var openConnections: Int { open.load(ordering: .relaxed) }
    func connectionOpened() { open.wrappingAdd(1, ordering: .relaxed); accepted.wrappingAdd(1, ordering: .relaxed) }
    func connectionClosed() { open.wrappingSubtract(1, ordering: .relaxed) }
    func connectionRejected() { rejected.wrappingAdd(1, ordering: .relaxed) }
    func connectionEvicted() { evicted.wrappingAdd(1, ordering: .relaxed) }
    func bodyRefused() { bodiesRefused.wrappingAdd(1, ordering: .relaxed) }

    /// Streams open now.
    public var openStreams: Int { streamsOpen.load(ordering: .relaxed) }
    /// Bytes streams hold in their connections' outbound buffers now (each stream bounded by its high-water mark
    /// plus one write).
    public var streamBufferedBytes: Int { bufferedBytes.load(ordering: .relaxed) }
    /// Takes a stream slot unless `max` are open; false when the stream must be refused.
    func streamOpened(max: Int) -> Bool {
        let now = streamsOpen.wrappingAdd(1, ordering: .relaxed).newValue
        if now > max { streamsOpen.wrappingSubtract(1, ordering: .relaxed); streamsRefused.wrappingAdd(1, ordering: .relaxed); return false }
        streamsTotal.wrappingAdd(1, ordering: .relaxed)
        return true
    }
    func streamClosed(stalled: Bool) {
        streamsOpen.wrappingSubtract(1, ordering: .relaxed)
        if stalled { streamsStalled.wrappingAdd(1, ordering: .relaxed) }
    }
    func streamWrote(_ n: Int) { streamBytes.wrappingAdd(n, ordering: .relaxed) }
    func streamBuffered(_ delta: Int) { bufferedBytes.wrappingAdd(delta, ordering: .relaxed) }

    /// Route index -1: no route matched; -2: the request was refused by the parser.
    func record(loop: Int, route: Int, status: Int, seconds: Double, bytes: Int) {
        let key = (route + 2) << 10 | (status & 1023)
        // By index, not `enumerated()`: unoptimised, a generic iterator allocates at each step, and the steps here
        // depend on the latency — the allocation tests' counts followed the machine's load.
        let bounds = ServerMetrics.latencyBuckets
        var bucket = 0
        while bucket < bounds.count && !(seconds <= bounds[bucket]) { bucket += 1 }
        shards[loop].data.withLock { s in
            s.requests.increment(key)
            s.buckets[bucket] += 1
            s.durationSum += seconds
            s.bytesOut += bytes
        }
    }

    /// Adds text (Prometheus exposition format) to every scrape.
    public func addCollector(_ collector: @escaping @Sendable () -> String) {
        collectors.withLock { $0.append(collector) }
    }

    public func render() -> String {
        var requests: [Int: Int] = [:]
        var buckets = [Int](repeating: 0, count: ServerMetrics.latencyBuckets.count + 1)
        var sum = 0.0, bytes = 0
        for shard in shards {
            let s = shard.data.withLock { $0 }
            for (k, v) in s.requests.entries { requests[k, default: 0] += v }
            for i in buckets.indices { buckets[i] += s.buckets[i] }
            sum += s.durationSum; bytes += s.bytesOut
        }
        let routeLabels = self.routeLabels
        let p = prefix
        var out = PrometheusText.header(p + "requests_total", "counter", "HTTP requests answered, by route pattern and status.")
        for (key, count) in requests.sorted(by: { $0.key < $1.key }) {
            let route = (key >> 10) - 2, status = key & 1023
            let label = route == -1 ? "unmatched" : (route == -2 ? "invalid" : (route < routeLabels.count ? routeLabels[route] : "?"))
            out += "\(p)requests_total{route=\(JSONText.quote(label)),status=\"\(status)\"} \(count)\n"
        }
        out += PrometheusText.histogram(name: p + "request_duration_seconds", help: "Time from a complete request to its response being queued.",
                                        bounds: ServerMetrics.latencyBuckets, counts: buckets, sum: sum)
        out += PrometheusText.single(p + "open_connections", "gauge", "Connections open now.", open.load(ordering: .relaxed))
        out += PrometheusText.single(p + "connections_total", "counter", "Connections accepted.", accepted.load(ordering: .relaxed))
        out += PrometheusText.single(p + "connections_rejected_total", "counter", "Connections refused with 503 past the connection limit, past their address's share of it, or on descriptor exhaustion.", rejected.load(ordering: .relaxed))
        out += PrometheusText.single(p + "connections_evicted_total", "counter", "Idle keep-alive connections closed, the longest idle first, to let a new one in at the connection limit.", evicted.load(ordering: .relaxed))
        out += PrometheusText.single(p + "bodies_refused_total", "counter", "Requests answered 503 because their bodies would pass the in-flight body budget.", bodiesRefused.load(ordering: .relaxed))
        out += PrometheusText.single(p + "response_bytes_total", "counter", "Response bytes queued (head and body).", bytes)
        out += PrometheusText.single(p + "streams_open", "gauge", "Streamed responses (including server-sent events) open now.", streamsOpen.load(ordering: .relaxed))
        out += PrometheusText.single(p + "streams_total", "counter", "Streamed responses started.", streamsTotal.load(ordering: .relaxed))
        out += PrometheusText.single(p + "stream_bytes_total", "counter", "Body bytes streams wrote (framed, after compression).", streamBytes.load(ordering: .relaxed))
        out += PrometheusText.single(p + "stream_buffered_bytes", "gauge", "Bytes streams hold in outbound buffers now.", bufferedBytes.load(ordering: .relaxed))
        out += PrometheusText.single(p + "streams_stalled_total", "counter", "Streams closed because the client stopped reading past the stall timeout.", streamsStalled.load(ordering: .relaxed))
        out += PrometheusText.single(p + "streams_refused_total", "counter", "Stream requests answered 503 past the stream limit.", streamsRefused.load(ordering: .relaxed))
        let extra = collectors.withLock { $0 }
        for c in extra { out += c() }
        return out
    }
}

/// Counts by non-negative integer key in an open-addressing table: a multiplicative hash and linear probing,
/// so counting a request costs a few instructions (a `Dictionary` hashes with SipHash every time).
struct CounterTable {
    private var keys = [Int](repeating: -1, count: 64)
    private var counts = [Int](repeating: 0, count: 64)
    private var used = 0

    mutating func increment(_ key: Int) { add(key, 1) }

    mutating func add(_ key: Int, _ n: Int) {
        let mask = keys.count - 1
        var i = Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while true {
            if keys[i] == key { counts[i] += n; return }
            if keys[i] == -1 { break }
            i = (i + 1) & mask
        }
        if (used + 1) * 2 > keys.count { grow(); add(key, n); return }
        keys[i] = key; counts[i] = n; used += 1
    }

    var entries: [(key: Int, count: Int)] {
        keys.indices.compactMap { keys[$0] == -1 ? nil : (key: keys[$0], count: counts[$0]) }
    }

    private mutating func grow() {
        let old = entries
        keys = [Int](repeating: -1, count: keys.count * 2)
        counts = [Int](repeating: 0, count: keys.count)
        used = 0
        for e in old { add(e.key, e.count) }
    }
}

