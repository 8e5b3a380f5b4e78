import HTTPCore

/// The languages a request asks words in, read once when it is dispatched (by the app's `ProblemLocalizer`: the
/// server knows no language) and handed to every stage after: the handler (`RequestContext.language`) and the
/// problem stage.
public struct RequestLanguage: Sendable, Equatable {
    /// Where the language an upstream's own words are asked in (MediaWiki's `uselang`) comes from.
    public enum Asked: Sendable, Equatable {
        /// The request names none: the upstream answers in its own language.
        case none
        /// A query parameter named it (as the upstream's code).
        case parameter(String)
        /// A header chose it (as the upstream's code).
        case header(String)
        /// The request named one that is malformed: a route that passes it on refuses the request.
        case malformed
    }

    public var asked: Asked
    /// The language of the app's own words (its catalogue), nil when the request names none it speaks.
    public var words: String?
    /// Whether a header (`Accept-Language`) chose `words`: answers worded by it vary on that header.
    public var wordsByHeader: Bool

    public init(asked: Asked, words: String?, wordsByHeader: Bool) {
        self.asked = asked; self.words = words; self.wordsByHeader = wordsByHeader
    }

    /// A request that names no language.
    public static let unnamed = RequestLanguage(asked: .none, words: nil, wordsByHeader: false)
}
