import HTTPServer
import LedeBasics
import Wikimedia

extension JSONNumber {
    /// `text(v)` appended to a body as a literal; a value rounded to 0.1 (every distance and bearing) is written digit
    /// by digit with no string made.
    static func append(_ v: Double, to body: inout AssembledBody) {
        if v.sign == .plus, v < 1e12 {
            let n = Int((v * 10).rounded())
            if Double(n) / 10 == v {
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
                    var end = 24, rest = n / 10
                    if n % 10 != 0 { end -= 1; buffer[end] = UInt8(48 + n % 10); end -= 1; buffer[end] = 46 }
                    repeat { end -= 1; buffer[end] = UInt8(48 + rest % 10); rest /= 10 } while rest > 0
                    body.append(literal: UnsafeBufferPointer(rebasing: buffer[end..<24]))
                }
                return
            }
        }
        body.append(literal: text(v))
    }
}

