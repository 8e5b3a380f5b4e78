// swift-tools-version:5.9
// The Swift client of Lede's API, generated from ../../openapi.yaml by Apple's swift-openapi-generator at build
// time: types and a client, with the URLSession transport. An iOS or macOS app adds this package as a dependency.
// Lede's own Package.swift has no package dependencies; this one is separate on purpose.
import PackageDescription

let package = Package(
    name: "LedeClient",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "LedeClient", targets: ["LedeClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        .target(
            name: "LedeClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // CI's end-to-end check: every operation against a running Lede, decoded with the default configuration.
        .executableTarget(
            name: "lede-client-check",
            dependencies: [
                "LedeClient",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ]
        ),
    ]
)
