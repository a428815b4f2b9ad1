import GRPCMessages
import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import SeededRandom
import TestSupport
import Testing

@Suite("Schema from a FileDescriptorSet")
struct SchemaTests {
    @Test func everyGeneratedMessageTypeIsInTheSchema() throws {
        let schema = try schema()
        for type in allMessageTypes {
            let descriptor = try #require(schema.message(named: type.protoName), "\(type.protoName) is missing")
            #expect(descriptor.fullName == type.protoName)
        }
        #expect(schema.fileNames.contains("moderation/v1/moderation.proto"))
        #expect(schema.fileNames.contains("mrpc/v1/envelope.proto"))
        #expect(schema.dependencies(ofFile: "moderation/v1/groups.proto") == ["moderation/v1/members.proto"])
        #expect(schema.dependencies(ofFile: "nope.proto") == nil)
    }

    @Test func everyGeneratedMethodIsInTheSchemaWithItsTypesAndStreamingFlag() throws {
        let schema = try schema()
        for method in RPCSchema.methods + ModerationSchema.methods {
            try Self.expect(method, in: schema)
            #expect(!method.clientStreaming)
        }
    }

    @Test func theStandardProtosDescriptorSetServesBesideTheProjects() throws {
        let schema = try Schema(
            fileDescriptorSet: GRPCSchema.fileDescriptorSet + RPCSchema.fileDescriptorSet
                + ModerationSchema.fileDescriptorSet)
        for file in [
            "google/protobuf/any.proto", "google/protobuf/duration.proto", "google/rpc/status.proto",
            "google/rpc/error_details.proto", "grpc/health/v1/health.proto", "grpc/reflection/v1/reflection.proto",
            "grpc/reflection/v1alpha/reflection.proto", "moderation/v1/moderation.proto", "mrpc/v1/envelope.proto",
        ] {
            #expect(schema.fileNames.contains(file), "\(file) is missing")
        }
        #expect(schema.dependencies(ofFile: "google/rpc/status.proto") == ["google/protobuf/any.proto"])
        for type in GRPCSchema.messageTypes {
            #expect(schema.message(named: type.protoName) != nil, "\(type.protoName) is missing")
        }
        for method in GRPCSchema.methods {
            try Self.expect(method, in: schema)
        }
        let reflection = try #require(
            schema.method(path: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"))
        #expect(reflection.clientStreaming && reflection.serverStreaming)
    }

    /// `method` as the descriptor set declares it: name, service, types and both streaming flags.
    private static func expect(_ method: any ProtoMethodDescription, in schema: Schema) throws {
        let found = try #require(schema.method(path: method.path), "\(method.path) is missing")
        #expect(found.path == method.path)
        #expect(found.name == method.name)
        #expect(found.service.fullName == method.service)
        #expect(found.inputType.fullName == method.requestType)
        #expect(found.outputType.fullName == method.responseType)
        #expect(found.serverStreaming == method.serverStreaming)
        #expect(found.clientStreaming == method.clientStreaming)
    }

    @Test(
        "An unknown method names the closest one: a typo, or a bare method name",
        arguments: [
            ("moderation.v1.Moderation/KickMembr", "moderation.v1.Moderation/KickMember"),
            ("/moderation.v1.Moderation/Subscrbe", "moderation.v1.Moderation/Subscribe"),
            ("moderation.v1.Moderaton.BanMember", "moderation.v1.Moderation/BanMember"),
            ("GetFileDescriptorSet", "mrpc.reflection.v1.Reflection/GetFileDescriptorSet"),
            ("moderation.v1.Moderation/Kick", "moderation.v1.Moderation/KickMember"),
            ("moderation.v1.Moderation.kickmember", "moderation.v1.Moderation/KickMember"),
            ("TransferOwn", "moderation.v1.Moderation/TransferOwnership"),
        ])
    func unknownMethodSuggestion(_ name: String, _ suggestion: String) throws {
        let schema = try schema()
        #expect {
            try schema.requireMethod(named: name)
        } throws: { error in
            let error = error as? ProtoSchemaError
            return error?.code == .unknownSymbol
                && error?.message == "no method named \"\(name)\" in the schema (did you mean \"\(suggestion)\"?)"
        }
        #expect {
            try schema.requireMethod(named: "zzz.Nothing/AtAll")
        } throws: { error in
            (error as? ProtoSchemaError)?.message == #"no method named "zzz.Nothing/AtAll" in the schema"#
        }
    }

    @Test(
        "Methods are found by path and by symbol",
        arguments: [
            "/moderation.v1.Moderation/Subscribe", "moderation.v1.Moderation/Subscribe",
            "moderation.v1.Moderation.Subscribe", ".moderation.v1.Moderation.Subscribe",
        ])
    func methodLookUp(_ name: String) throws {
        let method = try #require(try schema().method(named: name))
        #expect(method.fullName == "moderation.v1.Moderation.Subscribe")
        #expect(method.path == "/moderation.v1.Moderation/Subscribe")
        #expect(method.serverStreaming)
        #expect(method.inputType.fullName == "moderation.v1.SubscribeRequest")
        #expect(method.outputType.fullName == "moderation.v1.SubscribeResponse")
    }

    @Test func unknownNamesAreNil() throws {
        let schema = try schema()
        #expect(schema.message(named: "moderation.v1.Nope") == nil)
        #expect(schema.message(named: "moderation.v1.Moderation") == nil) // a service, not a message
        #expect(schema.service(named: "moderation.v1.User") == nil)
        #expect(schema.method(named: "/moderation.v1.Moderation/Nope") == nil)
        #expect(schema.method(path: "moderation.v1.Moderation.Subscribe") == nil) // not a path
        #expect(schema.enumType(named: "moderation.v1.User") == nil)
        #expect(throws: ProtoSchemaError.self) { try schema.requireMessage(named: "x.Y") }
        #expect(throws: ProtoSchemaError.self) { try schema.requireMethod(named: "/x.Y/Z") }
    }

    @Test func servicesOfBothSetsAreListed() throws {
        let names = try schema().services.map(\.fullName)
        #expect(
            names == [
                "mrpc.diagnostics.v1.Diagnostics", "mrpc.health.v1.Health", "mrpc.reflection.v1.Reflection",
                "moderation.v1.Moderation",
            ])
        let moderation = try #require(try schema().service(named: ".moderation.v1.Moderation"))
        #expect(moderation.methods.count == 58)
        #expect(moderation.method(named: "KickMember")?.path == "/moderation.v1.Moderation/KickMember")
        #expect(moderation.leadingComments == " Group moderation for one app (tenant) per API key.\n")
    }

    @Test func fieldsAreResolved() throws {
        let action = try messageType("moderation.v1.Action")
        #expect(
            action.fields.map(\.name) == [
                "seq", "action", "action_by", "action_on", "action_for", "old_scope", "new_scope", "reason",
                "expires_at", "timestamp", "idempotency_key", "request_id", "report_id", "shadow", "rules_added",
                "rules_removed",
            ])
        let actionBy = try #require(action.field(named: "actionBy"))
        #expect(actionBy.name == "action_by")
        #expect(actionBy.jsonName == "actionBy")
        #expect(actionBy.type == .message)
        #expect(actionBy.messageType?.fullName == "moderation.v1.User")
        #expect(actionBy.hasPresence)
        let kind = try #require(action.field(number: 2))
        #expect(kind.enumType?.fullName == "moderation.v1.ActionType")
        #expect(kind.enumType?.value(named: "ACTION_TYPE_KICKED")?.number == 7)
        #expect(kind.enumType?.value(number: 77) == nil)
        #expect(!kind.hasPresence)
        #expect(action.field(named: "expires_at")?.type == .int64)
        #expect(action.leadingComments == " One entry of the app-wide action log.\n")
    }

    @Test func mapsRepeatedAndOneofs() throws {
        let group = try messageType("moderation.v1.Group")
        let metadata = try #require(group.field(named: "metadata"))
        #expect(metadata.isMap)
        #expect(metadata.isRepeated)
        #expect(metadata.mapKey?.type == .string)
        #expect(metadata.mapValue?.type == .string)
        #expect(metadata.messageType?.isMapEntry == true)
        let tags = try #require(group.field(named: "tags"))
        #expect(tags.isRepeated && !tags.isMap && !tags.isPacked)

        let subscribe = try messageType("moderation.v1.SubscribeRequest")
        #expect(subscribe.oneofs.map(\.name) == ["start"])
        let afterSeq = try #require(subscribe.field(named: "after_seq"))
        #expect(afterSeq.containingOneof?.name == "start")
        #expect(afterSeq.hasPresence)
        #expect(subscribe.field(named: "actions")?.isPacked == true)

        let results = try #require(try messageType("moderation.v1.CreateGroupResponse").field(named: "results"))
        #expect(results.mapValue?.messageType?.fullName == "moderation.v1.UserResult")
    }

    @Test func handBuiltSchemaResolvesRelativeNamesOptionalAndCustomJSONNames() throws {
        let scalars = try scalars()
        #expect(scalars.field(named: "colors")?.enumType?.fullName == "test.v1.Color")
        #expect(scalars.field(named: "nested")?.messageType == scalars)
        #expect(
            scalars.field(named: "inner")?.messageType?.field(named: "level")?.enumType?.fullName
                == "test.v1.Scalars.Inner.Level")
        let maybe = try #require(scalars.field(named: "maybe"))
        #expect(maybe.isProto3Optional && maybe.hasPresence && maybe.containingOneof == nil)
        #expect(scalars.oneofs.map(\.name) == ["choice"]) // the synthetic "_maybe" is not a oneof to users
        #expect(scalars.field(named: "custom")?.name == "json_named")
        #expect(scalars.field(named: "jsonNamed") == nil)
        #expect(scalars.field(named: "packed_s32")?.isPacked == true)
        #expect(scalars.field(named: "unpacked")?.isPacked == false)
        let method = try #require(try scalarsSchema.get().method(named: "test.v1.Echo.Both"))
        #expect(method.clientStreaming && method.serverStreaming)
    }

    @Test func concatenatedSetsWithTheSameFilesKeepOneCopy() throws {
        let once = try Schema(fileDescriptorSet: ModerationSchema.fileDescriptorSet)
        let twice = try Schema(
            fileDescriptorSet: ModerationSchema.fileDescriptorSet + ModerationSchema.fileDescriptorSet)
        #expect(twice.fileNames == once.fileNames)
        #expect(twice.messages.map(\.fullName) == once.messages.map(\.fullName))
        let merged = try Schema(
            fileDescriptorSet: RPCSchema.fileDescriptorSet + ModerationSchema.fileDescriptorSet
                + RPCSchema.fileDescriptorSet)
        #expect(merged.fileNames == (try schema().fileNames))
        #expect(merged.message(named: "mrpc.v1.CallHeader") != nil)
        #expect(merged.message(named: "moderation.v1.Group") != nil)
    }

    @Test func descriptorsAreValuesComparedBySchemaAndIndex() throws {
        let schema = try schema()
        let user = try #require(schema.message(named: "moderation.v1.User"))
        #expect(user == schema.message(named: ".moderation.v1.User"))
        #expect(user != schema.message(named: "moderation.v1.Group"))
        #expect(Set(schema.messages).count == schema.messages.count)
    }
}

