"""The ``reactivesocket-draft`` wire profile: seed 001's framing, exactly as written.

Header (12 bytes, big endian): Version (8 bits, always 0), a flags byte with
I (0x80) and M (0x40) first and the frame's own flags below them (SETUP: L 0x20,
S 0x10; RESPONSE: F 0x20, C 0x10), a 16-bit frame type, a 64-bit stream id.
On TCP the header starts with a reserved R bit and a 31-bit Frame Length that
counts the whole frame *including* the header and that length word itself, so
the prefix is 4 bytes and the smallest frame is 16.  Over WebSocket there is no
length word and the header is 12 bytes.

Metadata has its own header here: an 8-bit application-defined Type and a
24-bit Metadata Length that includes that 4-byte header, then the metadata,
then the frame's payload.  A metadata length beyond the frame (or below its own
4 bytes) makes the whole frame ignored, not an error (seed 001, Metadata
Optional Header): the decoder returns ``IgnoredFrame`` (RS-DRAFT-2).

Frames map onto the 1.0 classes where the meaning is the same; DECISIONS.md
lists each mapping (RESPONSE is PAYLOAD, ERROR has no code on this wire, ...).
Integer fields are as wide as the draft draws them: 32-bit keepalive times and
SETUP_ERROR code, 64-bit TTL, request counts and stream id, 8-bit MIME lengths.
"""

from __future__ import annotations

from .codec import Body, Header, IgnoreSignal, Profile, Reader, Writer, need_bytes, need_unsigned, violation
from .frames import (
    APPLICATION_ERROR,
    CONNECTION_ERROR,
    KEEPALIVE_SETTERS,
    PAYLOAD_SETTERS,
    Cancel,
    Error,
    Ext,
    Frame,
    Keepalive,
    Lease,
    MetadataPush,
    Payload,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    RequestSubscription,
    Setup,
    SetupError,
)

FLAG_I, FLAG_M = 0x80, 0x40
FLAG_L = FLAG_F = 0x20  # L on SETUP, F on RESPONSE
FLAG_S = FLAG_C = 0x10  # S on SETUP, C on RESPONSE
VERSION = 0
METADATA_HEADER = 4  # Type (8) + Metadata Length (24)

TYPE_NAMES: dict[int, str] = {
    0x0001: "SETUP",
    0x0002: "SETUP_ERROR",
    0x0003: "LEASE",
    0x0004: "KEEPALIVE",
    0x0011: "REQUEST_RESPONSE",
    0x0012: "REQUEST_FNF",
    0x0013: "REQUEST_STREAM",
    0x0014: "REQUEST_SUB",
    0x0015: "REQUEST_N",
    0x0016: "CANCEL",
    0x0020: "RESPONSE",
    0x0021: "ERROR",
    0x0031: "METADATA_PUSH",
    0xFFFF: "EXT",
}


_new = object.__new__
_set_stream, _set_ignore, _set_follows, _set_complete, _set_next, _set_metadata, _set_data = PAYLOAD_SETTERS
_set_ka_stream, _set_ka_ignore, _set_ka_respond, _set_ka_position, _set_ka_data = KEEPALIVE_SETTERS


def draft_error_code(stream_id: int) -> int:
    """The 1.0 code a draft ERROR (which carries none) decodes to: connection or application error."""
    return CONNECTION_ERROR if stream_id == 0 else APPLICATION_ERROR


# -- readers ------------------------------------------------------------------------------


def _metadata(h: Header, b: Body) -> bytes | None:
    """The metadata (its Type byte dropped: application-defined, not interpreted), or None without M."""
    if not h.metadata:
        return None
    if b.remaining() < METADATA_HEADER:
        raise IgnoreSignal("RS-DRAFT-2", f"frame ends inside the metadata header ({b.remaining()} of 4 bytes)")
    b.uint(1, "metadata type")
    size = b.uint(3, "metadata length")
    if size < METADATA_HEADER or size - METADATA_HEADER > b.remaining():
        raise IgnoreSignal(
            "RS-DRAFT-2", f"metadata length {size} does not fit the frame ({b.remaining() + METADATA_HEADER} bytes left)"
        )
    return b.take(size - METADATA_HEADER, "metadata")


def _metadata_only(h: Header, b: Body) -> bytes | None:
    metadata = _metadata(h, b)
    b.done()
    return metadata


