/// A `oneof` of a message type: fields of which at most one is set at a time.
///
/// Dynamic messages clear the other members when one is set, and the JSON mapping refuses input
/// that sets two of them.
public struct OneofDescriptor: Sendable, Hashable {
    /// The message type the oneof belongs to.
    public let containingMessage: MessageDescriptor
    let index: Int

    init(message: MessageDescriptor, index: Int) {
        self.containingMessage = message
        self.index = index
    }

    var info: SchemaStorage.OneofInfo { containingMessage.info.oneofs[index] }

    /// The oneof's name, e.g. "start".
    public var name: String { info.name }
    /// The comment written before the oneof, without the `//` markers.
    public var leadingComments: String? { info.comments }
    /// The member fields, in declaration order.
    public var fields: [FieldDescriptor] {
        info.fieldIndices.map { FieldDescriptor(message: containingMessage, index: $0) }
    }
}
