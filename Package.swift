// swift-tools-version:6.0
// Lede: a Wikipedia backend-for-frontend. No package dependencies: Glibc, Dispatch and Foundation only,
// plus zlib (present on every Swift Linux image) through a system-library target.
import PackageDescription

let package = Package(
    name: "Lede",
    products: [
        .executable(name: "lede", targets: ["lede"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "Lede", targets: ["Lede"]),
    ],
    targets: [
        // epoll, eventfd and accept4 are not exported by Swift's Glibc module; this header includes them.
        .target(name: "CLinux"),
        .systemLibrary(name: "CZlib", pkgConfig: nil, providers: [.apt(["zlib1g-dev"])]),
        .target(name: "HTTPServer", dependencies: ["CLinux", "CZlib"]),
        .target(name: "Lede", dependencies: ["HTTPServer"]),
        .executableTarget(name: "lede", dependencies: ["Lede", "HTTPServer"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "LedeTests", dependencies: ["Lede", "HTTPServer"]),
    ],
    swiftLanguageModes: [.v5]
)