def read_setup(h: Header, b: Body) -> Setup:
    keepalive = b.uint(4, "time between KEEPALIVE frames")
    lifetime = b.uint(4, "max lifetime")
    metadata_mime = b.take(b.uint(1, "metadata MIME length"), "metadata MIME type")
    data_mime = b.take(b.uint(1, "data MIME length"), "data MIME type")
    metadata = _metadata(h, b)
    return Setup(
        stream_id=h.stream_id,
        ignore=h.ignore,
        major_version=VERSION,
        minor_version=0,
        keepalive_interval=keepalive,
        max_lifetime=lifetime,
        lease=bool(h.flags & FLAG_L),
        strict=bool(h.flags & FLAG_S),
        metadata_mime=metadata_mime,
        data_mime=data_mime,
        metadata=metadata,
        data=b.rest(),
    )


def read_setup_error(h: Header, b: Body) -> SetupError:
    code = b.uint(4, "error code")
    metadata = _metadata(h, b)
    return SetupError(stream_id=h.stream_id, ignore=h.ignore, error_code=code, metadata=metadata, data=b.rest())


def read_lease(h: Header, b: Body) -> Lease:
    ttl = b.uint(8, "time-to-live")
    number = b.uint(8, "number of requests")
    return Lease(stream_id=h.stream_id, ignore=h.ignore, ttl=ttl, number_of_requests=number, metadata=_metadata_only(h, b))


def read_keepalive(h: Header, b: Body) -> Keepalive:
    return Keepalive(stream_id=h.stream_id, ignore=h.ignore, data=b.rest())  # M: "never present"


def read_request_response(h: Header, b: Body) -> RequestResponse:
    metadata = _metadata(h, b)
    return RequestResponse(stream_id=h.stream_id, ignore=h.ignore, metadata=metadata, data=b.rest())


def read_request_fnf(h: Header, b: Body) -> RequestFnf:
    metadata = _metadata(h, b)
    return RequestFnf(stream_id=h.stream_id, ignore=h.ignore, metadata=metadata, data=b.rest())


def read_request_stream(h: Header, b: Body) -> RequestStream:
    n = b.uint(8, "initial request N")
    metadata = _metadata(h, b)
    return RequestStream(stream_id=h.stream_id, ignore=h.ignore, initial_request_n=n, metadata=metadata, data=b.rest())


def read_request_sub(h: Header, b: Body) -> RequestSubscription:
    n = b.uint(8, "initial request N")
    metadata = _metadata(h, b)
    return RequestSubscription(
        stream_id=h.stream_id, ignore=h.ignore, initial_request_n=n, metadata=metadata, data=b.rest()
    )


def read_request_n(h: Header, b: Body) -> RequestN:
    n = b.uint(8, "request N")
    return RequestN(stream_id=h.stream_id, ignore=h.ignore, request_n=n, metadata=_metadata_only(h, b))


def read_cancel(h: Header, b: Body) -> Cancel:
    return Cancel(stream_id=h.stream_id, ignore=h.ignore, metadata=_metadata_only(h, b))


def read_response(h: Header, b: Body) -> Payload:
    metadata = _metadata(h, b)
    data = b.rest()
    complete = bool(h.flags & FLAG_C)
    # A COMPLETE with nothing in it is onComplete alone; anything else carries an element.
    has_next = not (complete and metadata is None and not data)
    return Payload(
        stream_id=h.stream_id,
        ignore=h.ignore,
        follows=bool(h.flags & FLAG_F),
        complete=complete,
        next=has_next,
        metadata=metadata,
        data=data,
    )


def read_error(h: Header, b: Body) -> Error:
    metadata = _metadata(h, b)
    return Error(
        stream_id=h.stream_id,
        ignore=h.ignore,
        error_code=draft_error_code(h.stream_id),
        metadata=metadata,
        data=b.rest(),
    )


def read_metadata_push(h: Header, b: Body) -> MetadataPush:
    if not h.metadata:
        raise violation("RS-FRAME-9", "METADATA_PUSH without the M flag", b.offset)
    metadata = _metadata_only(h, b)
    return MetadataPush(stream_id=h.stream_id, ignore=h.ignore, metadata=metadata or b"")


def read_ext(h: Header, b: Body) -> Ext:
    # Seed 001's EXT diagram draws no Stream ID row; the header (with it) is kept, as DECISIONS.md explains.
    extended = b.uint(4, "extended type")
    return Ext(stream_id=h.stream_id, ignore=h.ignore, has_metadata=h.metadata, extended_type=extended, body=b.rest())


READERS: dict[int, Reader] = {
    0x0001: read_setup,
    0x0002: read_setup_error,
    0x0003: read_lease,
    0x0004: read_keepalive,
    0x0011: read_request_response,
    0x0012: read_request_fnf,
    0x0013: read_request_stream,
    0x0014: read_request_sub,
    0x0015: read_request_n,
    0x0016: read_cancel,
    0x0020: read_response,
    0x0021: read_error,
    0x0031: read_metadata_push,
    0xFFFF: read_ext,
}

# -- writers ------------------------------------------------------------------------------


