internal import CHyperscan
import Synchronization

/// A rule set compiled into one Hyperscan database, ready to scan from any number of threads
/// (each with its own `ContentScanner`).
///
/// Compiling is the slow part (about half a second for the app's largest set): a running service
/// compiles on its content-rules thread and swaps the result in. The database is never changed
/// after `compile` returns, and Hyperscan reads it from several threads at once, so the set is
/// shared freely; it frees the database when the last scan using it lets go.
public final class CompiledRuleSet: @unchecked Sendable {
    /// What the scanner needs to know of each compiled expression, by Hyperscan id.
    struct Entry {
        var ruleID: UInt64
        var check: RuleExpression.Check
        var fixedLength: Int?
    }

    /// The rules that compiled, in the order given.
    public let rules: [ContentRule]
    /// The rules refused, each with its reason.
    public let errors: [ContentRuleError]
    /// Tells sets apart for the scanners' scratch: unique in the process.
    let serial: UInt64
    let entries: [Entry]
    /// Nil when no rule compiled (a scan then finds nothing).
    let database: OpaquePointer?

    private static let serials = Atomic<UInt64>(1)

    /// The set with no rules.
    public convenience init() {
        self.init(rules: [], errors: [], entries: [], database: nil)
    }

    private init(rules: [ContentRule], errors: [ContentRuleError], entries: [Entry], database: OpaquePointer?) {
        self.rules = rules
        self.errors = errors
        self.entries = entries
        self.database = database
        self.serial = Self.serials.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    deinit {
        if let database { hs_free_database(database) }
    }

    /// The database's size in bytes (0 for the empty set).
    public var databaseSize: Int {
        guard let database else { return 0 }
        var size = 0
        return hs_database_size(database, &size) == HS_SUCCESS ? size : 0
    }

    /// Compiles `rules` into one database; a rule Hyperscan (or the rule's own syntax) refuses
    /// is left out and listed in `errors` with the reason.
    ///
    /// When the whole set fails, Hyperscan names the expression at fault: that rule is compiled
    /// alone for its own message, set aside, and the rest compiled again.
    /// - Throws: `ContentRuleSetError` when the set cannot compile though each rule does alone
    ///   (too large for Hyperscan) or the processor lacks what Hyperscan needs.
    public static func compile(_ rules: [ContentRule]) throws(ContentRuleSetError) -> CompiledRuleSet {
        guard hs_valid_platform() == HS_SUCCESS else {
            throw ContentRuleSetError(reason: "this processor lacks the instructions Hyperscan needs (SSSE3)")
        }
        let normalizer = TextNormalizer()
        var errors: [ContentRuleError] = []
        var accepted: [(rule: ContentRule, expression: RuleExpression)] = []
        accepted.reserveCapacity(rules.count)
        for rule in rules {
            do throws(ContentRuleError) {
                accepted.append((rule, try RuleExpression.make(for: rule, normalizer: normalizer)))
            } catch {
                errors.append(error)
            }
        }
        while !accepted.isEmpty {
            switch build(accepted.map(\.expression)) {
            case .success(let database):
                let entries = accepted.map {
                    Entry(ruleID: $0.rule.id, check: $0.expression.check, fixedLength: $0.expression.fixedLength)
                }
                return CompiledRuleSet(
                    rules: accepted.map(\.rule), errors: errors, entries: entries, database: database)
            case .failure(let failure) where failure.index != nil:
                let index = failure.index!
                let rule = accepted[index].rule
                errors.append(ContentRuleError(ruleID: rule.id, pattern: rule.pattern, reason: failure.message))
                accepted.remove(at: index)
            case .failure(let failure):
                let refused = accepted.indices.filter { index in
                    if case .failure = build([accepted[index].expression]) { return true }
                    return false
                }
                guard !refused.isEmpty else { throw ContentRuleSetError(reason: failure.message) }
                for index in refused.reversed() {
                    let rule = accepted[index].rule
                    if case .failure(let alone) = build([accepted[index].expression]) {
                        errors.append(ContentRuleError(ruleID: rule.id, pattern: rule.pattern, reason: alone.message))
                    }
                    accepted.remove(at: index)
                }
            }
        }
        return CompiledRuleSet(rules: [], errors: errors, entries: [], database: nil)
    }

    /// Checks one rule alone, as a call that adds rules does before storing them.
    /// - Returns: the reason it is refused, or nil when it compiles.
    public static func validate(_ rule: ContentRule) -> ContentRuleError? {
        do throws(ContentRuleError) {
            let expression = try RuleExpression.make(for: rule, normalizer: TextNormalizer())
            switch build([expression]) {
            case .success(let database):
                hs_free_database(database)
                return nil
            case .failure(let failure):
                return ContentRuleError(ruleID: rule.id, pattern: rule.pattern, reason: failure.message)
            }
        } catch {
            return error
        }
    }

    /// Hyperscan's refusal: its message, and which expression when it names one.
    struct BuildFailure: Error {
        var message: String
        var index: Int?
    }

    /// One `hs_compile_multi` over `expressions` (Hyperscan id = position), in block mode.
    private static func build(_ expressions: [RuleExpression]) -> Result<OpaquePointer, BuildFailure> {
        var text: [CChar] = []
        var offsets: [Int] = []
        offsets.reserveCapacity(expressions.count)
        for expression in expressions {
            offsets.append(text.count)
            text.append(contentsOf: expression.expression.utf8.map { CChar(bitPattern: $0) })
            text.append(0)
        }
        let flags = expressions.map(\.flags)
        let ids = (0..<expressions.count).map { UInt32($0) }
        var database: OpaquePointer?
        var error: UnsafeMutablePointer<hs_compile_error_t>?
        let status = text.withUnsafeBufferPointer { base in
            let pointers: [UnsafePointer<CChar>?] = offsets.map { base.baseAddress! + $0 }
            return hs_compile_multi(
                pointers, flags, ids, UInt32(expressions.count), UInt32(HS_MODE_BLOCK), nil, &database, &error)
        }
        if status == HS_SUCCESS, let database { return .success(database) }
        var failure = BuildFailure(message: "Hyperscan failed with status \(status)", index: nil)
        if let error {
            failure.message = String(cString: error.pointee.message)
            if error.pointee.expression >= 0 && Int(error.pointee.expression) < expressions.count {
                failure.index = Int(error.pointee.expression)
            }
            hs_free_compile_error(error)
        }
        return .failure(failure)
    }
}

/// A rule set that cannot compile as a whole, though its rules compile alone.
public struct ContentRuleSetError: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "the content rules do not compile together: \(reason)" }
}
