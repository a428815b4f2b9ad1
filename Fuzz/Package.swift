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

/// One fuzzer: an executable on FuzzSupport and the main package's products it exercises.
func fuzzer(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport"] + products.map { .product(name: $0, package: "moderation") },
        swiftSettings: swiftSettings)
}

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
        fuzzer("fuzz-session", ["RPCCore", "RPCMessages", "ProtoBridge"]),
        // (b) every generated message decoder, with a re-encode round trip.
        fuzzer("fuzz-messages", ["ProtoBridge"]),
        // (c) the proto3 JSON transcoder of rpc-probe, with print/re-parse stability.
        fuzzer("fuzz-json", ["ProtoSchema", "RPCMessages", "ModerationMessages"]),
        // (d) the capped raw inflater, stream and independent modes.
        fuzzer("fuzz-inflate", ["RPCCore"]),
    ],
    swiftLanguageModes: [.v6]
)
