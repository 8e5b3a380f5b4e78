import HTTPServer
import LedeBasics

/// The request parameters several screens read, each read and refused in one place: an article's title from the path
/// (checked as MediaWiki's titles allow, in its database form when asked) and a whole-number query parameter.
enum Parameters {
    static func articleTitle(_ raw: String?) throws -> String {
        if var ascii = raw, let t = ascii.withUTF8({ asciiTitle($0) }), !t.isEmpty { return t }
        let t = ArticleTitle.trimmingSpaces(raw ?? "")
        func forbidden(_ c: Unicode.Scalar) -> Bool {
            switch c.value {
            case 0..<32, 35, 60, 62, 91, 93, 123, 124, 125: return true   // controls # < > [ ] { |  }
            default: return false
            }
        }
        // At most 255 code points as sent (what openapi.yaml's maxLength counts), something besides spaces.
        guard !t.isEmpty, (raw ?? "").unicodeScalars.count <= 255, !t.unicodeScalars.contains(where: forbidden) else {
            throw Problem(status: 400, slug: "invalid-title", .problemInvalidTitle)
        }
        return t
    }

    /// `articleTitle`, then the title in its database form (`ArticleTitle.normalise`): one pass over the bytes of an ASCII
    /// title (a warm personal feed reads two titles a request), the general rules for anything else.
    static func normalisedArticleTitle(_ raw: String) throws -> String {
        var ascii = raw
        if let t = ascii.withUTF8({ asciiNormalisedTitle($0) }) { return t }
        return ArticleTitle.normalise(try articleTitle(raw))
    }

    /// The same over a title's bytes (valid UTF-8).
    static func normalisedArticleTitle(bytes: UnsafeBufferPointer<UInt8>) throws -> String {
        if let t = asciiNormalisedTitle(bytes) { return t }
        return ArticleTitle.normalise(try articleTitle(String(decoding: bytes, as: UTF8.self)))
    }

    /// The same as `asciiTitle` then `ArticleTitle.normaliseASCII`: nil when the title is not ASCII, holds a forbidden
    /// byte, is over 255 bytes or is only spaces (the general path then decides, or gives the problem).
    private static func asciiNormalisedTitle(_ u: UnsafeBufferPointer<UInt8>) -> String? {
        guard u.count <= 255, isPlainASCIITitle(u), let t = ArticleTitle.normaliseASCII(bytes: u), !t.isEmpty else { return nil }
        return t
    }

    /// Every byte printable ASCII and allowed in a title (no controls, `# < > [ ] { | }`).
    private static func isPlainASCIITitle(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        for b in u {
            if b >= 128 || b < 32 { return false }
            switch b { case 35, 60, 62, 91, 93, 123, 124, 125: return false; default: break }
        }
        return true
    }

    /// `articleTitle` over the bytes of an ASCII title (nearly every one in a URL): the title trimmed of spaces and tabs,
    /// "" when nothing else is left, nil when it is not ASCII (the general rules then decide). Throws nothing itself: a
    /// forbidden byte or a title over 255 characters answers nil too, and the general path gives the problem.
    private static func asciiTitle(_ u: UnsafeBufferPointer<UInt8>) -> String? {
        guard u.count <= 255, isPlainASCIITitle(u) else { return nil }
        var start = 0, end = u.count
        while start < end, u[start] == 32 { start += 1 }
        while end > start, u[end - 1] == 32 { end -= 1 }
        if start == 0 && end == u.count { return String(decoding: u, as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(rebasing: u[start..<end]), as: UTF8.self)
    }

    static func int(_ request: HTTPRequest, _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = request.queryParameter(name) else { return value }
        // Nine digits, or eighteen for a range past them (a revision id): never more than an Int holds.
        guard raw.utf8.count <= (range.upperBound > 999_999_999 ? 18 : 9), raw.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(raw), range.contains(n) else {
            throw Problem(status: 400, slug: "invalid-parameter", .problemIntegerRange, name, String(range.lowerBound), String(range.upperBound))
        }
        return n
    }
}
