import Foundation
import PackagePlugin

/// Embeds the git commit the sources were built from, and whether the build is a release, into
/// the target as `BuildRevision` (`moderation_build_info{revision,version}`, `--version`).
///
/// A prebuild command, so it runs at every build; it rewrites the file only when its text
/// changes, so a build of the same commit compiles nothing again. Sources outside a git checkout
/// (a tarball) build with the revision "unknown".
@main
struct BuildRevisionPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        return [
            .prebuildCommand(
                displayName: "Embedding the git revision in \(target.name)",
                executable: URL(filePath: "/bin/sh"),
                arguments: [
                    "-c", Self.script, "build-revision", context.package.directoryURL.path(percentEncoded: false),
                    output.path(percentEncoded: false),
                ],
                outputFilesDirectory: output)
        ]
    }

    /// `$1` the package's directory, `$2` where the Swift file goes. A release is a clean checkout
    /// of a commit tagged `v…`; anything else (another commit, local changes) is a development build.
    static let script = #"""
        set -eu
        revision=$(git -C "$1" rev-parse HEAD 2>/dev/null || echo unknown)
        tag=$(git -C "$1" describe --tags --exact-match --match 'v*' 2>/dev/null || true)
        changed=$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null | head -n 1 || true)
        release=false
        if [ -n "$tag" ] && [ -z "$changed" ] && [ "$revision" != unknown ]; then release=true; fi
        modified=false
        if [ -n "$changed" ]; then modified=true; fi
        mkdir -p "$2"
        text="// Written by the BuildRevision plugin at build time.
        enum BuildRevision {
            /// The git commit the build's sources come from (\"unknown\" outside a checkout).
            static let commit = \"$revision\"
            /// Whether the sources had changes the commit does not have.
            static let modified = $modified
            /// A clean checkout of a commit tagged v….
            static let isRelease = $release
        }"
        if [ ! -f "$2/BuildRevision.swift" ] || [ "$(cat "$2/BuildRevision.swift")" != "$text" ]; then
            printf '%s\n' "$text" > "$2/BuildRevision.swift"
        fi
        """#
}
