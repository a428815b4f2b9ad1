internal import CSystemShims
internal import Glibc
import RPCCore
import TLSSupport

extension SocketConnection {
    /// Advances the TLS handshake (within the loop's share of handshake work this turn); once it
    /// completes, ALPN may name the wire, and the connection reads like any other. A failure is
    /// logged (throttled per address, like failed HELLOs) and closes the connection.
    func continueHandshake() {
        guard let tls = io.session else { return }
        if tls.bytesReceived == 0 && refusedPlaintextPeer() { return }
        // Over this turn's share, the connection waits: its registration is level-triggered, so
        // the next turn reports it again.
        guard owner.takeHandshakeStep(turn: loop.turn) else { return }
        switch tls.handshake() {
        case .complete:
            state.handshakeCompleted()
            settleInbound()
            logger.debug(
                "TLS handshake complete",
                [
                    ("peer", peer), ("version", tls.protocolVersion), ("cipher", tls.cipherSuite),
                    ("alpn", tls.applicationProtocol ?? "-"), ("client_certificate", tls.peerSubject ?? "-"),
                ])
            core.transportNegotiated(applicationProtocol: tls.applicationProtocol)
            updateInterest()
            // The client's first bytes may have come with its last handshake message.
            if state.isReading { readAvailable() }
        case .wantRead:
            setHandshakeInterest([.input, .readHangUp])
        case .wantWrite:
            setHandshakeInterest([.output])
        case .failed(let error):
            handshakeFailed(error, tls: tls)
        }
    }

    private func setHandshakeInterest(_ events: EpollEvents) {
        state.handshakeWaits(for: events)
        guard let registration, events != registeredEvents else { return }
        do throws(SystemError) {
            try loop.modify(fd: fd, registration: registration, events: events)
            registeredEvents = events
        } catch {
            logger.warning(
                "closing connection: cannot change what its socket is watched for",
                [("peer", peer), ("error", error.description)])
            close()
        }
    }

    private func handshakeFailed(_ error: TLSError, tls: TLSSession) {
        if tls.bytesReceived == 0 {
            // Connected and went without a byte: a port check, not a TLS client.
            logger.debug("connection closed before a TLS handshake began", [("peer", peer)])
        } else {
            let logged = throttle?.failed(address: peerAddress, now: loop.now) ?? true
            observer?.transportEvent(.transportHandshakeFailed(logged: logged))
            if logged { logger.notice("closing connection: \(error.message)", [("peer", peer)]) }
        }
        close()
    }

    /// A plaintext client on the TLS listener (its first bytes are our preface or HTTP/2's, not a
    /// TLS record): one of ours gets a GOAWAY it can read, saying why, instead of a TLS alert it
    /// cannot; an HTTP/2 one gets HTTP/2's GOAWAY with the reason as its debug data — and no
    /// SETTINGS before it, so that the client never counts the connection as made: gRPC clients
    /// retry a made connection at once, but back off from one that failed. Then the connection
    /// closes. Costs one peek per TLS connection, before OpenSSL reads anything.
    private func refusedPlaintextPeer() -> Bool {
        var first: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        let n = withUnsafeMutableBytes(of: &first) { recv(fd, $0.baseAddress, 4, Int32(MSG_PEEK)) }
        guard n == 4 else { return false }
        let reason = "this listener speaks TLS only: connect with TLS"
        var refusal: [UInt8] = []
        if first == (Preface.bytes[0], Preface.bytes[1], Preface.bytes[2], Preface.bytes[3]) {
            FrameWriter.goaway(
                lastStreamID: 0,
                error: .protocolViolation("\(reason) (rpc-probe --tls, the Python client's tls=True)"), into: &refusal)
        } else if first == (UInt8(ascii: "P"), UInt8(ascii: "R"), UInt8(ascii: "I"), UInt8(ascii: " ")) {
            // HTTP/2: GOAWAY(0, PROTOCOL_ERROR) alone.
            let debug = Array(reason.utf8)
            let length = 8 + debug.count
            refusal = [UInt8(length >> 16), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), 0x07, 0, 0, 0, 0, 0]
            refusal += [0, 0, 0, 0, 0, 0, 0, 1] + debug
        } else {
            return false
        }
        // A fresh socket's send buffer always takes a few dozen bytes.
        _ = refusal.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let logged = throttle?.failed(address: peerAddress, now: loop.now) ?? true
        observer?.transportEvent(.transportHandshakeFailed(logged: logged))
        if logged { logger.notice("closing connection: a plaintext client on a TLS port", [("peer", peer)]) }
        close()
        return true
    }

    /// The peer's address without its port, as failed handshakes are counted.
    var peerAddress: String {
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }
}
