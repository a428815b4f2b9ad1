#!/usr/bin/env python3
"""Writes the Swift bridge over protobuf-c's generated C for a set of .proto files.

Reads a FileDescriptorSet (made by `protoc --include_imports --include_source_info
--descriptor_set_out`) and, for every message, enum and service of the named files, writes Swift:

- a value type per message (fields as Swift properties, doc comments from the .proto), with the
  two conversions the `ProtoMessage` protocol of `ProtoBridge` asks for: building the protobuf-c
  struct in a `ProtoArena` and reading one that protobuf-c unpacked into the arena;
- its encoder in Swift (`writeFields(into:)`, through `ProtoWireWriter`): the bytes protobuf-c
  packs, without building its structs (a debug build checks each encoding against protobuf-c's);
- its proto3 JSON encoder in Swift (`writeJSON(into:)`, through `ProtoJSONWriter`): the bytes
  `ProtoSchema`'s descriptor-driven `DynamicMessage.jsonUTF8()` prints with its default options;
- a Swift enum per proto enum, keeping unknown values (`unrecognized(Int32)`);
- a `ProtoMethod` table per service, with each method's streaming flags (client and server),
  named `<Service>Methods` (e.g. `ModerationMethods`) so it does not take the name a Swift type
  implementing the service would have (the domain's `ModerationService`);
- an accessor for the embedded FileDescriptorSet bytes.

Top-level names are the proto names (`KickMemberRequest`), or with `--names=qualified` the names
prefixed by the package as SwiftProtobuf spells them (`google.rpc.Status` -> `Google_Rpc_Status`,
method table `Grpc_Health_V1_HealthMethods`): for vendored protos whose names would clash with each
other (two versions of one service) or with Swift's (`google.protobuf.Any`). Nested types keep their
own names inside their parent (`Google_Rpc_QuotaFailure.Violation`).

Run by tools/gen-proto; the output is committed and checked for drift with `tools/gen-proto --check`.
Usage: gen_swift_bridge.py [--names=short|qualified] DESCRIPTOR_SET C_MODULE SWIFT_SCHEMA_NAME OUT_DIR
       FILE.proto...
"""

import os
import re
import sys

from google.protobuf import descriptor_pb2

FD = descriptor_pb2.FieldDescriptorProto

SWIFT_KEYWORDS = {
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
    "init", "inout", "internal", "let", "open", "operator", "private", "precedencegroup",
    "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
    "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for",
    "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "as", "false",
    "is", "nil", "self", "Self", "super", "throws", "true", "try", "Type", "Protocol",
}

SCALARS = {
    # proto type: (Swift type, Swift zero value)
    FD.TYPE_DOUBLE: ("Double", "0"),
    FD.TYPE_FLOAT: ("Float", "0"),
    FD.TYPE_INT64: ("Int64", "0"),
    FD.TYPE_SINT64: ("Int64", "0"),
    FD.TYPE_SFIXED64: ("Int64", "0"),
    FD.TYPE_UINT64: ("UInt64", "0"),
    FD.TYPE_FIXED64: ("UInt64", "0"),
    FD.TYPE_INT32: ("Int32", "0"),
    FD.TYPE_SINT32: ("Int32", "0"),
    FD.TYPE_SFIXED32: ("Int32", "0"),
    FD.TYPE_UINT32: ("UInt32", "0"),
    FD.TYPE_FIXED32: ("UInt32", "0"),
    FD.TYPE_BOOL: ("Bool", "false"),
    FD.TYPE_STRING: ("String", '""'),
    FD.TYPE_BYTES: ("[UInt8]", "[]"),
}


ACRONYMS = {"id": "ID", "url": "URL", "uid": "UID", "guid": "GUID"}


def camel_lower(snake):
    """lowerCamelCase with Swift's acronym style after the first word: request_id -> requestID."""
    parts = snake.split("_")
    out = parts[0].lower() + "".join(ACRONYMS.get(p.lower(), p[:1].upper() + p[1:].lower()) for p in parts[1:])
    return out


def camel_upper(snake):
    return "".join(p[:1].upper() + p[1:] for p in snake.split("_"))


def swift_package_prefix(package):
    """SwiftProtobuf's spelling of a package as a name prefix: grpc.reflection.v1alpha -> Grpc_Reflection_V1alpha."""
    return "_".join(camel_upper(p) for p in package.split("."))


def json_name(name):
    """protoc's default `json_name` (as `ProtoSchema`'s `SchemaBuilder.jsonName`): underscores
    dropped, the letter after each one upper-cased."""
    out = []
    upper = False
    for ch in name:
        if ch == "_":
            upper = True
        else:
            out.append(ch.upper() if upper else ch)
            upper = False
    return "".join(out)


def json_quoted(text):
    """`text` as a JSON string literal, escaped as `ByteCoding`'s `JSONText.appendQuoted` does."""
    short = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f", '"': '\\"', "\\": "\\\\"}
    return '"' + "".join(short.get(ch, "\\u%04X" % ord(ch) if ord(ch) < 0x20 else ch) for ch in text) + '"'


def swift_string_literal(text):
    """`text` as a Swift string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u{%X}" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def swift_ident(name):
    return "`%s`" % name if name in SWIFT_KEYWORDS else name


def c_lower(name):
    """protoc-c's CamelToLower: an underscore before each upper-case letter but the first."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def c_upper_snake(name):
    return c_lower(name).upper()


