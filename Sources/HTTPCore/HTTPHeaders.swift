/// An ordered list of header fields with case-insensitive lookup: a request's and a response's, in both directions (the
/// server's requests and answers, the client's calls and the answers it reads). Names keep the case they were sent with.
/// Fields received (a parsed request's) are kept as bytes: each field line copied once from the parser's buffer into
/// one growing buffer, with a span per field, and made strings only when asked for; an emptied list keeps the
/// buffer for the next request. Fields added by code (a response's) are kept as the strings they were given, after
/// the received ones.
public struct HTTPHeaders: Sequence, Sendable, ExpressibleByDictionaryLiteral {
    /// The received fields, boxed: a list with none (a response's) is two words to copy.
    private var received: Received?
    private var added: [(name: String, value: String)] = []

    /// Received field: its name and its value (trimmed) as offsets into the box's bytes.
    struct Span: Sendable {
        var nameStart: Int32, nameEnd: Int32, valueStart: Int32, valueEnd: Int32
    }

    /// A field of a block copied already (`ReceivedAppender.block`), as a parser hands it over: where its name starts
    /// and ends and where its value starts and ends, as offsets in the list's bytes (the block's offset plus the places
    /// in the block). A tuple: made in the parser's own code, with no call.
    package typealias FieldOffsets = (nameStart: Int32, nameEnd: Int32, valueStart: Int32, valueEnd: Int32)

    /// Received field lines and their spans, in two buffers the box owns, which only grow; emptied by setting the
    /// counts to zero.
    final class Received: @unchecked Sendable {  // invariant: changed only while uniquely referenced (`mutableReceived`); a shared box is only read
        private(set) var bytes: UnsafeMutablePointer<UInt8>
        private(set) var byteCount = 0
        private var byteCapacity: Int
        private(set) var spans: UnsafeMutablePointer<Span>
        private(set) var spanCount = 0
        private var spanCapacity: Int

        init(byteCapacity: Int = 512, spanCapacity: Int = 16) {
            self.byteCapacity = Swift.max(byteCapacity, 16); self.spanCapacity = Swift.max(spanCapacity, 4)
            bytes = .allocate(capacity: self.byteCapacity)
            spans = .allocate(capacity: self.spanCapacity)
        }

        deinit { bytes.deallocate(); spans.deallocate() }

