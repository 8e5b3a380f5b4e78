import Foundation

// MessageKeysTool: writes `MessageKey` (one case a message) from the catalogue's English, `i18n/en.json`, so that adding
// a message is editing en.json and qqq.json only. Run by the MessageKeys build-tool plugin on every build of Lede whose
// en.json changed: `MessageKeysTool <en.json> <MessageKey.swift>`.
//
// A key `lede-problem-title-400` is the case `problemTitle400`: the `lede-` prefix dropped, the rest in lower camel
// case. The cases are in the catalogue's key order (sorted), so the output depends on the keys alone.

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: MessageKeysTool <en.json> <MessageKey.swift>\n".utf8))
    exit(2)
}
let catalogue = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: arguments[1]))) as? [String: Any] ?? [:]

func caseName(_ key: String) -> String? {
    guard key.hasPrefix("lede-") else { return nil }
    let words = key.dropFirst("lede-".count).split(separator: "-")
    guard let first = words.first, words.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }) else { return nil }
    return String(first) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
}

var lines = [
    "// Generated from Sources/Lede/i18n/en.json by the MessageKeys plugin (Sources/MessageKeysTool): do not edit.",
    "// A message is added to the catalogue (en.json, qqq.json), and its case appears here.",
    "",
    "/// A message of Lede's own for a person, by its key in the catalogue (`Sources/Lede/i18n/`, MediaWiki's i18n format).",
    "enum MessageKey: String, CaseIterable, Sendable {",
]
var problems: [String] = []
for key in catalogue.keys.sorted() where key != "@metadata" {
    guard let name = caseName(key) else { problems.append(key); continue }
    lines.append("    case \(name) = \"\(key)\"")
}
lines.append("}")
guard problems.isEmpty else {
    FileHandle.standardError.write(Data("error: en.json keys that name no Swift case (lede-, then letters, digits and hyphens): \(problems.joined(separator: ", "))\n".utf8))
    exit(1)
}
let text = lines.joined(separator: "\n") + "\n"
let output = URL(fileURLWithPath: arguments[2])
// Written only when it changes: an unchanged catalogue recompiles nothing.
if (try? String(contentsOf: output, encoding: .utf8)) != text {
    try text.write(to: output, atomically: true, encoding: .utf8)
}
