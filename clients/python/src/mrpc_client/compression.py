"""Raw deflate (RFC 1951) as MRPC uses it (docs/PROTOCOL.md §6), with the size cap applied while
inflating so that a compression bomb costs at most the cap."""

from __future__ import annotations

import zlib

#: The tail of a sync flush: stripped by the sender of each stream message, appended back here.
SYNC_FLUSH_TAIL = b"\x00\x00\xff\xff"

#: Bodies smaller than this are not worth compressing (the server uses the same threshold).
COMPRESSION_THRESHOLD = 1024


class InflateError(Exception):
    """A compressed body that is corrupt (``too_large`` False) or inflates over the cap (True)."""

    def __init__(self, message: str, *, too_large: bool) -> None:
        super().__init__(message)
        self.too_large = too_large


def _inflate(inflater: "zlib._Decompress", data: bytes, limit: int) -> bytes:
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as error:
        raise InflateError("not valid raw deflate data: %s" % error, too_large=False) from None
    if len(out) > limit or inflater.unconsumed_tail:
        raise InflateError("inflates to more than %d bytes (the maximum message size)" % limit, too_large=True)
    return out


def inflate_body(data: bytes, limit: int) -> bytes:
    """Inflates one unary body: a complete raw-deflate stream (ended with Z_FINISH), or one ended
    with a sync flush whose ``00 00 FF FF`` tail was removed."""
    inflater = zlib.decompressobj(-15)
    out = _inflate(inflater, data, limit)
    if not inflater.eof:
        out += _inflate(inflater, SYNC_FLUSH_TAIL, limit - len(out))
    elif inflater.unused_data:
        raise InflateError("not valid raw deflate data: %d bytes after the end of the stream"
                           % len(inflater.unused_data), too_large=False)
    return out


def deflate_body(data: bytes) -> bytes:
    """Deflates one unary body as a complete, independent raw-deflate stream."""
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    return deflater.compress(data) + deflater.flush(zlib.Z_FINISH)


class StreamInflater:
    """The inflate side of one compressed server stream: one context kept across its messages.

    Each compressed MESSAGE is the sender's output up to a sync flush, without the flush's final
    ``00 00 FF FF``; appending those four bytes and inflating with the same context (window 2^15,
    which reads any smaller window) restores the message. Uncompressed messages of the same stream
    bypass the context without disturbing it.
    """

    def __init__(self, limit: int) -> None:
        self._inflater = zlib.decompressobj(-15)
        self._limit = limit

    def inflate(self, data: bytes) -> bytes:
        out = _inflate(self._inflater, data + SYNC_FLUSH_TAIL, self._limit)
        if self._inflater.eof:
            raise InflateError("the stream's deflate context ended (a final block) in the middle of the stream",
                               too_large=False)
        return out
