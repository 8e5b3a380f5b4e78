/// A URI reference split into its five components (RFC 3986 Appendix B) and resolved against a base URI
/// (§5.2). Works on the text as given: nothing is percent-decoded or normalised beyond dot-segment removal.
public struct URIReference: Equatable, Sendable, CustomStringConvertible {
    public var scheme: String?
    public var authority: String?
    public var path: String
    public var query: String?
    public var fragment: String?

    public init(scheme: String? = nil, authority: String? = nil, path: String, query: String? = nil, fragment: String? = nil) {
        self.scheme = scheme; self.authority = authority; self.path = path; self.query = query; self.fragment = fragment
    }

    /// Splits `text` as the regular expression of Appendix B does. Any string parses (that is what the grammar
    /// of Appendix B says); a scheme must start with a letter and hold only letters, digits, `+`, `-` and `.`.
    public init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") { fragment = String(rest[rest.index(after: hash)...]); rest = rest[..<hash] } else { fragment = nil }
        if let q = rest.firstIndex(of: "?") { query = String(rest[rest.index(after: q)...]); rest = rest[..<q] } else { query = nil }
        if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/"), URIReference.isScheme(rest[..<colon]) {
            scheme = String(rest[..<colon]); rest = rest[rest.index(after: colon)...]
        } else {
            scheme = nil
        }
        if rest.hasPrefix("//") {
            rest = rest.dropFirst(2)
            let end = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<end]); rest = rest[end...]
        } else {
            authority = nil
        }
        path = String(rest)
    }

    static func isScheme(_ s: Substring) -> Bool {
        guard let first = s.utf8.first, (65...90).contains(first) || (97...122).contains(first) else { return false }
        return s.utf8.allSatisfy { (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) || $0 == 43 || $0 == 45 || $0 == 46 }
    }

    /// §5.3: the components recomposed.
    public var description: String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// `scheme://authority`, lower-cased scheme, or nil for a relative reference.
    public var origin: String? {
        guard let scheme, let authority else { return nil }
        return scheme.lowercased() + "://" + authority
    }

    /// §5.2.2: the target URI of `reference` resolved against this (absolute) base URI.
    public func resolving(_ reference: URIReference) -> URIReference {
        var t = URIReference(path: "")
        if let s = reference.scheme {
            t.scheme = s; t.authority = reference.authority
            t.path = URIReference.removeDotSegments(reference.path); t.query = reference.query
        } else {
            if reference.authority != nil {
                t.authority = reference.authority; t.path = URIReference.removeDotSegments(reference.path); t.query = reference.query
            } else {
                if reference.path.isEmpty {
                    t.path = path
                    t.query = reference.query ?? query
                } else {
                    if reference.path.hasPrefix("/") {
                        t.path = URIReference.removeDotSegments(reference.path)
                    } else {
                        t.path = URIReference.removeDotSegments(merge(reference.path))
                    }
                    t.query = reference.query
                }
                t.authority = authority
            }
            t.scheme = scheme
        }
        t.fragment = reference.fragment
        return t
    }

    /// §5.2.3.
    func merge(_ referencePath: String) -> String {
        if authority != nil && path.isEmpty { return "/" + referencePath }
        guard let slash = path.lastIndex(of: "/") else { return referencePath }
        return String(path[...slash]) + referencePath
    }

    /// §5.2.4.
    public static func removeDotSegments(_ input: String) -> String {
        var inp = Substring(input)
        var output: [Substring] = []   // segments, each starting with "/" (or the first one without)
        while !inp.isEmpty {
            if inp.hasPrefix("../") { inp = inp.dropFirst(3) }
            else if inp.hasPrefix("./") { inp = inp.dropFirst(2) }
            else if inp.hasPrefix("/./") { inp = inp.dropFirst(2) }
            else if inp == "/." { inp = "/" }
            else if inp.hasPrefix("/../") { inp = inp.dropFirst(3); if !output.isEmpty { output.removeLast() } }
            else if inp == "/.." { inp = "/"; if !output.isEmpty { output.removeLast() } }
            else if inp == "." || inp == ".." { inp = "" }
            else {
                let start = inp.hasPrefix("/") ? inp.index(after: inp.startIndex) : inp.startIndex
                let end = inp[start...].firstIndex(of: "/") ?? inp.endIndex
                output.append(inp[..<end]); inp = inp[end...]
            }
        }
        return output.joined()
    }
}
