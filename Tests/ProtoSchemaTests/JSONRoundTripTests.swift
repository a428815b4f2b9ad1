import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import TestSupport
import Testing

@Suite("JSON round trips")
struct JSONRoundTripTests {
    static let optionSets: [JSONFormatOptions] = [
        JSONFormatOptions(),
        JSONFormatOptions(pretty: true),
        JSONFormatOptions(emitDefaults: true),
        JSONFormatOptions(emitDefaults: true, pretty: true),
        JSONFormatOptions(preserveProtoFieldNames: true),
    ]

    @Test("the round trips below cover every message type of both schemas (map entries through their maps)")
    func everyTypeIsCovered() throws {
        let declared = Set(try schema().messages.filter { !$0.isMapEntry }.map(\.fullName))
        let covered = Set(allMessageTypes.map { $0.protoName })
        #expect(declared.subtracting(covered).isEmpty, "not round-tripped: \(declared.subtracting(covered).sorted())")
        #expect(covered.subtracting(declared).isEmpty)
        #expect(declared.contains("mrpc.v1.CallHeader") && declared.contains("moderation.v1.SubscribeResponse"))
    }

    @Test(
        "message → JSON → message → JSON is stable for every type", arguments: allMessageTypes.map(MessageTypeCase.init)
    )
    func stable(_ type: MessageTypeCase) throws {
        try Self.roundTrip(type.type)
    }

    private static func roundTrip<M: ProtoMessage>(_ type: M.Type) throws {
        let descriptor = try messageType(M.protoName)
        var random = RandomMessages(seed: stableSeed(M.protoName) ^ 0x15)
        for _ in 0..<60 {
            let input = random.encoding(of: type)
            let message = try DynamicMessage(serializedBytes: input, as: descriptor)
            for options in optionSets {
                let text = message.jsonString(options: options)
                let parsed = try DynamicMessage(jsonString: text, as: descriptor)
                #expect(parsed == message, "\(M.protoName): JSON changed the message: \(text)")
                #expect(parsed.jsonString(options: options) == text, "\(M.protoName): JSON is not stable")
                #expect(parsed.serializedBytes() == (try M(serializedBytes: input).serializedBytes()))
            }
        }
    }

    @Test func everyScalarTypeSurvivesJSONAndTheWire() throws {
        let scalars = try scalars()
        var random = RandomDynamicMessages(seed: 42)
        var sawNaN = false
        for _ in 0..<150 {
            let message = random.message(scalars, depth: 2)
            let wire = message.serializedBytes()
            #expect(try DynamicMessage(serializedBytes: wire, as: scalars) == message)
            for options in Self.optionSets {
                let text = message.jsonString(options: options)
                sawNaN = sawNaN || text.contains("\"NaN\"")
                let parsed = try DynamicMessage(jsonString: text, as: scalars)
                #expect(parsed == message, "JSON changed the message: \(text)")
                #expect(parsed.jsonString(options: options) == text)
                #expect(parsed.serializedBytes() == wire)
            }
        }
        #expect(sawNaN)
    }
}
