import GRPCMessages
import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCGRPC
import RPCMessages
import TestSupport
import Testing

/// The descriptor sets the gRPC listener serves, in the order the session passes them.
let servedSets = [RPCSchema.fileDescriptorSet, ModerationSchema.fileDescriptorSet, GRPCSchema.fileDescriptorSet]

/// The services the session lists: its method table's and the standard ones.
let servedServices = [
    "moderation.v1.Moderation", "mrpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection",
    "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "moderation.v1.Moderation",
]

let reflection = Result { () throws(GRPCReflectionError) in
    try GRPCReflection(fileDescriptorSets: servedSets, services: servedServices)
}

/// What a response carries, the same for both versions, so their answers compare directly.
enum Reply: Equatable {
    case files([[UInt8]])
    case extensionNumbers(type: String, numbers: [Int32])
    case services([String])
    case error(code: Int32, message: String)
    case none
}

func reply(_ response: Grpc_Reflection_V1_ServerReflectionResponse) -> Reply {
    switch response.messageResponse {
    case .fileDescriptorResponse(let files)?: .files(files.fileDescriptorProto)
    case .allExtensionNumbersResponse(let numbers)?:
        .extensionNumbers(type: numbers.baseTypeName, numbers: numbers.extensionNumber)
    case .listServicesResponse(let list)?: .services(list.service.map(\.name))
    case .errorResponse(let error)?: .error(code: error.errorCode, message: error.errorMessage)
    case nil: .none
    }
}

func reply(_ response: Grpc_Reflection_V1alpha_ServerReflectionResponse) -> Reply {
    switch response.messageResponse {
    case .fileDescriptorResponse(let files)?: .files(files.fileDescriptorProto)
    case .allExtensionNumbersResponse(let numbers)?:
        .extensionNumbers(type: numbers.baseTypeName, numbers: numbers.extensionNumber)
    case .listServicesResponse(let list)?: .services(list.service.map(\.name))
    case .errorResponse(let error)?: .error(code: error.errorCode, message: error.errorMessage)
    case nil: .none
    }
}

/// A reflection request of either version, as a describable test argument.
enum Ask: Sendable, CustomTestStringConvertible {
    case file(String)
    case symbol(String)
    case `extension`(String, Int32)
    case extensionNumbers(String)
    case listServices
    case nothing

    var v1: Grpc_Reflection_V1_ServerReflectionRequest {
        let request: Grpc_Reflection_V1_ServerReflectionRequest.MessageRequest? =
            switch self {
            case .file(let name): .fileByFilename(name)
            case .symbol(let name): .fileContainingSymbol(name)
            case .extension(let type, let number):
                .fileContainingExtension(.init(containingType: type, extensionNumber: number))
            case .extensionNumbers(let type): .allExtensionNumbersOfType(type)
            case .listServices: .listServices("*")
            case .nothing: nil
            }
        return .init(host: "api.example.test:8443", messageRequest: request)
    }

    var v1alpha: Grpc_Reflection_V1alpha_ServerReflectionRequest {
        let request: Grpc_Reflection_V1alpha_ServerReflectionRequest.MessageRequest? =
            switch self {
            case .file(let name): .fileByFilename(name)
            case .symbol(let name): .fileContainingSymbol(name)
            case .extension(let type, let number):
                .fileContainingExtension(.init(containingType: type, extensionNumber: number))
            case .extensionNumbers(let type): .allExtensionNumbersOfType(type)
            case .listServices: .listServices("*")
            case .nothing: nil
            }
        return .init(host: "api.example.test:8443", messageRequest: request)
    }

    var testDescription: String {
        switch self {
        case .file(let name): "file_by_filename \(name)"
        case .symbol(let name): "file_containing_symbol \(name)"
        case .extension(let type, let number): "file_containing_extension \(type) \(number)"
        case .extensionNumbers(let type): "all_extension_numbers_of_type \(type)"
        case .listServices: "list_services"
        case .nothing: "no message_request"
        }
    }
}

func ask(_ question: Ask, _ server: GRPCReflection? = nil) throws -> Reply {
    reply(try (server ?? reflection.get()).respond(to: question.v1))
}

func files(_ reply: Reply) throws -> [[UInt8]] {
    guard case .files(let files) = reply else { throw TestFailure("expected files, got \(reply)") }
    return files
}

func isNotFound(_ reply: Reply) -> Bool {
    guard case .error(let code, _) = reply else { return false }
    return code == 5
}

/// The names of returned files, read by ProtoSchema, which also resolves every type reference:
/// a file served without one of its imports fails here.
func fileNames(_ files: [[UInt8]]) throws -> [String] {
    try Schema(fileDescriptorSet: TestDescriptors.set(files)).fileNames
}

