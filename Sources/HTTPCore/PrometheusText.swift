/// Prometheus text exposition helpers shared by every metrics source.
public enum PrometheusText {
    /// A metric family's HELP and TYPE lines.
    public static func header(_ name: String, _ type: String, _ help: String) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    /// A family with one label: its HELP and TYPE lines, then a sample per `(label value, sample)`, in order.
    public static func family(_ name: String, _ type: String, _ help: String, label: String, _ samples: [(String, String)]) -> String {
        var out = header(name, type, help)
        for (value, sample) in samples { out += "\(name){\(label)=\(JSONText.quote(value))} \(sample)\n" }
        return out
    }

    /// One metric without labels: its HELP and TYPE lines and its sample.
    public static func single(_ name: String, _ type: String, _ help: String, _ value: Int) -> String {
        header(name, type, help) + "\(name) \(value)\n"
    }

    /// A histogram from per-bucket counts (`counts` has one more entry than `bounds`: the overflow).
    public static func histogram(name: String, help: String, bounds: [Double], counts: [Int], sum: Double) -> String {
        var out = header(name, "histogram", help)
        var cumulative = 0
        for (i, bound) in bounds.enumerated() {
            cumulative += counts[i]
            out += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        cumulative += counts[bounds.count]
        out += "\(name)_bucket{le=\"+Inf\"} \(cumulative)\n\(name)_sum \(sum)\n\(name)_count \(cumulative)\n"
        return out
    }
}
