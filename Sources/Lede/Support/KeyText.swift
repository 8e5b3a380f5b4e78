/// Cache keys written as bytes straight into one string: no interpolation, no `description`, no intermediate strings.
/// Every warm personal feed makes two or three of them.
enum KeyText {
    /// `prefix`, `a`, `separator`, `b`: `nearby:en:5235,483`.
    static func make(_ prefix: String, _ a: Int, _ separator: UInt8, _ b: Int) -> String {
        var prefix = prefix
        return prefix.withUTF8 { p in
            String(unsafeUninitializedCapacity: p.count + 41) { out in
                var n = copy(p, to: out)
                n = write(a, to: out, at: n)
                out[n] = separator
                return write(b, to: out, at: n + 1)
            }
        }
    }

    /// `prefix`, `a`, then `suffix`: `shared:en:20419:true`.
    static func make(_ prefix: String, _ a: Int, _ suffix: StaticString) -> String {
        var prefix = prefix
        return prefix.withUTF8 { p in
            String(unsafeUninitializedCapacity: p.count + 20 + suffix.utf8CodeUnitCount) { out in
                let n = write(a, to: out, at: copy(p, to: out))
                return n + copy(UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount), to: UnsafeMutableBufferPointer(rebasing: out[n...]))
            }
        }
    }

    /// `prefix` then `text`, in one string.
    static func make(_ prefix: String, _ text: String) -> String {
        var prefix = prefix, text = text
        return prefix.withUTF8 { p in
            text.withUTF8 { t in
                String(unsafeUninitializedCapacity: p.count + t.count) { out in
                    let n = copy(p, to: out)
                    return n + copy(t, to: UnsafeMutableBufferPointer(rebasing: out[n...]))
                }
            }
        }
    }

    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, to out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        if let from = bytes.baseAddress, !bytes.isEmpty { out.baseAddress!.update(from: from, count: bytes.count) }
        return bytes.count
    }

    /// `value` in decimal at `out[at...]` (at most 20 bytes); returns the index after it.
    private static func write(_ value: Int, to out: UnsafeMutableBufferPointer<UInt8>, at start: Int) -> Int {
        var n = start
        if value < 0 { out[n] = 45; n += 1 }
        var m = value.magnitude, digits = 1
        while m >= 10 { m /= 10; digits += 1 }
        m = value.magnitude
        var i = n + digits - 1
        repeat { out[i] = UInt8(48 + m % 10); m /= 10; i -= 1 } while m > 0
        return n + digits
    }
}
