/// The one case folding used by searches, so that the domain and every store agree on what
/// "case-insensitive" means.
///
/// Swift's Unicode-aware `lowercased()`; keywords are folded by the domain, names by the store
/// when it indexes them.
public enum TextFolding {
    public static func fold(_ text: String) -> String { text.lowercased() }
}
