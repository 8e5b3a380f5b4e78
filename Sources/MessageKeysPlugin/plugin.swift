import Foundation
import PackagePlugin

/// Generates `MessageKey` for the Lede target from its catalogue's English (`i18n/en.json`) whenever en.json changes:
/// the catalogue is the one source of its keys (as swift-openapi-generator generates a client from its spec). A key
/// `lede-problem-title-400` is the case `problemTitle400`: the `lede-` prefix dropped, the rest in lower camel case, in
/// the file's order.
///
/// The command is POSIX sh and awk, not a tool of this package: a build with other flags (Fuzz/run.sh's libFuzzer,
/// whose `main` would replace a tool's) builds nothing more for it. MessagesTests holds the generated cases to en.json's
/// keys, so a key the script could not read fails the tests.
@main
struct MessageKeysPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        // The catalogue's English, as the target's files list it (its resources included).
        guard let english = target.sourceFiles.first(where: { $0.url.lastPathComponent == "en.json" && $0.url.deletingLastPathComponent().lastPathComponent == "i18n" })?.url else {
            throw PluginError.noCatalogue(target.name)
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "MessageKey.swift")
        return [.buildCommand(displayName: "Generating MessageKey from i18n/en.json",
                              executable: URL(fileURLWithPath: "/bin/sh"),
                              arguments: ["-c", Self.script, "message-keys", english.path, output.path],
                              inputFiles: [english],
                              outputFiles: [output])]
    }

    /// `sh -c script message-keys <en.json> <MessageKey.swift>`: one case a `"lede-…":` key line; the file written only
    /// when it changes (an unchanged catalogue recompiles nothing).
    static let script = #"""
    set -eu
    awk '
    BEGIN {
        print "// Generated from Sources/Lede/i18n/en.json by the MessageKeys plugin (Sources/MessageKeysPlugin): do not edit."
        print "// A message is added to the catalogue (en.json, qqq.json), and its case appears here."
        print ""
        print "/// A message of Lede'"'"'s own for a person, by its key in the catalogue (`Sources/Lede/i18n/`, MediaWiki'"'"'s i18n format)."
        print "enum MessageKey: String, CaseIterable, Sendable {"
    }
    match($0, /^[ \t]*"lede-[a-z0-9-]+"[ \t]*:/) {
        key = $0; sub(/^[ \t]*"/, "", key); sub(/".*$/, "", key)
        n = split(substr(key, 6), words, "-")
        name = words[1]
        for (i = 2; i <= n; i++) name = name toupper(substr(words[i], 1, 1)) substr(words[i], 2)
        printf "    case %s = \"%s\"\n", name, key
    }
    END { print "}" }
    ' "$1" > "$2.next"
    if cmp -s "$2.next" "$2"; then rm -f "$2.next"; else mv "$2.next" "$2"; fi
    """#

    enum PluginError: Error, CustomStringConvertible {
        case noCatalogue(String)
        var description: String {
            switch self { case .noCatalogue(let target): return "\(target) has no i18n/en.json" }
        }
    }
}