class Schema:
    """Indexes every message and enum of the descriptor set by fully-qualified name."""

    def __init__(self, fds):
        self.messages = {}  # ".pkg.Name" -> (file, DescriptorProto, [path names], source path)
        self.enums = {}
        self.files = {f.name: f for f in fds.file}
        for f in fds.file:
            prefix = "." + f.package if f.package else ""
            for i, m in enumerate(f.message_type):
                self._add_message(f, m, prefix, [m.name], [4, i])
            for i, e in enumerate(f.enum_type):
                self.enums[prefix + "." + e.name] = (f, e, [e.name], [5, i])

    def _add_message(self, f, m, prefix, names, path):
        self.messages[prefix + "." + ".".join(names)] = (f, m, names, path)
        for i, n in enumerate(m.nested_type):
            self._add_message(f, n, prefix, names + [n.name], path + [3, i])
        for i, e in enumerate(m.enum_type):
            self.enums[prefix + "." + ".".join(names + [e.name])] = (f, e, names + [e.name], path + [4, i])


class Comments:
    """Leading comments of a file's elements, by source path."""

    def __init__(self, f):
        self.by_path = {}
        for loc in f.source_code_info.location:
            text = loc.leading_comments.strip("\n")
            if text:
                self.by_path[tuple(loc.path)] = text

    def doc(self, path, indent):
        text = self.by_path.get(tuple(path))
        if not text:
            return ""
        lines = [ln[1:] if ln.startswith(" ") else ln for ln in text.split("\n")]
        return "".join("%s/// %s\n" % (indent, ln) if ln else "%s///\n" % indent for ln in lines)