@Suite("Malformed descriptor sets")
struct MalformedDescriptorTests {
    @Test(
        "Garbage and truncated descriptor bytes are errors",
        arguments: [
            [0xFF, 0xFF, 0xFF], // invalid field number / wire type
            [0x0A, 0x05, 0x0A], // a file whose length runs past the end
            [0x0A], // truncated length
            [0x08, 0x01], // file as a varint
            [0x0A, 0x02, 0x0A, 0x80], // truncated name length inside the file
            [0x0A, 0x03, 0x0A, 0x01, 0xC3], // name is not UTF-8
            [0x0B], // start-group without end
        ] as [[UInt8]])
    func garbage(_ bytes: [UInt8]) {
        #expect {
            try Schema(fileDescriptorSet: bytes)
        } throws: { error in
            let error = error as? ProtoSchemaError
            return error?.code == .invalidDescriptor
                && error?.message.hasPrefix("invalid descriptor set: not a valid FileDescriptorSet") == true
        }
    }

    @Test func randomAndMutatedDescriptorBytesNeverCrash() {
        var rng = SplitMix64(seed: 0xDE5C)
        let valid = ModerationSchema.fileDescriptorSet
        var accepted = 0
        for round in 0..<400 {
            var bytes: [UInt8]
            if round % 4 == 0 {
                bytes = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else if round % 4 == 1 {
                bytes = Array(valid.prefix(Int.random(in: 0..<valid.count, using: &rng)))
            } else {
                bytes = valid
                for _ in 0..<Int.random(in: 1...8, using: &rng) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            do {
                let schema = try Schema(fileDescriptorSet: bytes)
                accepted += 1
                // Whatever was accepted is usable.
                for message in schema.messages { _ = message.fields.map(\.jsonName) }
                for service in schema.services {
                    for method in service.methods { _ = try schema.describe(method.fullName) }
                }
            } catch {
                #expect(error.code == .invalidDescriptor)
                #expect(!error.message.isEmpty)
            }
        }
        #expect(accepted < 400)
    }

    @Test func anUnresolvedTypeNameNamesTheField() {
        let broken = TestDescriptors.set([
            TestDescriptors.file(
                "a.proto", package: "a",
                messages: [
                    TestDescriptors.message(
                        "M", fields: [TestDescriptors.field("other", 1, .message, typeName: ".a.Missing")])
                ])
        ])
        #expect(
            throws: ProtoSchemaError(
                code: .invalidDescriptor,
                message:
                    "invalid descriptor set: field \"other\" of a.M has the type .a.Missing, which the descriptor set does not define"
            )
        ) {
            try Schema(fileDescriptorSet: broken)
        }
    }

    @Test func aNameDefinedInTwoFilesIsAnError() {
        let m = TestDescriptors.message("M", fields: [])
        let bytes = TestDescriptors.set([
            TestDescriptors.file("a.proto", package: "p", messages: [m]),
            TestDescriptors.file("b.proto", package: "p", messages: [m]),
        ])
        #expect(
            throws: ProtoSchemaError(
                code: .invalidDescriptor,
                message: "invalid descriptor set: p.M is defined twice (in a.proto and in b.proto)")
        ) {
            try Schema(fileDescriptorSet: bytes)
        }
    }

    @Test func badFieldNumbersAndMapEntriesAreErrors() {
        let zero = TestDescriptors.set([
            TestDescriptors.file(
                "a.proto", package: "a",
                messages: [
                    TestDescriptors.message("M", fields: [TestDescriptors.field("x", 0, .int32)])
                ])
        ])
        #expect(throws: ProtoSchemaError.self) { try Schema(fileDescriptorSet: zero) }
        let duplicate = TestDescriptors.set([
            TestDescriptors.file(
                "a.proto", package: "a",
                messages: [
                    TestDescriptors.message(
                        "M", fields: [TestDescriptors.field("x", 1, .int32), TestDescriptors.field("y", 1, .int32)])
                ])
        ])
        #expect(throws: ProtoSchemaError.self) { try Schema(fileDescriptorSet: duplicate) }
        let badEntry = TestDescriptors.set([
            TestDescriptors.file(
                "a.proto", package: "a",
                messages: [
                    TestDescriptors.message(
                        "M", fields: [], nested: [TestDescriptors.mapEntry("E", key: .double, value: .string)])
                ])
        ])
        #expect(throws: ProtoSchemaError.self) { try Schema(fileDescriptorSet: badEntry) }
        let badMethod = TestDescriptors.set([
            TestDescriptors.file(
                "a.proto", package: "a",
                services: [
                    TestDescriptors.string(1, "S")
                        + Wire.field(2, TestDescriptors.method("M", input: ".a.Nope", output: ".a.Nope"))
                ])
        ])
        #expect(throws: ProtoSchemaError.self) { try Schema(fileDescriptorSet: badMethod) }
    }

    @Test func deeplyNestedMessageTypesAreRefusedNotRecursedInto() {
        var message = TestDescriptors.message("M", fields: [])
        for _ in 0..<150 { message = TestDescriptors.message("M", fields: [], nested: [message]) }
        let bytes = TestDescriptors.set([TestDescriptors.file("deep.proto", package: "d", messages: [message])])
        #expect {
            try Schema(fileDescriptorSet: bytes)
        } throws: { error in
            (error as? ProtoSchemaError)?.message.contains("nested more than 100 deep") == true
        }
        // 50 levels are fine.
        var shallow = TestDescriptors.message("M", fields: [])
        for _ in 0..<50 { shallow = TestDescriptors.message("M", fields: [], nested: [shallow]) }
        #expect(throws: Never.self) {
            try Schema(
                fileDescriptorSet: TestDescriptors.set([
                    TestDescriptors.file("ok.proto", package: "d", messages: [shallow])
                ]))
        }
    }
}