@Suite("GRPCReflection: server reflection v1 and v1alpha over the served descriptor sets")
struct GRPCReflectionTests {
    @Test("list_services lists every service given, sorted, each once")
    func listServices() throws {
        #expect(
            try ask(.listServices)
                == .services([
                    "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                    "grpc.reflection.v1alpha.ServerReflection", "moderation.v1.Moderation", "mrpc.health.v1.Health",
                ]))
    }

    @Test("file_by_filename returns the file first, then each of its transitive imports once")
    func fileByFilename() throws {
        let returned = try files(ask(.file("moderation/v1/moderation.proto")))
        let names = try fileNames(returned)
        #expect(names.first == "moderation/v1/moderation.proto")
        #expect(
            Set(names) == [
                "moderation/v1/moderation.proto", "moderation/v1/actions.proto", "moderation/v1/groups.proto",
                "moderation/v1/members.proto", "moderation/v1/users.proto", "moderation/v1/invites.proto",
                "moderation/v1/reports.proto", "moderation/v1/content.proto", "moderation/v1/webhooks.proto",
            ])
        // members.proto is imported by moderation.proto, groups.proto and actions.proto: sent once.
        #expect(names.count == Set(names).count, "each file once: \(names)")
        let status = try fileNames(files(ask(.file("google/rpc/status.proto"))))
        #expect(status == ["google/rpc/status.proto", "google/protobuf/any.proto"])
    }

    @Test("the files are the descriptor set's own bytes, verbatim")
    func verbatimBytes() throws {
        let returned = try files(ask(.file("moderation/v1/moderation.proto")))
        let set = ModerationSchema.fileDescriptorSet
        for file in returned {
            #expect(set.firstRange(of: Wire.field(1, file)) != nil, "a returned file is not in the set as it is")
        }
    }

    static let symbols: [(String, String)] = [
        ("moderation.v1.Moderation", "moderation/v1/moderation.proto"),
        (".moderation.v1.Moderation", "moderation/v1/moderation.proto"),
        ("moderation.v1.Moderation.KickMember", "moderation/v1/moderation.proto"),
        ("moderation.v1.KickMemberRequest", "moderation/v1/moderation.proto"),
        ("moderation.v1.KickMemberRequest.uid", "moderation/v1/moderation.proto"),
        ("moderation.v1.Group", "moderation/v1/groups.proto"),
        ("moderation.v1.Group.MetadataEntry", "moderation/v1/groups.proto"),
        ("moderation.v1.Scope", "moderation/v1/members.proto"),
        ("moderation.v1.ErrorCode", "moderation/v1/errors.proto"),
        ("google.rpc.QuotaFailure.Violation", "google/rpc/error_details.proto"),
        ("google.rpc.Status", "google/rpc/status.proto"),
        ("grpc.health.v1.Health.Watch", "grpc/health/v1/health.proto"),
        ("grpc.health.v1.HealthCheckResponse.ServingStatus", "grpc/health/v1/health.proto"),
        // Enum values are scoped beside their enum, as protobuf scopes them.
        ("grpc.health.v1.HealthCheckResponse.SERVING", "grpc/health/v1/health.proto"),
        ("grpc.reflection.v1alpha.ServerReflection", "grpc/reflection/v1alpha/reflection.proto"),
        ("grpc.reflection.v1.ServerReflection.ServerReflectionInfo", "grpc/reflection/v1/reflection.proto"),
        ("mrpc.v1.CallHeader", "mrpc/v1/envelope.proto"),
        ("mrpc.health.v1.Health", "mrpc/health/v1/health.proto"),
    ]

    @Test("file_containing_symbol finds the declaring file of each kind of symbol", arguments: symbols)
    func fileContainingSymbol(symbol: String, file: String) throws {
        let returned = try files(ask(.symbol(symbol)))
        let names = try fileNames(returned)
        #expect(names.first == file)
        #expect(names.count == Set(names).count, "each file once: \(names)")
        #expect(try returned == files(ask(.file(file))), "the same files as file_by_filename \(file)")
    }

    static let unknowns: [(Ask, String)] = [
        (.file("moderation/v2/moderation.proto"), "\"moderation/v2/moderation.proto\""),
        (.file("moderation.proto"), "\"moderation.proto\""),
        (.symbol("moderation.v1.Moderation.Ban"), "\"moderation.v1.Moderation.Ban\""),
        (.symbol("Moderation"), "\"Moderation\""),
        (.symbol(""), "\"\""),
        (.extension("moderation.v1.KickMemberRequest", 100), "the served protos declare no extensions"),
        (.extension("moderation.v1.KickMemberRequest", 100), "extension 100 of \"moderation.v1.KickMemberRequest\""),
        (.extensionNumbers("moderation.v1.Nothing"), "\"moderation.v1.Nothing\""),
        // A service is a symbol but not a message type: it has no extensions to number.
        (.extensionNumbers("moderation.v1.Moderation"), "\"moderation.v1.Moderation\""),
    ]

    @Test("an unknown file, symbol, extension or type is NOT_FOUND naming it", arguments: unknowns)
    func unknown(question: Ask, named: String) throws {
        guard case .error(let code, let message) = try ask(question) else {
            Issue.record("expected an error for \(question.testDescription)")
            return
        }
        #expect(code == 5)
        #expect(message.contains(named), "\(message)")
    }

    @Test("all_extension_numbers_of_type of a served message type is its (empty) list of numbers")
    func extensionNumbersOfKnownType() throws {
        #expect(
            try ask(.extensionNumbers("moderation.v1.KickMemberRequest"))
                == .extensionNumbers(type: "moderation.v1.KickMemberRequest", numbers: []))
        #expect(
            try ask(.extensionNumbers(".google.rpc.Status"))
                == .extensionNumbers(type: ".google.rpc.Status", numbers: []))
    }

    @Test("a request with no message_request set is INVALID_ARGUMENT")
    func emptyRequest() throws {
        guard case .error(let code, let message) = try ask(.nothing) else {
            Issue.record("expected an error")
            return
        }
        #expect(code == 3)
        #expect(message.contains("list_services"), "\(message)")
    }

    static let everyKind: [Ask] = [
        .listServices, .file("moderation/v1/users.proto"), .file("nope.proto"), .symbol("moderation.v1.Moderation"),
        .symbol("nope.Nope"), .extension("moderation.v1.User", 7), .extensionNumbers("moderation.v1.User"),
        .extensionNumbers("nope.Nope"), .nothing,
    ]

    @Test("every response echoes valid_host and original_request", arguments: everyKind)
    func echoes(question: Ask) throws {
        let server = try reflection.get()
        let v1 = server.respond(to: question.v1)
        #expect(v1.validHost == "api.example.test:8443")
        #expect(v1.originalRequest == question.v1)
        let v1alpha = server.respond(to: question.v1alpha)
        #expect(v1alpha.validHost == "api.example.test:8443")
        #expect(v1alpha.originalRequest == question.v1alpha)
    }

    @Test("v1alpha answers as v1 does", arguments: everyKind + symbols.map { Ask.symbol($0.0) })
    func v1alphaAsV1(question: Ask) throws {
        let server = try reflection.get()
        #expect(reply(server.respond(to: question.v1alpha)) == reply(server.respond(to: question.v1)))
    }

    @Test("a file in several sets is served from the first that has it")
    func firstSetWins() throws {
        let members = try files(ask(.file("moderation/v1/members.proto")))[0]
        // Another members.proto (a different package, one enum) in a set before or after the real one.
        let other = TestDescriptors.file(
            "moderation/v1/members.proto", package: "other.v1",
            enums: [TestDescriptors.enumType("Other", [("OTHER_ZERO", 0)])],
            syntax: "proto2")
        let otherSet = TestDescriptors.set([other])
        let after = try GRPCReflection(
            fileDescriptorSets: [ModerationSchema.fileDescriptorSet, otherSet], services: [])
        #expect(try files(ask(.file("moderation/v1/members.proto"), after)) == [members])
        #expect(try isNotFound(ask(.symbol("other.v1.Other"), after)), "the second members.proto is not indexed")
        let before = try GRPCReflection(
            fileDescriptorSets: [otherSet, ModerationSchema.fileDescriptorSet], services: [])
        #expect(try files(ask(.file("moderation/v1/members.proto"), before)) == [other])
        #expect(try files(ask(.symbol("other.v1.Other"), before)) == [other])
        // groups.proto imports members.proto: it now comes with the first set's members.proto.
        #expect(try files(ask(.file("moderation/v1/groups.proto"), before)).last == other)
    }

    @Test("extensions a set does declare are found, by extension and by symbol, and numbered")
    func declaredExtensions() throws {
        let base = TestDescriptors.file(
            "test/base.proto", package: "test", messages: [TestDescriptors.message("Base")], syntax: "proto2")
        let holder = TestDescriptors.message(
            "Holder", extensions: [TestDescriptors.extensionField("flag", 101, ".test.Base")])
        let extending = TestDescriptors.file(
            "test/ext.proto", package: "test.ext", dependencies: ["test/base.proto"], messages: [holder],
            extensions: [TestDescriptors.extensionField("note", 100, ".test.Base")], syntax: "proto2")
        let server = try GRPCReflection(fileDescriptorSets: [TestDescriptors.set([base, extending])], services: [])
        #expect(try ask(.extension("test.Base", 100), server) == .files([extending, base]))
        #expect(try ask(.extension(".test.Base", 101), server) == .files([extending, base]))
        #expect(
            try ask(.extensionNumbers("test.Base"), server)
                == .extensionNumbers(type: "test.Base", numbers: [100, 101]))
        #expect(
            try ask(.extensionNumbers("test.ext.Holder"), server)
                == .extensionNumbers(type: "test.ext.Holder", numbers: []))
        #expect(try ask(.symbol("test.ext.note"), server) == .files([extending, base]))
        #expect(try ask(.symbol("test.ext.Holder.flag"), server) == .files([extending, base]))
        guard case .error(let code, let message) = try ask(.extension("test.Base", 102), server) else {
            Issue.record("expected NOT_FOUND for an undeclared extension number")
            return
        }
        #expect(code == 5)
        #expect(message.contains("\"test.Base\" has no extension 102"), "\(message)")
        guard case .error(_, let unknownType) = try ask(.extension("test.Nope", 100), server) else {
            Issue.record("expected NOT_FOUND for an unknown extendee")
            return
        }
        #expect(unknownType.contains("no message type \"test.Nope\""), "\(unknownType)")
    }

    static let badSets: [([[UInt8]], String)] = [
        ([[0x0A, 0x05, 0x0A]], "descriptor set #1 does not parse"),
        ([GRPCSchema.fileDescriptorSet, [0x0A, 0x02, 0x12, 0x00]], "descriptor set #2 does not parse"),
        ([[0x0A, 0x03, 0x0A, 0x01, 0xFF]], "not valid UTF-8"),
        (
            [
                TestDescriptors.set([
                    TestDescriptors.file("a.proto", package: "a", dependencies: ["b.proto"], syntax: "proto2")
                ])
            ],
            "a.proto imports b.proto"
        ),
        (
            [
                TestDescriptors.set([
                    TestDescriptors.file(
                        "a.proto", package: "a", messages: [TestDescriptors.message("")], syntax: "proto2")
                ])
            ], "has no name"
        ),
    ]

    @Test("a descriptor set that does not parse, or lacks an import, is refused naming why", arguments: badSets)
    func badSet(sets: [[UInt8]], reason: String) {
        do {
            _ = try GRPCReflection(fileDescriptorSets: sets, services: [])
            Issue.record("expected an error containing \(reason)")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test("Python's protobuf loads file_containing_symbol moderation.v1.Moderation and resolves KickMember")
    func pythonLoadsTheFiles() throws {
        try #require(Python.isAvailable, "python3 is needed for the independent check")
        let returned = try files(ask(.symbol("moderation.v1.Moderation")))
        let output = try Python.run(Self.loadInPool, input: LengthPrefixed.encode(returned))
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "moderation/v1/moderation.proto", "moderation.v1.KickMemberRequest", "guid,uid",
                "moderation.v1.KickMemberResponse",
            ])
    }

    /// Adds the length-prefixed FileDescriptorProtos to a fresh pool, each after its imports, and
    /// prints the first file's name and the KickMember method's types.
    static let loadInPool = #"""
        import struct, sys
        from google.protobuf import descriptor_pb2, descriptor_pool
        data = open(sys.argv[1], "rb").read()
        protos, offset = [], 0
        while offset < len(data):
            (length,) = struct.unpack(">I", data[offset:offset + 4])
            protos.append(descriptor_pb2.FileDescriptorProto.FromString(data[offset + 4:offset + 4 + length]))
            offset += 4 + length
        names = [p.name for p in protos]
        assert len(names) == len(set(names)), names
        pool, added = descriptor_pool.DescriptorPool(), set()
        while len(added) < len(protos):
            ready = [p for p in protos if p.name not in added and all(d in added for d in p.dependency)]
            if not ready:
                sys.exit("imports not among the files: %s" % names)
            for proto in ready:
                pool.Add(proto)
                added.add(proto.name)
        method = pool.FindServiceByName("moderation.v1.Moderation").methods_by_name["KickMember"]
        lines = [names[0], method.input_type.full_name, ",".join(f.name for f in method.input_type.fields),
                 method.output_type.full_name]
        open(sys.argv[2], "w").write("\n".join(lines) + "\n")
        """#
}