def _with_metadata(metadata: bytes | None) -> tuple[int, list[bytes]]:
    if metadata is None:
        return 0, []
    raw = need_bytes(metadata, "metadata")
    return FLAG_M, [b"\x00", need_unsigned(len(raw) + METADATA_HEADER, 24, "metadata length"), raw]


def _no_follows(frame: RequestResponse | RequestFnf | RequestStream) -> None:
    if frame.follows:
        raise ValueError("the draft has no F flag on requests (only RESPONSE fragments)")


def write_setup(f: Setup) -> tuple[int, int, list[bytes]]:
    if (f.major_version, f.minor_version) != (VERSION, 0):
        raise ValueError(f"version {f.major_version}.{f.minor_version}: the draft header carries version 0 only")
    if f.resume_token is not None:
        raise ValueError("the draft SETUP has no resume token")
    mflag, meta = _with_metadata(f.metadata)
    parts = [need_unsigned(f.keepalive_interval, 32, "keepalive interval"), need_unsigned(f.max_lifetime, 32, "max lifetime")]
    for field, mime in (("metadata MIME type", f.metadata_mime), ("data MIME type", f.data_mime)):
        raw = need_bytes(mime, field)
        parts += [need_unsigned(len(raw), 8, field + " length"), raw]
    flags = mflag | (FLAG_L if f.lease else 0) | (FLAG_S if f.strict else 0)
    return 0x0001, flags, parts + meta + [need_bytes(f.data, "data")]


def write_setup_error(f: SetupError) -> tuple[int, int, list[bytes]]:
    mflag, meta = _with_metadata(f.metadata)
    return 0x0002, mflag, [need_unsigned(f.error_code, 32, "error code"), *meta, need_bytes(f.data, "data")]


def write_lease(f: Lease) -> tuple[int, int, list[bytes]]:
    mflag, meta = _with_metadata(f.metadata)
    parts = [need_unsigned(f.ttl, 64, "time-to-live"), need_unsigned(f.number_of_requests, 64, "number of requests")]
    return 0x0003, mflag, parts + meta


def write_keepalive(f: Keepalive) -> tuple[int, int, list[bytes]]:
    if f.respond or f.last_received_position:
        raise ValueError("the draft KEEPALIVE has no R flag and no position")
    return 0x0004, 0, [need_bytes(f.data, "data")]


def write_request_response(f: RequestResponse) -> tuple[int, int, list[bytes]]:
    _no_follows(f)
    mflag, meta = _with_metadata(f.metadata)
    return 0x0011, mflag, [*meta, need_bytes(f.data, "data")]


def write_request_fnf(f: RequestFnf) -> tuple[int, int, list[bytes]]:
    _no_follows(f)
    mflag, meta = _with_metadata(f.metadata)
    return 0x0012, mflag, [*meta, need_bytes(f.data, "data")]


def write_request_stream(f: RequestStream) -> tuple[int, int, list[bytes]]:
    _no_follows(f)
    mflag, meta = _with_metadata(f.metadata)
    return 0x0013, mflag, [need_unsigned(f.initial_request_n, 64, "initial request N"), *meta, need_bytes(f.data, "data")]


def write_request_sub(f: RequestSubscription) -> tuple[int, int, list[bytes]]:
    mflag, meta = _with_metadata(f.metadata)
    return 0x0014, mflag, [need_unsigned(f.initial_request_n, 64, "initial request N"), *meta, need_bytes(f.data, "data")]


def write_request_n(f: RequestN) -> tuple[int, int, list[bytes]]:
    mflag, meta = _with_metadata(f.metadata)
    return 0x0015, mflag, [need_unsigned(f.request_n, 64, "request N"), *meta]


def write_cancel(f: Cancel) -> tuple[int, int, list[bytes]]:
    mflag, meta = _with_metadata(f.metadata)
    return 0x0016, mflag, meta


def write_response(f: Payload) -> tuple[int, int, list[bytes]]:
    empty = f.metadata is None and not f.data
    if f.next == (f.complete and empty):
        # RESPONSE has no N flag: "next" is implied by content, so only these forms exist.
        raise ValueError(
            "a draft RESPONSE is an element (next), or a COMPLETE with no data and no metadata; "
            f"next={f.next}, complete={f.complete}, empty={empty} has no form"
        )
    mflag, meta = _with_metadata(f.metadata)
    flags = mflag | (FLAG_F if f.follows else 0) | (FLAG_C if f.complete else 0)
    return 0x0020, flags, [*meta, need_bytes(f.data, "data")]


