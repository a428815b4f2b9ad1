/// What the store and the server may say about a connection URL: it without its password.
///
/// The URL is how an operator points the server at PostgreSQL (`postgresql://USER@HOST:PORT/DB`)
/// and may carry a password (`USER:SECRET@…`, `?password=SECRET`, or `password=SECRET` in the
/// key/value form libpq also accepts). Nothing the server logs or returns contains it: messages
/// name the URL through `redacted`, and libpq's own messages go through `scrub`.
public enum PostgresURL {
    /// `url` with any password replaced by `***`.
    public static func redacted(_ url: String) -> String {
        var text = url
        if let scheme = text.firstRange(of: "://") {
            let rest = text[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"),
                let colon = rest[..<at].firstIndex(of: ":")
            {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        return redactParameter(in: text)
    }

    /// The password the URL carries, if any (to scrub from messages that might repeat it).
    static func password(in url: String) -> String? {
        if let scheme = url.firstRange(of: "://") {
            let rest = url[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                let secret = String(rest[rest.index(after: colon)..<at])
                if !secret.isEmpty { return secret }
            }
        }
        guard let range = url.firstRange(of: "password=") else { return nil }
        let value = url[range.upperBound...].prefix { $0 != "&" && $0 != " " }
        return value.isEmpty ? nil : String(value)
    }

    /// `message` with the URL's password, should it appear, replaced by `***`.
    static func scrub(_ message: String, url: String) -> String {
        guard let secret = password(in: url), !secret.isEmpty else { return message }
        return message.replacing(secret, with: "***")
    }

    /// `password=VALUE` (a query parameter or a key/value pair) with VALUE replaced.
    private static func redactParameter(in text: String) -> String {
        var result = text
        var searchStart = result.startIndex
        while let range = result[searchStart...].firstRange(of: "password=") {
            let valueEnd = result[range.upperBound...].firstIndex { $0 == "&" || $0 == " " } ?? result.endIndex
            result.replaceSubrange(range.upperBound..<valueEnd, with: "***")
            searchStart = result.index(range.upperBound, offsetBy: 3)
        }
        return result
    }
}
