// lede-fuzz: every fuzz target of Lede in one executable (Fuzz/README.md).
//  - built by Fuzz/run.sh with libFuzzer (-sanitize=fuzzer,address and -D FUZZING): LEDE_FUZZ_TARGET names the
//    target, the arguments are libFuzzer's;
//  - built plainly (debug, or release with Benchmarks/readers.sh's flags): `lede-fuzz replay TARGET PATH…` runs files or
//    folders through a target, `lede-fuzz cost` times the readers on adversarial shapes, `lede-fuzz list` names them.
#if LEDE_FUZZ_TESTABLE
import Foundation
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

#if FUZZING
/// The target LEDE_FUZZ_TARGET names, looked up once.
let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["LEDE_FUZZ_TARGET"] ?? ""
    guard let t = fuzzTargets.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(Data("LEDE_FUZZ_TARGET must name one of: \(fuzzTargets.map(\.name).joined(separator: " "))\n".utf8))
        exit(2)
    }
    return t
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    selectedTarget.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}
#else
@main
struct LedeFuzz {
    static func main() {
        let args = Array(CommandLine.arguments.dropFirst())
        switch args.first {
        case "list":
            for t in fuzzTargets { print("\(t.name)\t\(t.about)") }
        case "replay" where args.count >= 2:
            guard let t = fuzzTargets.first(where: { $0.name == args[1] }) else { usage() }
            var n = 0
            for path in args.dropFirst(2) {
                for file in files(at: path) {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    [UInt8](data).withUnsafeBufferPointer { t.run($0) }
                    n += 1
                }
            }
            print("\(t.name): \(n) inputs replayed, no finding")
        case "cost":
            // cost [--only TEXT] [BYTES…]: every case (or those whose name holds TEXT) at the sizes given.
            var rest = Array(args.dropFirst())
            var only: String?
            if rest.first == "--only", rest.count > 1 { only = rest[1]; rest.removeFirst(2) }
            let sizes = rest.compactMap { Int($0) }
            CostBench.run(sizes: sizes.isEmpty ? [4 << 10, 32 << 10, 256 << 10] : sizes, only: only)
        default:
            usage()
        }
    }

    static func files(at path: String) -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { return [] }
        guard isDir.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }.filter { !$0.hasSuffix("/.gitkeep") }
    }

    static func usage() -> Never {
        print("usage: lede-fuzz list | replay TARGET PATH… | cost [--only TEXT] [BYTES…]")
        exit(2)
    }
}
#endif
#else
// A release build without Fuzz/'s flags (`swift build -c release` of every product) has no targets to offer.
import Glibc

@main
struct LedeFuzz {
    static func main() {
        let message = "lede-fuzz: a plain release build has no targets; build it with Fuzz/run.sh (libFuzzer) or Benchmarks/readers.sh\n"
        _ = message.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
}
#endif
