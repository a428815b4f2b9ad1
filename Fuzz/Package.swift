// swift-tools-version:6.0
import PackageDescription

/// The libFuzzer targets, in a package of their own so the main package's build never sees the
/// sanitizer flags. Build (what `tools/fuzz` does):
///
///     swift build -c release --package-path Fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
///
/// Each executable's `@main` hands its `LLVMFuzzerTestOneInput` to libFuzzer's driver.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "moderation-fuzz",
    dependencies: [.package(name: "moderation", path: "..")],
    targets: [
        // libFuzzer's driver, called from each fuzzer's @main.
        .target(name: "CFuzzerDriver"),
        // What every fuzzer shares: the driver, the message-type table, failure reporting.
        .target(
            name: "FuzzSupport",
            dependencies: [
                "CFuzzerDriver",
                .product(name: "ProtoBridge", package: "moderation"),
                .product(name: "RPCMessages", package: "moderation"),
                .product(name: "ModerationMessages", package: "moderation"),
            ],
            swiftSettings: swiftSettings),
        // (a) bytes into a ServerSession: frame decoder and protocol state machine.
        .executableTarget(
            name: "fuzz-session",
            dependencies: [
                "FuzzSupport",
                .product(name: "RPCCore", package: "moderation"),
                .product(name: "RPCMessages", package: "moderation"),
                .product(name: "ProtoBridge", package: "moderation"),
            ],
            swiftSettings: swiftSettings),
        // (b) every generated message decoder, with a re-encode round trip.
        .executableTarget(
            name: "fuzz-messages",
            dependencies: ["FuzzSupport", .product(name: "ProtoBridge", package: "moderation")],
            swiftSettings: swiftSettings),
        // (c) the proto3 JSON transcoder of rpc-probe, with print/re-parse stability.
        .executableTarget(
            name: "fuzz-json",
            dependencies: [
                "FuzzSupport",
                .product(name: "ProtoSchema", package: "moderation"),
                .product(name: "RPCMessages", package: "moderation"),
                .product(name: "ModerationMessages", package: "moderation"),
            ],
            swiftSettings: swiftSettings),
        // (d) the capped raw inflater, stream and independent modes.
        .executableTarget(
            name: "fuzz-inflate",
            dependencies: ["FuzzSupport", .product(name: "RPCCore", package: "moderation")],
            swiftSettings: swiftSettings),
    ],
    swiftLanguageModes: [.v6]
)
