import Foundation
import HTTPServer

/// JSON Lines (`application/jsonl`), as the streamed screens (the feed, the article, the Saved tab) write them: one
/// JSON value a line, each line sent as it is ready; and the encoder of Lede's own JSON values.
enum JSONLines {
    static let mediaType = "application/jsonl"

    /// Whether the request's `Accept` prefers JSON Lines to one JSON document.
    static func preferred(by request: HTTPRequest) -> Bool {
        MediaNegotiation.prefers(mediaType, over: "application/json", in: request.headers)
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return e
    }()

    /// `value` as JSON (keys sorted, slashes unescaped); `{}` for a value that cannot be encoded.
    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        [UInt8]((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    /// One line: the JSON and its line feed.
    static func line(_ json: [UInt8]) -> [UInt8] {
        var out = json
        out.append(10)
        return out
    }

    static func appendLine(_ json: [UInt8], to out: inout [UInt8]) {
        out.append(contentsOf: json)
        out.append(10)
    }
}
