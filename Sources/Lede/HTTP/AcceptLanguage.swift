import HTTPCore

/// `Accept-Language` (RFC 9110 §12.5.4) walked in one place, over bytes (every mobile request carries it): its tags by
/// weight, for whichever reader picks from them — the edition (`LanguageCode`), the interface language
/// (`InterfaceLanguage`), the article screen's language picker.
enum AcceptLanguage {
    /// What `pick` makes of the most preferred tag it accepts: the highest q, then the first; `*`, q=0 and malformed
    /// weights never count. Stops at the first q=1 tag picked (nothing later can beat it).
    static func best<T>(_ header: String?, _ pick: (UnsafeBufferPointer<UInt8>) -> T?) -> T? {
        guard let header else { return nil }
        var best: (value: T, q: Int)?
        WeightedList.forEach(header) { tag, weight in
            let q = weight ?? 0   // a malformed weight counts as "not acceptable"
            guard q > (best?.q ?? 0), !(tag.count == 1 && tag[0] == 42), let value = pick(tag) else { return true }
            best = (value, q)
            return q < 1000
        }
        return best?.value
    }

    /// Everything `pick` accepts with q > 0, most preferred first (ties in header order), each once (by `id`), at most
    /// `limit`; the header is read for its first 32 picks at most.
    static func ranked<T>(_ header: String?, limit: Int, id: (T) -> String, _ pick: (UnsafeBufferPointer<UInt8>) -> T?) -> [T] {
        guard let header else { return [] }
        var found: [(value: T, q: Int, order: Int)] = []
        WeightedList.forEach(header) { tag, weight in
            let q = weight ?? 0
            guard q > 0, !(tag.count == 1 && tag[0] == 42), let value = pick(tag), !found.contains(where: { id($0.value) == id(value) }) else { return true }
            found.append((value, q, found.count))
            return found.count < 32
        }
        return found.sorted { ($0.q, -$0.order) > ($1.q, -$1.order) }.prefix(limit).map(\.value)
    }
}
