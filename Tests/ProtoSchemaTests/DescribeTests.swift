import ProtoSchema
import Testing

@Suite("describe: symbols in .proto syntax")
struct DescribeTests {
    @Test func aService() throws {
        #expect(
            try schema().describe("mrpc.health.v1.Health") == """
                mrpc.health.v1.Health is a service:
                // Reports whether the server, or one of its services, is ready to serve.
                service Health {
                  // Returns the serving status of the server (empty service) or of one named service.
                  rpc Check ( .mrpc.health.v1.HealthCheckRequest ) returns ( .mrpc.health.v1.HealthCheckResponse );
                }

                """)
        let moderation = try schema().describe(".moderation.v1.Moderation")
        #expect(
            moderation.hasPrefix(
                "moderation.v1.Moderation is a service:\n// Group moderation for one app (tenant) per API key.\nservice Moderation {\n"
            ))
        #expect(
            moderation.contains(
                "\n  // Reads a user.\n  rpc GetUser ( .moderation.v1.GetUserRequest ) returns ( .moderation.v1.GetUserResponse );\n"
            ))
        #expect(
            moderation.hasSuffix(
                "  rpc Subscribe ( .moderation.v1.SubscribeRequest ) returns ( stream .moderation.v1.SubscribeResponse );\n}\n"
            ))
        #expect(moderation.split(separator: "\n").filter { $0.hasPrefix("  rpc ") }.count == 58)
    }

    @Test(
        "A server-streaming method",
        arguments: [
            "moderation.v1.Moderation.Subscribe", "moderation.v1.Moderation/Subscribe",
            "/moderation.v1.Moderation/Subscribe",
        ])
    func aStreamingMethod(_ symbol: String) throws {
        #expect(
            try schema().describe(symbol) == """
                moderation.v1.Moderation.Subscribe is a method:
                // Delivers actions live, optionally replaying from a seq first, for a user, groups or the app.
                rpc Subscribe ( .moderation.v1.SubscribeRequest ) returns ( stream .moderation.v1.SubscribeResponse );

                """)
    }

    @Test func aClientAndServerStreamingMethod() throws {
        #expect(
            try scalarsSchema.get().describe("test.v1.Echo.Both") == """
                test.v1.Echo.Both is a method:
                rpc Both ( stream .test.v1.Scalars ) returns ( stream .test.v1.Scalars );

                """)
    }

    @Test func aMessageWithAOneof() throws {
        #expect(
            try schema().describe("moderation.v1.SubscribeRequest") == """
                moderation.v1.SubscribeRequest is a message:
                // Request of Subscribe. Exactly one of user_uid, guids or whole_app chooses what is delivered;
                // when none is set the subscription is for the acting user.
                message SubscribeRequest {
                  // Deliver the actions a user sees: in groups they are a member of at the time of the action,
                  // those whose target they are, and their own. Must be the acting user unless the app subscribes.
                  string user_uid = 1;
                  // Deliver every action of these groups (the acting user must be a member of each).
                  repeated string guids = 2;
                  // Deliver every action of the app (the app only, no acting user).
                  bool whole_app = 3;
                  // Only these kinds of action; empty means all.
                  repeated .moderation.v1.ActionType actions = 4;
                  // Where to start: absent means live from now; set (even to 0) replays every matching action
                  // with a greater seq from the log first, then continues live without a gap or duplicate.
                  oneof start {
                    // Seq after which to resume.
                    uint64 after_seq = 5;
                  }
                }

                """)
    }

    @Test func aMessageWithAMap() throws {
        #expect(
            try schema().describe("moderation.v1.CreateGroupResponse") == """
                moderation.v1.CreateGroupResponse is a message:
                // Response of CreateGroup.
                message CreateGroupResponse {
                  // The new group, as the acting user sees it.
                  .moderation.v1.Group group = 1;
                  // Outcome per uid of the initial members and bans.
                  map<string, .moderation.v1.UserResult> results = 2;
                }

                """)
    }

    @Test func everyKindOfFieldWithNestedTypesAndOptions() throws {
        let text = try scalarsSchema.get().describe("test.v1.Scalars")
        for line in [
            "  sint64 s64 = 18;", "  repeated sint32 packed_s32 = 20;",
            "  repeated int32 unpacked = 23 [packed = false];",
            "  map<bool, .test.v1.Color> by_bool = 31;", "  map<uint64, .test.v1.Scalars> by_u64 = 32;",
            "  optional int32 maybe = 40;",
            "  oneof choice {\n    string text = 50;\n    .test.v1.Scalars nested = 51;\n  }",
            "  string json_named = 61 [json_name = \"custom\"];",
            "  message Inner {\n    .test.v1.Scalars.Inner.Level level = 1;\n    enum Level {\n      LEVEL_LOW = 0;\n      LEVEL_HIGH = 1;\n    }\n  }\n}\n",
        ] {
            #expect(text.contains(line), "missing: \(line)")
        }
        #expect(!text.contains("Entry")) // map entry types are shown as map<…>, not as messages
        #expect(!text.contains("_maybe")) // nor is the synthetic oneof of an optional field
    }

    @Test func anEnum() throws {
        #expect(
            try schema().describe("moderation.v1.Scope") == """
                moderation.v1.Scope is an enum:
                // A member's rank in a group. The owner is a member with scope admin; rank order is
                // owner > admin > moderator > participant > non-member.
                enum Scope {
                  // Not set (for a non-member, or "keep the default" in requests).
                  SCOPE_UNSPECIFIED = 0;
                  // Full management: kick, ban, unban, scope changes below admin, group updates.
                  SCOPE_ADMIN = 1;
                  // Kick, ban and unban participants; add participants; update the group's descriptive fields.
                  SCOPE_MODERATOR = 2;
                  // Default scope of a member.
                  SCOPE_PARTICIPANT = 3;
                }

                """)
    }

    @Test func aField() throws {
        #expect(
            try schema().describe("moderation.v1.User.uid") == """
                moderation.v1.User.uid is a field:
                // Unique id within the app: 1–100 characters of [a-z0-9_-] (input is lower-cased).
                // The app itself acts as the reserved uid "@app" in actions.
                string uid = 1;

                """)
    }

    @Test(
        "a name cut short is completed within its scope, not matched to the shorter name it is closest to",
        arguments: [
            ("moderation.v1.Moderation.Kick", #"(did you mean "moderation.v1.Moderation.KickMember"?)"#),
            ("moderation.v1.Moderation/Kick", #"(did you mean "moderation.v1.Moderation.KickMember"?)"#),
            ("moderation.v1.GroupTy", #"(did you mean "moderation.v1.GroupType"?)"#),
            (
                "moderation.v1.Moderation.Create",
                #"(did you mean one of "moderation.v1.Moderation.CreateGroup", "moderation.v1.Moderation.CreateUser", "#
                    + #""moderation.v1.Moderation.CreateWebhook"?)"#
            ),
        ])
    func aNameCutShortIsCompleted(_ symbol: String, _ hint: String) throws {
        #expect(
            throws: ProtoSchemaError(
                code: .unknownSymbol,
                message: #"no service, method, message, enum or field named "\#(symbol)" in the schema \#(hint)"#)
        ) {
            try schema().describe(symbol)
        }
    }

    @Test func anUnknownSymbolSuggestsTheClosestName() throws {
        #expect(
            throws: ProtoSchemaError(
                code: .unknownSymbol,
                message:
                    #"no service, method, message, enum or field named "moderation.v1.Moderatoin" in the schema (did you mean "moderation.v1.Moderation"?)"#
            )
        ) {
            try schema().describe("moderation.v1.Moderatoin")
        }
        #expect(
            throws: ProtoSchemaError(
                code: .unknownSymbol,
                message: #"no service, method, message, enum or field named "nothing.like.It" in the schema"#)
        ) {
            try schema().describe(".nothing.like.It")
        }
    }
}
