/// A member's report about another member of a group, for its admins and moderators.
///
/// Reports are private: they, and the actions that record them, are for the group's admins and
/// moderators, the app and the reporter — never the reported member or other members.
public struct Report: Sendable, Equatable {
    /// What a report is about; the raw values are the words the `reported` action carries.
    public enum Category: String, Sendable, CaseIterable {
        case spam
        case harassment
        case hate
        case violence
        case other
    }

    /// How a report was resolved; the raw values are the `reportResolved` action's reason.
    public enum Resolution: String, Sendable, CaseIterable {
        case dismissed
        case actioned
    }

    /// The report's id within the app (the store's key).
    public var id: UInt64
    /// The member who filed it.
    public var reporter: String
    /// The reported member.
    public var target: String
    public var category: Category
    /// The reporter's words (≤ 1000 characters).
    public var text: String
    /// How it was resolved; nil while open.
    public var resolution: Resolution?
    /// The resolver's note (≤ 512 characters).
    public var note: String
    /// When it was filed, Unix milliseconds.
    public var createdAt: Int64
    /// When it was resolved, Unix milliseconds; 0 while open.
    public var resolvedAt: Int64
    /// Who resolved it (`User.appUID` for the app); empty while open.
    public var resolvedBy: String

    public init(
        id: UInt64 = 0, reporter: String, target: String, category: Category, text: String,
        resolution: Resolution? = nil, note: String = "", createdAt: Int64, resolvedAt: Int64 = 0,
        resolvedBy: String = ""
    ) {
        self.id = id
        self.reporter = reporter
        self.target = target
        self.category = category
        self.text = text
        self.resolution = resolution
        self.note = note
        self.createdAt = createdAt
        self.resolvedAt = resolvedAt
        self.resolvedBy = resolvedBy
    }

    /// True until resolved.
    public var isOpen: Bool { resolution == nil }
}