def write_error(f: Error) -> tuple[int, int, list[bytes]]:
    if f.error_code != draft_error_code(f.stream_id):
        raise ValueError(
            f"the draft ERROR carries no code; only 0x{draft_error_code(f.stream_id):x} fits stream {f.stream_id}"
        )
    mflag, meta = _with_metadata(f.metadata)
    return 0x0021, mflag, [*meta, need_bytes(f.data, "data")]


def write_metadata_push(f: MetadataPush) -> tuple[int, int, list[bytes]]:
    _mflag, meta = _with_metadata(f.metadata)
    return 0x0031, FLAG_M, meta


def write_ext(f: Ext) -> tuple[int, int, list[bytes]]:
    parts = [need_unsigned(f.extended_type, 32, "extended type"), need_bytes(f.body, "body")]
    return 0xFFFF, FLAG_M if f.has_metadata else 0, parts


WRITERS: dict[type, Writer] = {
    Setup: write_setup,
    SetupError: write_setup_error,
    Lease: write_lease,
    Keepalive: write_keepalive,
    RequestResponse: write_request_response,
    RequestFnf: write_request_fnf,
    RequestStream: write_request_stream,
    RequestSubscription: write_request_sub,
    RequestN: write_request_n,
    Cancel: write_cancel,
    Payload: write_response,
    Error: write_error,
    MetadataPush: write_metadata_push,
    Ext: write_ext,
}


class ReactiveSocketDraft(Profile):
    name = "reactivesocket-draft"
    prefix_size = 4
    header_size = 12
    ignore_flag = FLAG_I
    id_last_byte = 11
    readers = READERS
    writers = WRITERS
    type_names = TYPE_NAMES

    def parse_header(self, raw: bytes, offset: int | None) -> Header:
        if raw[0] != VERSION:
            raise violation("RS-DRAFT-1", f"header version {raw[0]}, not {VERSION}", offset)
        flags = raw[1]
        frame_type = (raw[2] << 8) | raw[3]
        stream_id = int.from_bytes(raw[4:12], "big")
        return Header(frame_type, stream_id, bool(flags & FLAG_I), bool(flags & FLAG_M), flags, 12)

    def fast_decode(self, buf: bytes | bytearray, start: int, stop: int) -> Frame | None:
        flags = buf[start + 1]
        if buf[start] != VERSION or flags & (FLAG_I | FLAG_M) or buf[start + 2]:
            return None  # another version, an ignorable frame, metadata, a type above 0xFF: the general path
        kind = buf[start + 3]
        if kind == 0x20:
            # Built field by field, as 1.0's fast path does: half the cost of the frozen dataclass's __init__.
            data = bytes(buf[start + 12 : stop])
            complete = bool(flags & FLAG_C)
            frame = _new(Payload)
            _set_stream(frame, int.from_bytes(buf[start + 4 : start + 12], "big"))
            _set_ignore(frame, False)
            _set_follows(frame, bool(flags & FLAG_F))
            _set_complete(frame, complete)
            _set_next(frame, not (complete and not data))
            _set_metadata(frame, None)
            _set_data(frame, data)
            return frame
        if kind == 0x15 and stop - start == 20:
            return RequestN(stream_id=int.from_bytes(buf[start + 4 : start + 12], "big"),
                            request_n=int.from_bytes(buf[start + 12 : stop], "big"))
        if kind == 0x04:  # KEEPALIVE, as 1.0's fast path takes it
            keepalive = _new(Keepalive)
            _set_ka_stream(keepalive, int.from_bytes(buf[start + 4 : start + 12], "big"))
            _set_ka_ignore(keepalive, False)
            _set_ka_respond(keepalive, False)
            _set_ka_position(keepalive, 0)
            _set_ka_data(keepalive, bytes(buf[start + 12 : stop]))
            return keepalive
        return None

    def plain_next(self, buf: bytes, start: int) -> bool:
        # Version 0, no flag (so no C: every such RESPONSE is an element), type RESPONSE.
        return buf[start : start + 4] == b"\x00\x00\x00\x20"

    def build_header(self, frame_type: int, flags: int, stream_id: int) -> bytes:
        return bytes((VERSION, flags)) + frame_type.to_bytes(2, "big") + need_unsigned(stream_id, 64, "stream id")

    def frame_size(self, prefix: bytes | bytearray, offset: int | None) -> int:
        length = int.from_bytes(prefix, "big")
        if length >> 31:
            raise violation("RS-FRAME-3", "reserved R bit before the frame length is set", offset)
        if length < self.prefix_size + self.header_size:
            raise violation(
                "RS-FRAME-1",
                f"frame length {length} is shorter than the {self.prefix_size + self.header_size}-byte header",
                offset,
            )
        return length - self.prefix_size

    def build_prefix(self, frame_size: int) -> bytes:
        return need_unsigned(frame_size + self.prefix_size, 31, "frame length")
