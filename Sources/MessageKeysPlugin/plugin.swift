import PackagePlugin

/// Generates `MessageKey` for the Lede target from its catalogue's English (`i18n/en.json`), with MessageKeysTool: the
/// catalogue is the one source of its keys (as swift-openapi-generator generates a client from its spec).
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
                              executable: try context.tool(named: "MessageKeysTool").url,
                              arguments: [english.path, output.path],
                              inputFiles: [english],
                              outputFiles: [output])]
    }

    enum PluginError: Error, CustomStringConvertible {
        case noCatalogue(String)
        var description: String {
            switch self { case .noCatalogue(let target): return "\(target) has no i18n/en.json" }
        }
    }
}