class Generator:
    def __init__(self, schema, c_module, schema_name, qualified=False):
        self.schema = schema
        self.c_module = c_module
        self.schema_name = schema_name
        self.qualified = qualified

    def top_name(self, f, name):
        """The Swift name of a top-level message, enum or method table of file `f`."""
        if self.qualified and f.package:
            return swift_package_prefix(f.package) + "_" + name
        return name

    def decl_name(self, fqn):
        """The name a type is declared with: its top-level name, or its own name when nested."""
        f, d, names, _ = self._lookup(fqn)
        return self.top_name(f, d.name) if len(names) == 1 else swift_ident(d.name)

    # Names ---------------------------------------------------------------------------------

    def c_type(self, fqn):
        f, _, names, _ = self._lookup(fqn)
        pkg = "__".join(p[:1].upper() + p[1:] for p in f.package.split(".")) if f.package else ""
        return "__".join(([pkg] if pkg else []) + names)

    def c_func_prefix(self, fqn):
        f, _, names, _ = self._lookup(fqn)
        pkg = "__".join(f.package.split(".")) if f.package else ""
        return "__".join(([pkg] if pkg else []) + [c_lower(n) for n in names])

    def c_enum_value(self, fqn, value_name):
        f, _, names, _ = self.schema.enums[fqn]
        pkg = "__".join(p.upper() for p in f.package.split(".")) if f.package else ""
        return "__".join(([pkg] if pkg else []) + [c_upper_snake(n) for n in names] + [value_name])

    def swift_type(self, fqn):
        f, _, names, _ = self._lookup(fqn)
        return ".".join([self.top_name(f, names[0])] + names[1:])

    def _lookup(self, fqn):
        if fqn in self.schema.messages:
            return self.schema.messages[fqn]
        return self.schema.enums[fqn]

    def is_map(self, field):
        if field.type != FD.TYPE_MESSAGE or field.label != FD.LABEL_REPEATED:
            return False
        return self.schema.messages[field.type_name][1].options.map_entry

    def map_entry(self, field):
        entry = self.schema.messages[field.type_name][1]
        return entry.field[0], entry.field[1]

    def value_swift_type(self, field):
        if field.type == FD.TYPE_MESSAGE:
            return self.swift_type(field.type_name)
        if field.type == FD.TYPE_ENUM:
            return self.swift_type(field.type_name)
        return SCALARS[field.type][0]

    def field_swift_type(self, field):
        if self.is_map(field):
            k, v = self.map_entry(field)
            return "[%s: %s]" % (self.value_swift_type(k), self.value_swift_type(v))
        base = self.value_swift_type(field)
        if field.label == FD.LABEL_REPEATED:
            return "[%s]" % base
        if field.type == FD.TYPE_MESSAGE:
            return base + "?"
        return base

    def field_default(self, field):
        if self.is_map(field):
            return "[:]"
        if field.label == FD.LABEL_REPEATED:
            return "[]"
        if field.type == FD.TYPE_MESSAGE:
            return "nil"
        if field.type == FD.TYPE_ENUM:
            return ".init(rawValue: 0)"
        return SCALARS[field.type][1]

    # Value conversions ---------------------------------------------------------------------

    def to_c(self, field, expr):
        """Swift value -> C value (one element)."""
        t = field.type
        if t == FD.TYPE_STRING:
            return "arena.cString(%s)" % expr
        if t == FD.TYPE_BYTES:
            return "arena.binaryData(%s)" % expr
        if t == FD.TYPE_BOOL:
            return "(%s ? 1 : 0)" % expr
        if t == FD.TYPE_ENUM:
            return "%s(rawValue: UInt32(bitPattern: %s.rawValue))" % (self.c_type(field.type_name), expr)
        if t == FD.TYPE_MESSAGE:
            return "%s.cStruct(in: arena)" % expr
        return expr

    def from_c(self, field, expr, msg_fqn):
        """C value -> Swift value (one element); may throw."""
        t = field.type
        if t == FD.TYPE_STRING:
            return 'try arena.string(%s, field: "%s", of: Self.protoName)' % (expr, field.name)
        if t == FD.TYPE_BYTES:
            return "ProtoArena.bytes(%s)" % expr
        if t == FD.TYPE_BOOL:
            return "(%s != 0)" % expr
        if t == FD.TYPE_ENUM:
            return "%s(rawValue: Int32(bitPattern: %s.rawValue))" % (self.swift_type(field.type_name), expr)
        if t == FD.TYPE_MESSAGE:
            return 'try %s(c: ProtoArena.required(%s, field: "%s", of: Self.protoName), arena: arena)' % (
                self.swift_type(field.type_name), expr, field.name)
        return expr

    def c_element_type(self, field):
        t = field.type
        if t == FD.TYPE_STRING:
            return "UnsafeMutablePointer<CChar>?"
        if t == FD.TYPE_BYTES:
            return "ProtobufCBinaryData"
        if t == FD.TYPE_BOOL:
            return "protobuf_c_boolean"
        if t == FD.TYPE_ENUM:
            return self.c_type(field.type_name)
        if t == FD.TYPE_MESSAGE:
            return "UnsafeMutablePointer<%s>?" % self.c_type(field.type_name)
        return {
            FD.TYPE_DOUBLE: "Double", FD.TYPE_FLOAT: "Float", FD.TYPE_INT64: "Int64",
            FD.TYPE_SINT64: "Int64", FD.TYPE_SFIXED64: "Int64", FD.TYPE_UINT64: "UInt64",
            FD.TYPE_FIXED64: "UInt64", FD.TYPE_INT32: "Int32", FD.TYPE_SINT32: "Int32",
            FD.TYPE_SFIXED32: "Int32", FD.TYPE_UINT32: "UInt32", FD.TYPE_FIXED32: "UInt32",
        }[t]

    def is_zero_check(self, field, expr):
        t = field.type
        if t in (FD.TYPE_STRING, FD.TYPE_BYTES):
            return "!%s.isEmpty" % expr
        if t == FD.TYPE_BOOL:
            return expr
        if t == FD.TYPE_ENUM:
            return "%s.rawValue != 0" % expr
        return "%s != 0" % expr

    # Messages ------------------------------------------------------------------------------

    def message(self, fqn, comments, indent=""):
        f, m, names, path = self.schema.messages[fqn]
        if m.options.map_entry:
            return ""
        out = []
        doc = comments.doc(path, indent) or "%s/// The `%s` message.\n" % (indent, fqn[1:])
        out.append(doc)
        out.append("%spublic struct %s: ProtoMessage {\n" % (indent, self.decl_name(fqn)))
        inner = indent + "    "
        out.append('%spublic static let protoName = "%s"\n\n' % (inner, fqn[1:]))
        oneofs = self.oneofs(m)
        plain = [fl for fl in m.field if not self.in_oneof(m, fl)]
        for i, fl in enumerate(m.field):
            if self.in_oneof(m, fl):
                continue
            out.append(comments.doc(path + [2, i], inner))
            out.append("%spublic var %s: %s = %s\n" % (
                inner, swift_ident(camel_lower(fl.name)), self.field_swift_type(fl), self.field_default(fl)))
        for name, members in oneofs:
            out.append("%s/// Which of the `%s` fields is set, if any.\n" % (inner, name))
            out.append("%spublic var %s: %s? = nil\n" % (inner, swift_ident(camel_lower(name)), camel_upper(name)))
        # Memberwise initializer with defaults.
        params = ["%s: %s = %s" % (camel_lower(fl.name), self.field_swift_type(fl), self.field_default(fl)) for fl in plain]
        params += ["%s: %s? = nil" % (camel_lower(name), camel_upper(name)) for name, _ in oneofs]
        if params:
            out.append("\n%s/// Creates the message with every field at its proto3 zero value.\n" % inner)
            out.append("%spublic init() {}\n" % inner)
        out.append("\n%s/// Creates the message; every field left out is at its proto3 zero value.\n" % inner)
        if len(params) <= 3:
            out.append("%spublic init(%s) {\n" % (inner, ", ".join(params)))
        else:
            out.append("%spublic init(\n%s\n%s) {\n" % (inner, ",\n".join(inner + "    " + p for p in params), inner))
        for fl in plain:
            n = swift_ident(camel_lower(fl.name))
            out.append("%s    self.%s = %s\n" % (inner, n, camel_lower(fl.name)))
        for name, _ in oneofs:
            out.append("%s    self.%s = %s\n" % (inner, swift_ident(camel_lower(name)), camel_lower(name)))
        out.append("%s}\n" % inner)
        for name, members in oneofs:
            out.append("\n%s/// The fields of the `%s` oneof.\n" % (inner, name))
            out.append("%spublic enum %s: Sendable, Equatable {\n" % (inner, camel_upper(name)))
            for idx, fl in members:
                out.append(comments.doc(path + [2, idx], inner + "    "))
                out.append("%s    case %s(%s)\n" % (inner, swift_ident(camel_lower(fl.name)), self.field_swift_type(fl).rstrip("?")))
            out.append("%s}\n" % inner)
        for i, n in enumerate(m.nested_type):
            if n.options.map_entry:
                continue
            out.append("\n")
            out.append(self.message(fqn + "." + n.name, comments, inner))
        for i, e in enumerate(m.enum_type):
            out.append("\n")
            out.append(self.enum(fqn + "." + e.name, comments, inner))
        out.append("%s}\n" % indent)
        return "".join(out)

    def oneofs(self, m):
        result = []
        for oi, od in enumerate(m.oneof_decl):
            members = [(i, fl) for i, fl in enumerate(m.field)
                       if fl.HasField("oneof_index") and fl.oneof_index == oi]
            result.append((od.name, members))
        return result

    def in_oneof(self, m, fl):
        return fl.HasField("oneof_index")

    def bridge(self, fqn):
        """The extension with the C conversions of one message (and its nested messages)."""
        f, m, names, path = self.schema.messages[fqn]
        if m.options.map_entry:
            return ""
        ctype = self.c_type(fqn)
        cfun = self.c_func_prefix(fqn)
        stype = self.swift_type(fqn)
        out = []
        out.append("extension %s {\n" % stype)
        # cMessage / cStruct
        out.append("    public func cMessage(in arena: ProtoArena) -> UnsafeMutableRawPointer {\n")
        out.append("        UnsafeMutableRawPointer(cStruct(in: arena))\n    }\n\n")
        out.append("    func cStruct(in arena: ProtoArena) -> UnsafeMutablePointer<%s> {\n" % ctype)
        out.append("        let c = arena.allocate(%s.self)\n" % ctype)
        out.append("        %s__init(c)\n" % cfun)
        for fl in m.field:
            if self.in_oneof(m, fl):
                continue
            out.append(self.encode_field(fqn, fl))
        for name, members in self.oneofs(m):
            sname = swift_ident(camel_lower(name))
            out.append("        switch %s {\n" % sname)
            out.append("        case nil: break\n")
            for idx, fl in members:
                case_c = "%s__%s_%s" % (c_upper_snake_fqn(self, fqn), name.upper(), fl.name.upper())
                out.append("        case .%s(let value)?:\n" % swift_ident(camel_lower(fl.name)))
                out.append("            c.pointee.%s_case = %s\n" % (name, case_c))
                out.append("            c.pointee.%s = %s\n" % (fl.name, self.to_c(fl, "value")))
            out.append("        }\n")
        out.append("        return c\n    }\n\n")
        # unpack
        out.append("    public static func unpack(_ bytes: UnsafeRawBufferPointer, arena: ProtoArena) throws(ProtoDecodingError) -> Self {\n")
        if len(names) == 1:
            out.append("        guard let c = %s__unpack(arena.allocator, bytes.count, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)) else {\n" % cfun)
            out.append("            throw ProtoDecodingError(messageName: protoName, reason: arena.unpackFailureReason)\n        }\n")
        else:
            # protoc-c writes no unpack function for a nested message: unpack by its descriptor,
            # whose address `__init` stores in the message's base.
            out.append("        var empty = %s()\n        %s__init(&empty)\n" % (ctype, cfun))
            out.append("        guard\n            let message = protobuf_c_message_unpack(\n")
            out.append("                empty.base.descriptor, arena.allocator, bytes.count,\n")
            out.append("                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))\n        else {\n")
            out.append("            throw ProtoDecodingError(messageName: protoName, reason: arena.unpackFailureReason)\n        }\n")
            out.append("        let c = UnsafeRawPointer(message).assumingMemoryBound(to: %s.self)\n" % ctype)
        out.append("        do { return try Self(c: c, arena: arena) } catch { throw error.reported(as: protoName) }\n    }\n\n")
        # init(c:)
        out.append("    init(c: UnsafePointer<%s>, arena: ProtoArena) throws(ProtoDecodingError) {\n" % ctype)
        out.append("        self.init()\n")
        for fl in m.field:
            if self.in_oneof(m, fl):
                continue
            out.append(self.decode_field(fqn, fl))
        for name, members in self.oneofs(m):
            sname = swift_ident(camel_lower(name))
            out.append("        switch c.pointee.%s_case {\n" % name)
            for idx, fl in members:
                case_c = "%s__%s_%s" % (c_upper_snake_fqn(self, fqn), name.upper(), fl.name.upper())
                out.append("        case %s:\n" % case_c)
                out.append("            self.%s = .%s(%s)\n" % (sname, swift_ident(camel_lower(fl.name)), self.from_c(fl, "c.pointee.%s" % fl.name, fqn)))
            out.append("        default:\n            self.%s = nil\n" % sname)
            out.append("        }\n")
        out.append("    }\n\n")
        out.append(self.encoder(fqn, m))
        out.append("\n")
        out.append(self.json_encoder(fqn, m))
        out.append("}\n")
        for n in m.nested_type:
            if not n.options.map_entry:
                out.append("\n" + self.bridge(fqn + "." + n.name))
        return "".join(out)

    # Encoding in Swift -------------------------------------------------------------------------

    def encoder(self, fqn, m):
        """`writeFields(into:)` (`ProtoMessage.encode(appendingTo:)` calls it): fields in number
        order, as protobuf-c packs them (it walks its descriptor's fields, sorted by number)."""
        out = []
        out.append("    public func writeFields(into buffer: inout [UInt8]) {\n")
        oneof_names = [od.name for od in m.oneof_decl]
        for fl in sorted(m.field, key=lambda f: f.number):
            out.append(self.write_field(fl, oneof_names))
        out.append("    }\n")
        return "".join(out)

    def json_encoder(self, fqn, m):
        """`writeJSON(into:)`: proto3 JSON as `ProtoSchema`'s `JSONMessageEncoder` prints it with
        its default options: fields in declaration order under their JSON names, present exactly
        when `writeFields(into:)` writes them (the descriptor-driven encoder prints what it reads
        from those bytes)."""
        out = []
        out.append("    public func writeJSON(into buffer: inout [UInt8]) {\n")
        if not m.field:
            out.append('        ProtoJSONWriter.raw("{}", &buffer)\n')
        else:
            out.append("        let object = ProtoJSONWriter.begin(&buffer)\n")
            oneof_names = [od.name for od in m.oneof_decl]
            for fl in m.field:
                out.append(self.json_field(fl, oneof_names))
            out.append("        ProtoJSONWriter.endObject(&buffer, from: object)\n")
        out.append("    }\n")
        return "".join(out)

    def json_key(self, fl):
        """The statement appending a member's `,"jsonName":` (the comma before every member)."""
        name = fl.json_name if fl.HasField("json_name") else json_name(fl.name)
        return 'ProtoJSONWriter.raw(%s, &buffer)' % swift_string_literal("," + json_quoted(name) + ":")

    def json_field(self, fl, oneof_names):
        i8 = "        "
        name = "self." + swift_ident(camel_lower(fl.name))
        key = self.json_key(fl)
        if fl.HasField("oneof_index"):
            # Written whenever it is the member set, zero or not (as on the wire).
            oneof = "self." + swift_ident(camel_lower(oneof_names[fl.oneof_index]))
            return "%sif case .%s(let value)? = %s { %s; %s }\n" % (
                i8, swift_ident(camel_lower(fl.name)), oneof, key, self.json_value(fl, "value"))
        if self.is_map(fl):
            k, v = self.map_entry(fl)
            key_write = ("ProtoJSONWriter.string(entry.key, &buffer)" if k.type == FD.TYPE_STRING
                         else "ProtoJSONWriter.key(entry.key, &buffer)")
            return (
                "%(i)sif !%(n)s.isEmpty {\n"
                "%(i)s    %(key)s\n"
                "%(i)s    let map = ProtoJSONWriter.begin(&buffer)\n"
                "%(i)s    for entry in ProtoJSONWriter.sortedEntries(%(n)s) {\n"
                "%(i)s        ProtoJSONWriter.raw(\",\", &buffer); %(kw)s; ProtoJSONWriter.raw(\":\", &buffer)\n"
                "%(i)s        %(vw)s\n"
                "%(i)s    }\n"
                "%(i)s    ProtoJSONWriter.endObject(&buffer, from: map)\n"
                "%(i)s}\n"
            ) % {"i": i8, "n": name, "key": key, "kw": key_write, "vw": self.json_value(v, "entry.value")}
        if fl.label == FD.LABEL_REPEATED:
            # By index: `for item in` copies each element (retaining every string of a message).
            return (
                "%(i)sif !%(n)s.isEmpty {\n"
                "%(i)s    %(key)s\n"
                "%(i)s    let array = ProtoJSONWriter.begin(&buffer)\n"
                "%(i)s    for index in %(n)s.indices { ProtoJSONWriter.raw(\",\", &buffer); %(w)s }\n"
                "%(i)s    ProtoJSONWriter.endArray(&buffer, from: array)\n"
                "%(i)s}\n"
            ) % {"i": i8, "n": name, "key": key, "w": self.json_value(fl, "%s[index]" % name)}
        if fl.type == FD.TYPE_MESSAGE:
            return "%sif let value = %s { %s; %s }\n" % (i8, name, key, self.json_value(fl, "value"))
        return "%sif %s { %s; %s }\n" % (i8, self.is_zero_check(fl, name), key, self.json_value(fl, name))

    def json_value(self, fl, expr):
        """A statement appending one value's JSON."""
        t = fl.type
        if t == FD.TYPE_MESSAGE:
            return "%s.writeJSON(into: &buffer)" % expr
        method = {
            FD.TYPE_STRING: "string", FD.TYPE_BYTES: "bytes", FD.TYPE_BOOL: "bool", FD.TYPE_ENUM: "enumValue",
            FD.TYPE_INT32: "int32", FD.TYPE_SINT32: "int32", FD.TYPE_SFIXED32: "int32",
            FD.TYPE_UINT32: "uint32", FD.TYPE_FIXED32: "uint32",
            FD.TYPE_INT64: "int64", FD.TYPE_SINT64: "int64", FD.TYPE_SFIXED64: "int64",
            FD.TYPE_UINT64: "uint64", FD.TYPE_FIXED64: "uint64",
            FD.TYPE_FLOAT: "float", FD.TYPE_DOUBLE: "double",
        }[t]
        return "ProtoJSONWriter.%s(%s, &buffer)" % (method, expr)

    def element_wire_type(self, fl):
        t = fl.type
        if t in (FD.TYPE_STRING, FD.TYPE_BYTES, FD.TYPE_MESSAGE):
            return 2
        if t in (FD.TYPE_DOUBLE, FD.TYPE_FIXED64, FD.TYPE_SFIXED64):
            return 1
        if t in (FD.TYPE_FLOAT, FD.TYPE_FIXED32, FD.TYPE_SFIXED32):
            return 5
        return 0

    def tag(self, number, wire):
        """Statements appending a field's key (its varint bytes, known here)."""
        value = (number << 3) | wire
        out = []
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        return "; ".join("buffer.append(0x%02X)" % b for b in out)

    def write_value(self, fl, expr):
        """A statement appending one element's payload (after its key)."""
        t = fl.type
        w = "ProtoWireWriter"
        if t == FD.TYPE_STRING:
            return "%s.string(%s, &buffer)" % (w, expr)
        if t == FD.TYPE_BYTES:
            return "%s.bytes(%s, &buffer)" % (w, expr)
        if t == FD.TYPE_MESSAGE:
            return ("do { let start = %s.beginLength(&buffer); %s.writeFields(into: &buffer); "
                    "%s.endLength(&buffer, from: start) }" % (w, expr, w))
        if t == FD.TYPE_BOOL:
            return "buffer.append(%s ? 1 : 0)" % expr
        if t == FD.TYPE_ENUM:
            return "%s.int32(%s.rawValue, &buffer)" % (w, expr)
        return {
            FD.TYPE_INT32: "%s.int32(%%s, &buffer)" % w,
            FD.TYPE_INT64: "%s.int64(%%s, &buffer)" % w,
            FD.TYPE_UINT32: "%s.varint(UInt64(%%s), &buffer)" % w,
            FD.TYPE_UINT64: "%s.varint(%%s, &buffer)" % w,
            FD.TYPE_SINT32: "%s.sint32(%%s, &buffer)" % w,
            FD.TYPE_SINT64: "%s.sint64(%%s, &buffer)" % w,
            FD.TYPE_FIXED32: "%s.fixed32(%%s, &buffer)" % w,
            FD.TYPE_SFIXED32: "%s.fixed32(UInt32(bitPattern: %%s), &buffer)" % w,
            FD.TYPE_FLOAT: "%s.fixed32(%%s.bitPattern, &buffer)" % w,
            FD.TYPE_FIXED64: "%s.fixed64(%%s, &buffer)" % w,
            FD.TYPE_SFIXED64: "%s.fixed64(UInt64(bitPattern: %%s), &buffer)" % w,
            FD.TYPE_DOUBLE: "%s.fixed64(%%s.bitPattern, &buffer)" % w,
        }[t] % expr

    def write_field(self, fl, oneof_names):
        i8 = "        "
        name = "self." + swift_ident(camel_lower(fl.name))
        if fl.HasField("oneof_index"):
            # A oneof's member is packed whenever it is the one set, zero or not.
            oneof = "self." + swift_ident(camel_lower(oneof_names[fl.oneof_index]))
            return "%sif case .%s(let value)? = %s { %s; %s }\n" % (
                i8, swift_ident(camel_lower(fl.name)), oneof, self.tag(fl.number, self.element_wire_type(fl)),
                self.write_value(fl, "value"))
        if self.is_map(fl):
            # Entries in key order (as the bridge builds them); an entry is a proto3 message, so
            # a zero key or value inside it is left out.
            k, v = self.map_entry(fl)
            value_check = "true" if v.type == FD.TYPE_MESSAGE else self.is_zero_check(v, "value")
            return (
                "%(i)sfor (key, value) in %(n)s.sorted(by: { $0.key < $1.key }) {\n"
                "%(i)s    %(tag)s\n"
                "%(i)s    let start = ProtoWireWriter.beginLength(&buffer)\n"
                "%(i)s    if %(kz)s { %(ktag)s; %(kw)s }\n"
                "%(i)s    if %(vz)s { %(vtag)s; %(vw)s }\n"
                "%(i)s    ProtoWireWriter.endLength(&buffer, from: start)\n"
                "%(i)s}\n"
            ) % {"i": i8, "n": name, "tag": self.tag(fl.number, 2),
                 "kz": self.is_zero_check(k, "key"), "ktag": self.tag(1, self.element_wire_type(k)),
                 "kw": self.write_value(k, "key"),
                 "vz": value_check, "vtag": self.tag(2, self.element_wire_type(v)), "vw": self.write_value(v, "value")}
        if fl.label == FD.LABEL_REPEATED:
            wire = self.element_wire_type(fl)
            packed = wire != 2 and not (fl.options.HasField("packed") and not fl.options.packed)
            if packed:
                return (
                    "%(i)sif !%(n)s.isEmpty {\n"
                    "%(i)s    %(tag)s\n"
                    "%(i)s    let start = ProtoWireWriter.beginLength(&buffer)\n"
                    "%(i)s    for item in %(n)s { %(w)s }\n"
                    "%(i)s    ProtoWireWriter.endLength(&buffer, from: start)\n"
                    "%(i)s}\n"
                ) % {"i": i8, "n": name, "tag": self.tag(fl.number, 2), "w": self.write_value(fl, "item")}
            # By index: `for item in` copies each element (retaining every string of a message).
            return "%sfor index in %s.indices { %s; %s }\n" % (
                i8, name, self.tag(fl.number, wire), self.write_value(fl, "%s[index]" % name))
        if fl.type == FD.TYPE_MESSAGE:
            return "%sif let value = %s { %s; %s }\n" % (
                i8, name, self.tag(fl.number, 2), self.write_value(fl, "value"))
        return "%sif %s { %s; %s }\n" % (
            i8, self.is_zero_check(fl, name), self.tag(fl.number, self.element_wire_type(fl)), self.write_value(fl, name))

    def encode_field(self, fqn, fl):
        name = swift_ident(camel_lower(fl.name))
        cn = fl.name
        if self.is_map(fl):
            k, v = self.map_entry(fl)
            entry_fqn = fl.type_name
            ectype = self.c_type(entry_fqn)
            ecfun = self.c_func_prefix(entry_fqn)
            return (
                "        if !%(n)s.isEmpty {\n"
                "            let entries = arena.allocateArray(UnsafeMutablePointer<%(et)s>?.self, count: %(n)s.count)\n"
                "            for (i, key) in %(n)s.keys.sorted().enumerated() {\n"
                "                let entry = arena.allocate(%(et)s.self)\n"
                "                %(ef)s__init(entry)\n"
                "                entry.pointee.key = %(kc)s\n"
                "                entry.pointee.value = %(vc)s\n"
                "                entries[i] = entry\n"
                "            }\n"
                "            c.pointee.n_%(cn)s = %(n)s.count\n"
                "            c.pointee.%(cn)s = entries\n"
                "        }\n"
            ) % {"n": name, "et": ectype, "ef": ecfun, "cn": cn,
                 "kc": self.to_c(k, "key"), "vc": self.to_c(v, "%s[key]!" % name)}
        if fl.label == FD.LABEL_REPEATED:
            return (
                "        if !%(n)s.isEmpty {\n"
                "            let items = arena.allocateArray(%(ct)s.self, count: %(n)s.count)\n"
                "            for (i, item) in %(n)s.enumerated() { items[i] = %(conv)s }\n"
                "            c.pointee.n_%(cn)s = %(n)s.count\n"
                "            c.pointee.%(cn)s = items\n"
                "        }\n"
            ) % {"n": name, "ct": self.c_element_type(fl), "cn": cn, "conv": self.to_c(fl, "item")}
        if fl.type == FD.TYPE_MESSAGE:
            return "        if let value = %s { c.pointee.%s = value.cStruct(in: arena) }\n" % (name, cn)
        if fl.type == FD.TYPE_BOOL:
            return "        if %s { c.pointee.%s = 1 }\n" % (name, cn)
        return "        if %s { c.pointee.%s = %s }\n" % (self.is_zero_check(fl, name), cn, self.to_c(fl, name))

    def decode_field(self, fqn, fl):
        name = swift_ident(camel_lower(fl.name))
        cn = fl.name
        if self.is_map(fl):
            k, v = self.map_entry(fl)
            return (
                "        for i in 0..<c.pointee.n_%(cn)s {\n"
                "            let entry = try ProtoArena.required(c.pointee.%(cn)s[i], field: \"%(cn)s\", of: Self.protoName)\n"
                "            self.%(n)s[%(kc)s] = %(vc)s\n"
                "        }\n"
            ) % {"cn": cn, "n": name, "kc": self.from_c(k, "entry.pointee.key", fqn),
                 "vc": self.from_c(v, "entry.pointee.value", fqn)}
        if fl.label == FD.LABEL_REPEATED:
            return (
                "        if c.pointee.n_%(cn)s > 0 {\n"
                "            self.%(n)s.reserveCapacity(c.pointee.n_%(cn)s)\n"
                "            for i in 0..<c.pointee.n_%(cn)s { self.%(n)s.append(%(conv)s) }\n"
                "        }\n"
            ) % {"cn": cn, "n": name, "conv": self.from_c(fl, "c.pointee.%s[i]" % cn, fqn)}
        if fl.type == FD.TYPE_MESSAGE:
            return "        if let value = c.pointee.%s { self.%s = try %s(c: value, arena: arena) }\n" % (
                cn, name, self.swift_type(fl.type_name))
        return "        self.%s = %s\n" % (name, self.from_c(fl, "c.pointee.%s" % cn, fqn))

    # Enums ---------------------------------------------------------------------------------

    def enum(self, fqn, comments, indent=""):
        f, e, names, path = self.schema.enums[fqn]
        prefix = c_upper_snake(e.name) + "_"
        strip = all(v.name.startswith(prefix) for v in e.value)
        cases = []
        for i, v in enumerate(e.value):
            vn = v.name[len(prefix):] if strip else v.name
            cases.append((i, v, swift_ident(camel_lower(vn.lower()))))
        out = []
        out.append(comments.doc(path, indent) or "%s/// The `%s` enum.\n" % (indent, fqn[1:]))
        out.append("%spublic enum %s: ProtoEnum {\n" % (indent, self.decl_name(fqn)))
        inner = indent + "    "
        for i, v, sn in cases:
            out.append(comments.doc(path + [2, i], inner))
            out.append("%scase %s\n" % (inner, sn))
        out.append("%s/// A value this build does not know (proto3 enums are open).\n" % inner)
        out.append("%scase unrecognized(Int32)\n\n" % inner)
        out.append('%spublic static let protoName = "%s"\n\n' % (inner, fqn[1:]))
        out.append("%s/// Every known value, in declaration order.\n" % inner)
        out.append("%spublic static let allKnown: [Self] = [%s]\n\n" % (inner, ", ".join("." + sn for _, _, sn in cases)))
        out.append("%spublic init(rawValue: Int32) {\n%s    switch rawValue {\n" % (inner, inner))
        seen = set()
        for i, v, sn in cases:
            if v.number in seen:
                continue
            seen.add(v.number)
            out.append("%s    case %d: self = .%s\n" % (inner, v.number, sn))
        out.append("%s    default: self = .unrecognized(rawValue)\n%s    }\n%s}\n\n" % (inner, inner, inner))
        out.append("%spublic var rawValue: Int32 {\n%s    switch self {\n" % (inner, inner))
        for i, v, sn in cases:
            out.append("%s    case .%s: %d\n" % (inner, sn, v.number))
        out.append("%s    case .unrecognized(let value): value\n%s    }\n%s}\n\n" % (inner, inner, inner))
        out.append("%s/// The value's name in the .proto (e.g. `%s`); nil for an unrecognized value.\n" % (inner, e.value[0].name))
        out.append("%spublic var protoValueName: String? {\n%s    switch self {\n" % (inner, inner))
        for i, v, sn in cases:
            out.append('%s    case .%s: "%s"\n' % (inner, sn, v.name))
        out.append("%s    case .unrecognized: nil\n%s    }\n%s}\n" % (inner, inner, inner))
        out.append("%s}\n" % indent)
        return "".join(out)

    # Services ------------------------------------------------------------------------------

    def service(self, f, si, s, comments):
        fqn = (f.package + "." if f.package else "") + s.name
        out = []
        out.append(comments.doc([6, si], "") or "/// The `%s` service.\n" % fqn)
        out.append("public enum %s {\n" % self.methods_type(f, s.name))
        out.append('    /// The service\'s fully-qualified name.\n    public static let name = "%s"\n\n' % fqn)
        for mi, md in enumerate(s.method):
            out.append(comments.doc([6, si, 2, mi], "    "))
            out.append(
                '    public static let %s = ProtoMethod<%s, %s>(\n'
                '        service: name, name: "%s", clientStreaming: %s, serverStreaming: %s)\n' % (
                    swift_ident(md.name[:1].lower() + md.name[1:]), self.swift_type(md.input_type),
                    self.swift_type(md.output_type), md.name, "true" if md.client_streaming else "false",
                    "true" if md.server_streaming else "false"))
        out.append("\n    /// Every method of the service, in declaration order.\n")
        out.append("    public static let methods: [any ProtoMethodDescription] = [%s]\n" % ", ".join(
            swift_ident(md.name[:1].lower() + md.name[1:]) for md in s.method))
        out.append("}\n")
        return "".join(out)

    def methods_type(self, f, service):
        """The Swift name of a service's method table: `<Service>Methods`."""
        return self.top_name(f, service + "Methods")


