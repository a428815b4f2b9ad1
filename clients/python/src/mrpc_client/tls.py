"""TLS below the framed protocol (docs/PROTOCOL.md, "TLS"), with the standard library's ``ssl``.

A connection's reader thread receives while its writer thread sends. OpenSSL forbids two threads
in one TLS connection at once, and an ``ssl.SSLSocket`` does not serialise them, so the
connection's socket is wrapped in a ``TLSSocket`` instead: the TLS state is an ``ssl.SSLObject``
over two ``ssl.MemoryBIO`` s, used by one thread at a time under a lock that is never held across
socket I/O; the socket is read and written outside it. Encrypted bytes leave in the order they
were made (a second lock, held by the one sender). The reader never waits for a send: bytes TLS
makes while reading (none with this server; a TLS 1.3 KeyUpdate answer could be) are sent by
whichever thread holds the send lock.

``TLSSocket`` offers what ``Connection`` and ``FrameReader`` use of a socket: ``recv``,
``sendall``, ``settimeout``, ``setsockopt``, ``shutdown``, ``close``.
"""

from __future__ import annotations

import socket
import ssl
import threading
from typing import Optional

#: The ALPN name of the framed protocol.
ALPN_PROTOCOL = "mrpc/1"


class TLSSocket:
    """A connected socket speaking TLS through an ``ssl.SSLObject``; see the module's docstring."""

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, server_hostname: Optional[str]) -> None:
        self._sock = sock
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=False,
                                     server_hostname=server_hostname)
        #: Held for every use of the SSLObject and its BIOs; never across socket I/O.
        self._lock = threading.Lock()
        #: Held by the thread sending encrypted bytes, so they leave in order.
        self._send_lock = threading.Lock()

    def handshake(self) -> None:
        """Runs the TLS handshake on the (blocking, possibly timed) socket. Raises ``ssl.SSLError``
        (``ssl.SSLCertVerificationError`` for a certificate refused) or ``OSError``."""
        while True:
            try:
                with self._lock:
                    self._tls.do_handshake()
                self._send_pending()
                return
            except ssl.SSLWantReadError:
                self._send_pending()
                data = self._sock.recv(65536)
                with self._lock:
                    if data:
                        self._incoming.write(data)
                    else:
                        self._incoming.write_eof()

    @property
    def version(self) -> Optional[str]:
        """"TLSv1.3", "TLSv1.2"."""
        return self._tls.version()

    @property
    def alpn_protocol(self) -> Optional[str]:
        return self._tls.selected_alpn_protocol()

    def recv(self, size: int) -> bytes:
        """Up to ``size`` decrypted bytes; ``b""`` once the server has ended the connection."""
        while True:
            with self._lock:
                try:
                    data: Optional[bytes] = self._tls.read(size)
                except ssl.SSLWantReadError:
                    data = None
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                    return b""
                owed = self._outgoing.pending > 0
            if owed:
                self._send_pending(wait=False)
            if data is not None:
                return data
            chunk = self._sock.recv(65536)
            with self._lock:
                if chunk:
                    self._incoming.write(chunk)
                else:
                    self._incoming.write_eof()

    def sendall(self, data: bytes) -> None:
        """Encrypts ``data`` and sends it, with any bytes TLS owes from reading."""
        with self._send_lock:
            with self._lock:
                self._tls.write(data)
            self._send_owed()
        self._send_pending(wait=False)

    def _send_pending(self, wait: bool = True) -> None:
        """Sends what TLS has made; without ``wait``, only when no other thread is sending (that
        thread looks again once it is done, so nothing is left behind)."""
        if not self._send_lock.acquire(blocking=wait):
            return
        try:
            self._send_owed()
        finally:
            self._send_lock.release()
        with self._lock:
            more = self._outgoing.pending > 0
        if more:
            self._send_pending(wait=False)

    def _send_owed(self) -> None:
        """Sends what the outgoing BIO holds (the send lock held)."""
        while True:
            with self._lock:
                data = self._outgoing.read()
            if not data:
                return
            self._sock.sendall(data)

    def settimeout(self, timeout: Optional[float]) -> None:
        self._sock.settimeout(timeout)

    def setsockopt(self, *args: int) -> None:
        self._sock.setsockopt(*args)

    def shutdown(self, how: int) -> None:
        """Sends close_notify when it can without waiting, then shuts the socket down."""
        if self._send_lock.acquire(blocking=False):
            try:
                with self._lock:
                    try:
                        self._tls.unwrap()
                    except ssl.SSLError:
                        pass  # SSLWantReadError: the peer's close_notify is not awaited
                    data = self._outgoing.read()
                if data:
                    self._sock.setblocking(False)
                    try:
                        self._sock.send(data)
                    except OSError:
                        pass
            finally:
                self._send_lock.release()
        self._sock.shutdown(how)

    def close(self) -> None:
        self._sock.close()
