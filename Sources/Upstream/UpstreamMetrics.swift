import Foundation
import Synchronization
import EventLoops
import LedeBasics
import HTTPCore

/// Upstream calls by kind and outcome, and their latency, rendered into `/metrics` with the cache counters.
public final class UpstreamMetrics: Sendable {
    public static let buckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5]

    private struct Table {
        var calls: [CallKey: Int] = [:]
        /// Calls of the key counted last, not yet in `calls`: the next call is of the same kind and outcome as a rule,
        /// and is counted without hashing (its strings are the same storage, and compare at once).
        var lastKey: CallKey?
        var lastCount = 0
        var histogram = [Int](repeating: 0, count: UpstreamMetrics.buckets.count + 1)
        var sum = 0.0
        var skippedItems: [String: Int] = [:]

        mutating func count(_ key: CallKey) {
            if lastKey == key { lastCount += 1; return }
            flush()
            lastKey = key; lastCount = 1
        }

        mutating func flush() {
            if let k = lastKey, lastCount > 0 { calls[k, default: 0] += lastCount }
            lastCount = 0
        }

        mutating func add(_ other: Table) {
            var other = other
            other.flush()
            for (k, n) in other.calls { calls[k, default: 0] += n }
            for i in histogram.indices { histogram[i] += other.histogram[i] }
            sum += other.sum
            for (k, n) in other.skippedItems { skippedItems[k, default: 0] += n }
        }
    }
    private struct CallKey: Hashable { var kind: String; var outcome: String }
    /// One table per event loop (and one for any other thread): a call records into its own loop's, so the two loops
    /// never take one lock (nor pass its cache line back and forth) per call; a scrape adds them up.
    private final class Shard: Sendable { let table = Mutex(Table()) }
    private let shards: [Shard]

    /// `loops`: how many event loops record (more are folded onto the same tables).
    public init(loops: Int = 8) { shards = (0...max(1, loops)).map { _ in Shard() } }

    private var local: Shard {
        guard let loop = EventLoop.current else { return shards[0] }
        return shards[1 + loop.id % (shards.count - 1)]
    }

    private var merged: Table {
        var all = Table()
        for shard in shards { all.add(shard.table.withLock { $0 }) }
        return all
    }

    /// One call's outcome; `seconds` nil for a call that was never sent (back-off, open breaker), which counts
    /// but does not enter the latency histogram.
    public func record(kind: String, outcome: String, seconds: Double?) {
        var bucket = UpstreamMetrics.buckets.count
        if let seconds { for (i, b) in UpstreamMetrics.buckets.enumerated() where seconds <= b { bucket = i; break } }
        local.table.withLock { t in
            t.count(CallKey(kind: kind, outcome: outcome))
            if let seconds { t.histogram[bucket] += 1; t.sum += seconds }
        }
    }

    /// List items of upstream answers that could not be read and were left out.
    public func skipped(kind: String, count: Int) {
        local.table.withLock { $0.skippedItems[kind, default: 0] += count }
    }

    public func skippedCount(kind: String) -> Int { merged.skippedItems[kind] ?? 0 }

    public func count(kind: String, outcome: String) -> Int { merged.calls[CallKey(kind: kind, outcome: outcome)] ?? 0 }

    public func totalCalls(kind: String) -> Int {
        merged.calls.filter { $0.key.kind == kind }.values.reduce(0, +)
    }

    public func render(cache: UpstreamCache.Counters) -> String {
        let t = merged
        let c = t.calls, h = t.histogram, s = t.sum, skipped = t.skippedItems
        var out = "# HELP lede_upstream_calls_total Upstream calls by kind and outcome.\n# TYPE lede_upstream_calls_total counter\n"
        for (key, n) in c.sorted(by: { ($0.key.kind, $0.key.outcome) < ($1.key.kind, $1.key.outcome) }) {
            out += "lede_upstream_calls_total{kind=\"\(key.kind)\",outcome=\"\(key.outcome)\"} \(n)\n"
        }
        out += "# HELP lede_upstream_items_skipped_total Items of upstream lists that could not be read and were left out, by kind.\n# TYPE lede_upstream_items_skipped_total counter\n"
        for (kind, n) in skipped.sorted(by: { $0.key < $1.key }) { out += "lede_upstream_items_skipped_total{kind=\"\(kind)\"} \(n)\n" }
        out += PrometheusText.histogram(name: "lede_upstream_duration_seconds", help: "Upstream call latency.", bounds: UpstreamMetrics.buckets, counts: h, sum: s)
        out += PrometheusText.single("lede_cache_hits_total", "counter", "Cache lookups answered from a fresh entry.", cache.hits)
        out += PrometheusText.single("lede_cache_misses_total", "counter", "Cache lookups that started an upstream fetch.", cache.misses)
        out += PrometheusText.single("lede_cache_coalesced_total", "counter", "Lookups that joined a fetch already under way for the same key.", cache.coalesced)
        out += PrometheusText.single("lede_cache_stale_served_total", "counter", "Stale values served because the upstream failed (stale-if-error).", cache.staleServed)
        out += PrometheusText.single("lede_cache_evictions_total", "counter", "Entries evicted to stay within the entry and byte bounds.", cache.evictions)
        out += PrometheusText.single("lede_cache_entries", "gauge", "Entries held.", cache.entries)
        out += PrometheusText.single("lede_cache_bytes", "gauge", "Bytes held (response sizes).", cache.bytes)
        return out
    }
}
