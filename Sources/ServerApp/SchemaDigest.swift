internal import CSodium

/// The digest HELLO_ACK gives of the descriptor set reflection serves: "sha256:" and 64
/// lowercase hex digits of exactly the bytes `GetFileDescriptorSet` returns.
///
/// The version alone cannot tell builds apart (every development build is "0.1.0"); the digest
/// changes with any change of the schema, so a tool may trust a copy it kept only when the two
/// digests are equal (rpc-probe's cache, docs/RPC-PROBE.md).
enum SchemaDigest {
    static func of(_ descriptorSet: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = descriptorSet.withUnsafeBufferPointer { crypto_hash_sha256(&digest, $0.baseAddress, UInt64($0.count)) }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var text = "sha256:"
        for byte in digest {
            text.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
            text.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0x0F)]))
        }
        return text
    }
}