def c_upper_snake_fqn(gen, fqn):
    f, _, names, _ = gen.schema.messages[fqn]
    pkg = "__".join(p.upper() for p in f.package.split(".")) if f.package else ""
    return "__".join(([pkg] if pkg else []) + [c_upper_snake(n) for n in names])


HEADER = "// Generated by tools/gen-proto from %s. DO NOT EDIT.\n\n"


def main():
    args = sys.argv[1:]
    naming = "short"
    if args and args[0].startswith("--names="):
        naming = args.pop(0)[len("--names="):]
    if naming not in ("short", "qualified") or len(args) < 5:
        sys.exit(__doc__)
    desc_path, c_module, schema_name, out_dir = args[:4]
    files = args[4:]
    fds = descriptor_pb2.FileDescriptorSet()
    with open(desc_path, "rb") as fh:
        fds.ParseFromString(fh.read())
    schema = Schema(fds)
    gen = Generator(schema, c_module, schema_name, qualified=naming == "qualified")
    os.makedirs(out_dir, exist_ok=True)
    services = []
    message_types = [gen.swift_type(fqn) for fqn, (f, m, _, _) in schema.messages.items()
                     if f.name in files and not m.options.map_entry]
    for name in files:
        f = schema.files[name]
        comments = Comments(f)
        prefix = "." + f.package if f.package else ""
        imports = "public import ProtoBridge\ninternal import %s\n" % c_module
        nested = any(mf.name == name and len(names) > 1 and not m.options.map_entry
                     for mf, m, names, _ in schema.messages.values())
        if nested:  # a nested message is unpacked through protobuf-c's own functions
            imports = "internal import CProtobufC\n" + imports
        body = [HEADER % name, imports]
        for e in f.enum_type:
            body.append("\n" + gen.enum(prefix + "." + e.name, comments))
        for m in f.message_type:
            body.append("\n" + gen.message(prefix + "." + m.name, comments))
        for m in f.message_type:
            body.append("\n" + gen.bridge(prefix + "." + m.name))
        for si, s in enumerate(f.service):
            body.append("\n" + gen.service(f, si, s, comments))
            services.append(gen.methods_type(f, s.name))
        base = re.sub(r"\.proto$", "", name).replace("/", "_")
        with open(os.path.join(out_dir, base + ".pb.swift"), "w") as fh:
            fh.write("".join(body).replace("\n\n\n", "\n\n"))
    # The schema: descriptor set and services of this module.
    with open(os.path.join(out_dir, schema_name + ".swift"), "w") as fh:
        fh.write(HEADER % ", ".join(files))
        fh.write("public import ProtoBridge\ninternal import %s\n\n" % c_module)
        fh.write("/// The schema this module was generated from: its FileDescriptorSet and its services.\n")
        fh.write("public enum %s {\n" % schema_name)
        fh.write("    /// The serialized FileDescriptorSet of %s (with imports and comments),\n" % ", ".join(files))
        fh.write("    /// as `protoc --include_imports --include_source_info --descriptor_set_out` wrote it.\n")
        fh.write("    public static let fileDescriptorSet: [UInt8] = {\n")
        sym = c_module.lower() + "_descriptor_set"
        fh.write("        var count = 0\n        let bytes = %s(&count)\n" % sym)
        fh.write("        return Array(UnsafeBufferPointer(start: bytes, count: count))\n    }()\n\n")
        fh.write("    /// Every message type, in the order of the files and their declarations.\n")
        fh.write("    public static let messageTypes: [any ProtoMessage.Type] = [\n%s\n    ]\n\n" % "\n".join(
            "        %s.self," % t for t in message_types))
        fh.write("    /// Every method of every service, in declaration order.\n")
        fh.write("    public static let methods: [any ProtoMethodDescription] = %s\n" % (
            " + ".join("%s.methods" % s for s in services) if services else "[]"))
        fh.write("}\n")


if __name__ == "__main__":
    main()