        var byteBuffer: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: bytes, count: byteCount) }
        var spanBuffer: UnsafeBufferPointer<Span> { UnsafeBufferPointer(start: spans, count: spanCount) }

        func copy() -> Received {
            let c = Received(byteCapacity: byteCount, spanCapacity: spanCount)
            c.bytes.update(from: bytes, count: byteCount); c.byteCount = byteCount
            c.spans.update(from: spans, count: spanCount); c.spanCount = spanCount
            return c
        }

        /// Appends a field line (name, colon, optional whitespace, value): `name` and `value` are ranges in `line`.
        func append(line: UnsafeBufferPointer<UInt8>, name: Range<Int>, value: Range<Int>) {
            appendSpan(line: appendBlock(line), name: name, value: value)
        }

        /// Copies a block of field lines at once (one line, or a whole response head's with the CR LF between them): the
        /// offset it starts at, for `appendSpan`.
        @inline(__always)
        func appendBlock(_ block: UnsafeBufferPointer<UInt8>) -> Int {
            reserve(bytes: block.count, spans: 0)
            let start = byteCount
            if let base = block.baseAddress { (bytes + start).update(from: base, count: block.count) }
            byteCount += block.count
            return start
        }

        /// A field of a block copied already: `name` and `value` are ranges from `line`, an offset into the box's bytes.
        @inline(__always)
        func appendSpan(line: Int, name: Range<Int>, value: Range<Int>) {
            if spanCount == spanCapacity { reserve(bytes: 0, spans: 1) }
            (spans + spanCount).initialize(to: Span(nameStart: Int32(line + name.lowerBound), nameEnd: Int32(line + name.upperBound),
                                                    valueStart: Int32(line + value.lowerBound), valueEnd: Int32(line + value.upperBound)))
            spanCount += 1
        }

        private func reserve(bytes more: Int, spans moreSpans: Int) {
            if byteCount + more > byteCapacity {
                let capacity = Swift.max(byteCapacity * 2, byteCount + more)
                let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
                grown.update(from: bytes, count: byteCount)
                bytes.deallocate()
                bytes = grown; byteCapacity = capacity
            }
            if spanCount + moreSpans > spanCapacity {
                let capacity = Swift.max(spanCapacity * 2, spanCount + moreSpans)
                let grown = UnsafeMutablePointer<Span>.allocate(capacity: capacity)
                grown.update(from: spans, count: spanCount)
                spans.deallocate()
                spans = grown; spanCapacity = capacity
            }
        }

        /// Fields of blocks copied already, all at once (one check of the room for them).
        func appendSpans(_ more: UnsafeBufferPointer<FieldOffsets>) {
            reserve(bytes: 0, spans: more.count)
            for (k, f) in more.enumerated() {
                (spans + spanCount + k).initialize(to: Span(nameStart: f.nameStart, nameEnd: f.nameEnd, valueStart: f.valueStart, valueEnd: f.valueEnd))
            }
            spanCount += more.count
        }

        func removeAll() { byteCount = 0; spanCount = 0 }

        /// Drops the spans `drop` picks, keeping the others in order (their bytes stay until the box is emptied).
        func removeSpans(where drop: (Span) -> Bool) {
            var kept = 0
            for i in 0..<spanCount where !drop(spans[i]) { spans[kept] = spans[i]; kept += 1 }
            spanCount = kept
        }

        func name(_ s: Span) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: bytes + Int(s.nameStart), count: Int(s.nameEnd - s.nameStart)) }
        func value(_ s: Span) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: bytes + Int(s.valueStart), count: Int(s.valueEnd - s.valueStart)) }
    }

    /// The received fields' box, made unique (copied when shared) to be changed.
    private mutating func mutableReceived() -> Received {
        // Checked before any other reference to the box is taken (a binding would make it look shared).
        if !isKnownUniquelyReferenced(&received) {
            received = received.map { $0.copy() } ?? Received()
        }
        return received.unsafelyUnwrapped
    }

    public init() {}
    public init(_ fields: [(String, String)]) { added = fields.map { (name: $0.0, value: $0.1) } }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// The fields, in order, names as sent.
    public var fields: [(name: String, value: String)] {
        guard let r = received, r.spanCount > 0 else { return added }
        return r.spanBuffer.map { (name: String(decoding: r.name($0), as: UTF8.self), value: String(decoding: r.value($0), as: UTF8.self)) } + added
    }

    public var count: Int { (received?.spanCount ?? 0) + added.count }
    public var isEmpty: Bool { added.isEmpty && (received?.spanCount ?? 0) == 0 }
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        if let r = received, let s = HTTPHeaders.firstSpan(r, name) { return String(decoding: r.value(s), as: UTF8.self) }
        for f in added where f.name.asciiCaseInsensitiveEquals(name) { return f.value }
        return nil
    }

    public func values(_ name: String) -> [String] {
        var out: [String] = []
        forEach(named: name) { out.append(String(decoding: $0, as: UTF8.self)) }
        return out
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public mutating func add(_ name: String, _ value: String) { added.append((name: name, value: value)) }

    /// A parser's: a received field line it has checked, from its buffer (`name` and `value` are ranges in it).
    package mutating func add(line: UnsafeBufferPointer<UInt8>, name: Range<Int>, value: Range<Int>) {
        mutableReceived().append(line: line, name: name, value: value)
    }

    /// A parser's way to add a whole head's received lines: the box made unshared once, not once a line (no retain
    /// and release a field).
    package mutating func appendingReceived<R, E: Error>(_ body: (ReceivedAppender) throws(E) -> R) throws(E) -> R {
        try body(ReceivedAppender(box: mutableReceived()))
    }

    /// Adds checked field lines to a list's unshared box (`appendingReceived`).
    package struct ReceivedAppender {
        let box: Received
        /// A received field line it has checked (`name` and `value` are ranges in `line`).
        @inline(__always)
        package func add(line: UnsafeBufferPointer<UInt8>, name: Range<Int>, value: Range<Int>) { box.append(line: line, name: name, value: value) }
        /// Field lines checked, or to be checked, before their spans are added: copied in one go. Returns the offset
        /// the fields' places are counted from (`FieldOffsets`).
        @inline(__always)
        package func block(_ lines: UnsafeBufferPointer<UInt8>) -> Int { box.appendBlock(lines) }
        /// Fields of the block, all at once: for a parser that reads many (a response head's), one call and one check of
        /// the room for them.
        package func add(fields: UnsafeBufferPointer<FieldOffsets>) { box.appendSpans(fields) }
    }

    /// Empties the list. An unshared box of received fields is kept, with its buffers, for the next fields; a shared one
    /// (a list handed out still holds it) is let go, and a new box made at once with room for `bytes` of field lines
    /// and `fields` fields when asked (a parser that knows the size its heads run to), else when a field is added.
    package mutating func removeAllKeepingCapacity(orReserving bytes: Int? = nil, fields: Int = 16) {
        if isKnownUniquelyReferenced(&received) { received.unsafelyUnwrapped.removeAll() }
        else { received = bytes.map { Received(byteCapacity: $0, spanCapacity: fields) } }
        if !added.isEmpty { added.removeAll(keepingCapacity: true) }
    }

    /// Replaces every field called `name` by one with `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field called `name`.
    public mutating func remove(_ name: String) {
        if let r = received, HTTPHeaders.firstSpan(r, name) != nil {
            let box = mutableReceived()
            var name = name
            name.withUTF8 { n in box.removeSpans { ASCII.caseInsensitiveEquals(box.name($0), n) } }
        }
        added.removeAll { $0.name.asciiCaseInsensitiveEquals(name) }
    }

    /// Comma-separated list members of every field called `name`, trimmed, lower-cased, empty members dropped.
    public func tokens(_ name: String) -> [String] {
        var out: [String] = []
        forEach(named: name) { v in
            var member: [UInt8] = []
            func flush() {
                while let l = member.last, l == 32 || l == 9 { member.removeLast() }
                if !member.isEmpty { out.append(String(decoding: member, as: UTF8.self)) }
                member.removeAll(keepingCapacity: true)
            }
            for b in v {
                if b == 44 { flush(); continue }
                if member.isEmpty && (b == 32 || b == 9) { continue }
                member.append(ASCII.lower(b))
            }
            flush()
        }
        return out
    }

    /// Calls `body` with the value bytes of every field called `name` (case-insensitively), in order.
    public func forEach(named name: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        if let r = received, r.spanCount > 0 {
            var name = name
            try name.withUTF8 { n in
                for s in r.spanBuffer where ASCII.caseInsensitiveEquals(r.name(s), n) { try body(r.value(s)) }
            }
        }
        for f in added where f.name.asciiCaseInsensitiveEquals(name) {
            var value = f.value
            try value.withUTF8 { try body($0) }
        }
    }

    /// The value of the received field at `index` (in the order the fields arrived), read where it lies; nil when
    /// there is none there. For a reader that noted where a field is as the fields were read.
    package func withReceivedValue<R>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        guard let r = received, index >= 0, index < r.spanCount else { return nil }
        return try body(r.value(r.spans[index]))
    }

    private static func firstSpan(_ r: Received, _ name: String) -> Span? {
        guard r.spanCount > 0 else { return nil }
        var name = name
        return name.withUTF8 { n in r.spanBuffer.first { ASCII.caseInsensitiveEquals(r.name($0), n) } }
    }
}

extension String {
    /// ASCII case-insensitive equality over contiguous UTF-8 (header names are ASCII).
    package func asciiCaseInsensitiveEquals(_ other: String) -> Bool {
        if self == other { return true }
        guard self.utf8.count == other.utf8.count else { return false }
        var a = self, b = other
        return a.withUTF8 { x in b.withUTF8 { y in ASCII.caseInsensitiveEquals(x, y) } }
    }
}

extension Substring {
    package func asciiCaseInsensitiveEquals(_ other: String) -> Bool { String(self).asciiCaseInsensitiveEquals(other) }
}

extension StringProtocol {
    package func lowercasedASCII() -> String {
        String(decoding: self.utf8.map(ASCII.lower), as: UTF8.self)
    }

    /// Drops leading and trailing spaces and horizontal tabs (HTTP's optional whitespace).
    package func trimmingOWS() -> Substring {
        let s = Substring(self)
        let u = s.utf8
        var a = u.startIndex, b = u.endIndex
        while a < b, u[a] == 32 || u[a] == 9 { a = u.index(after: a) }
        while b > a, u[u.index(before: b)] == 32 || u[u.index(before: b)] == 9 { b = u.index(before: b) }
        return Substring(u[a..<b])
    }
}
