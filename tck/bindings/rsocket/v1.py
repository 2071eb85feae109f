"""The ``rsocket-1.0`` wire profile: Protocol.md's framing, as the real implementations speak it.

Header (6 bytes, big endian): a reserved 0 bit and a 31-bit stream id, then a
16-bit word of 6-bit frame type and 10 flag bits, I (0x200) and M (0x100)
first.  The frame-specific flags follow from 0x80 down: F (or SETUP's resume R,
or KEEPALIVE's respond R), then C (or SETUP's L), then N.  On TCP each frame is
prefixed with a 24-bit length that excludes the prefix.

Metadata: a frame carrying both metadata and data has, when M is set, a 24-bit
metadata length before the metadata, and the data is the rest of the frame.
A frame carrying only metadata (LEASE, METADATA_PUSH) has no metadata length:
the metadata is the rest of the frame.  A metadata length past the end is
RS-FRAME-5, or an ignored frame when the I flag is set (Protocol.md, Metadata
Optional Header).  Flag bits a frame does not name are not interpreted.
"""

from __future__ import annotations

from .codec import Body, Header, IgnoreSignal, Profile, Reader, Writer, need_bytes, need_unsigned, violation
from .frames import (
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
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    Resume,
    ResumeOk,
    Setup,
)

FLAG_I, FLAG_M = 0x200, 0x100
FLAG_F = FLAG_R = 0x80  # F on requests/PAYLOAD; resume R on SETUP; respond R on KEEPALIVE
FLAG_C = FLAG_L = 0x40  # C on REQUEST_CHANNEL/PAYLOAD; lease L on SETUP
FLAG_N = 0x20

TYPE_NAMES: dict[int, str] = {
    0x01: "SETUP",
    0x02: "LEASE",
    0x03: "KEEPALIVE",
    0x04: "REQUEST_RESPONSE",
    0x05: "REQUEST_FNF",
    0x06: "REQUEST_STREAM",
    0x07: "REQUEST_CHANNEL",
    0x08: "REQUEST_N",
    0x09: "CANCEL",
    0x0A: "PAYLOAD",
    0x0B: "ERROR",
    0x0C: "METADATA_PUSH",
    0x0D: "RESUME",
    0x0E: "RESUME_OK",
    0x3F: "EXT",
}

_new = object.__new__
_set_stream, _set_ignore, _set_follows, _set_complete, _set_next, _set_metadata, _set_data = PAYLOAD_SETTERS
_set_ka_stream, _set_ka_ignore, _set_ka_respond, _set_ka_position, _set_ka_data = KEEPALIVE_SETTERS

# -- readers: one per frame type --------------------------------------------------------


def _metadata_and_data(h: Header, b: Body) -> tuple[bytes | None, bytes]:
    if not h.metadata:
        return None, b.rest()
    if b.remaining() < 3:
        problem = f"frame ends inside the metadata length ({b.remaining()} of 3 bytes)"
    else:
        size = b.uint(3, "metadata length")
        if size <= b.remaining():
            return b.take(size, "metadata"), b.rest()
        problem = f"metadata length {size} runs past the end of the frame ({b.remaining()} bytes left)"
    if h.ignore:
        raise IgnoreSignal("RS-IGNORE-2", problem)
    raise violation("RS-FRAME-5", f"{b.name}: {problem}", b.offset)


def _only_metadata(h: Header, b: Body) -> bytes | None:
    if h.metadata:
        return b.rest()
    b.done()
    return None


def read_setup(h: Header, b: Body) -> Setup:
    major = b.uint(2, "major version")
    minor = b.uint(2, "minor version")
    keepalive = b.reserved_high(4, "time between KEEPALIVE frames")
    lifetime = b.reserved_high(4, "max lifetime")
    token = b.take(b.uint(2, "resume token length"), "resume token") if h.flags & FLAG_R else None
    metadata_mime = b.take(b.uint(1, "metadata MIME length"), "metadata MIME type")
    data_mime = b.take(b.uint(1, "data MIME length"), "data MIME type")
    metadata, data = _metadata_and_data(h, b)
    return Setup(
        stream_id=h.stream_id,
        ignore=h.ignore,
        major_version=major,
        minor_version=minor,
        keepalive_interval=keepalive,
        max_lifetime=lifetime,
        resume_token=token,
        lease=bool(h.flags & FLAG_L),
        metadata_mime=metadata_mime,
        data_mime=data_mime,
        metadata=metadata,
        data=data,
    )


def read_lease(h: Header, b: Body) -> Lease:
    ttl = b.reserved_high(4, "time-to-live")
    number = b.reserved_high(4, "number of requests")
    return Lease(stream_id=h.stream_id, ignore=h.ignore, ttl=ttl, number_of_requests=number, metadata=_only_metadata(h, b))


def read_keepalive(h: Header, b: Body) -> Keepalive:
    position = b.reserved_high(8, "last received position")
    return Keepalive(
        stream_id=h.stream_id,
        ignore=h.ignore,
        respond=bool(h.flags & FLAG_R),
        last_received_position=position,
        data=b.rest(),
    )


def read_request_response(h: Header, b: Body) -> RequestResponse:
    metadata, data = _metadata_and_data(h, b)
    return RequestResponse(
        stream_id=h.stream_id, ignore=h.ignore, follows=bool(h.flags & FLAG_F), metadata=metadata, data=data
    )


def read_request_fnf(h: Header, b: Body) -> RequestFnf:
    metadata, data = _metadata_and_data(h, b)
    return RequestFnf(stream_id=h.stream_id, ignore=h.ignore, follows=bool(h.flags & FLAG_F), metadata=metadata, data=data)


def read_request_stream(h: Header, b: Body) -> RequestStream:
    n = b.reserved_high(4, "initial request N")
    metadata, data = _metadata_and_data(h, b)
    return RequestStream(
        stream_id=h.stream_id,
        ignore=h.ignore,
        follows=bool(h.flags & FLAG_F),
        initial_request_n=n,
        metadata=metadata,
        data=data,
    )


def read_request_channel(h: Header, b: Body) -> RequestChannel:
    n = b.reserved_high(4, "initial request N")
    metadata, data = _metadata_and_data(h, b)
    return RequestChannel(
        stream_id=h.stream_id,
        ignore=h.ignore,
        follows=bool(h.flags & FLAG_F),
        complete=bool(h.flags & FLAG_C),
        initial_request_n=n,
        metadata=metadata,
        data=data,
    )


def read_request_n(h: Header, b: Body) -> RequestN:
    n = b.reserved_high(4, "request N")
    b.done()
    return RequestN(stream_id=h.stream_id, ignore=h.ignore, request_n=n)


def read_cancel(h: Header, b: Body) -> Cancel:
    b.done()
    return Cancel(stream_id=h.stream_id, ignore=h.ignore)


def read_payload(h: Header, b: Body) -> Payload:
    metadata, data = _metadata_and_data(h, b)
    flags = h.flags
    return Payload(
        stream_id=h.stream_id,
        ignore=h.ignore,
        follows=bool(flags & FLAG_F),
        complete=bool(flags & FLAG_C),
        next=bool(flags & FLAG_N),
        metadata=metadata,
        data=data,
    )


def read_error(h: Header, b: Body) -> Error:
    code = b.uint(4, "error code")
    return Error(stream_id=h.stream_id, ignore=h.ignore, error_code=code, data=b.rest())


def read_metadata_push(h: Header, b: Body) -> MetadataPush:
    if not h.metadata:
        raise violation("RS-FRAME-9", "METADATA_PUSH without the M flag", b.offset)
    return MetadataPush(stream_id=h.stream_id, ignore=h.ignore, metadata=b.rest())


def read_resume(h: Header, b: Body) -> Resume:
    major = b.uint(2, "major version")
    minor = b.uint(2, "minor version")
    token = b.take(b.uint(2, "resume token length"), "resume token")
    server_position = b.reserved_high(8, "last received server position")
    client_position = b.reserved_high(8, "first available client position")
    b.done()
    return Resume(
        stream_id=h.stream_id,
        ignore=h.ignore,
        major_version=major,
        minor_version=minor,
        resume_token=token,
        last_received_server_position=server_position,
        first_available_client_position=client_position,
    )


def read_resume_ok(h: Header, b: Body) -> ResumeOk:
    position = b.reserved_high(8, "last received client position")
    b.done()
    return ResumeOk(stream_id=h.stream_id, ignore=h.ignore, last_received_client_position=position)


def read_ext(h: Header, b: Body) -> Ext:
    extended = b.reserved_high(4, "extended type")
    return Ext(stream_id=h.stream_id, ignore=h.ignore, has_metadata=h.metadata, extended_type=extended, body=b.rest())


READERS: dict[int, Reader] = {
    0x01: read_setup,
    0x02: read_lease,
    0x03: read_keepalive,
    0x04: read_request_response,
    0x05: read_request_fnf,
    0x06: read_request_stream,
    0x07: read_request_channel,
    0x08: read_request_n,
    0x09: read_cancel,
    0x0A: read_payload,
    0x0B: read_error,
    0x0C: read_metadata_push,
    0x0D: read_resume,
    0x0E: read_resume_ok,
    0x3F: read_ext,
}

# -- writers: one per frame class -------------------------------------------------------


def _with_metadata(metadata: bytes | None, data: bytes) -> tuple[int, list[bytes]]:
    if metadata is None:
        return 0, [need_bytes(data, "data")]
    raw = need_bytes(metadata, "metadata")
    return FLAG_M, [need_unsigned(len(raw), 24, "metadata length"), raw, need_bytes(data, "data")]


def _no_metadata(frame: RequestN | Cancel | Error) -> None:
    if frame.metadata is not None:
        raise ValueError("metadata on this frame exists only in the reactivesocket-draft profile")


def write_setup(f: Setup) -> tuple[int, int, list[bytes]]:
    if f.strict:
        raise ValueError("the S (strict) flag exists only in the reactivesocket-draft profile")
    flags = FLAG_L if f.lease else 0
    parts = [
        need_unsigned(f.major_version, 16, "major version"),
        need_unsigned(f.minor_version, 16, "minor version"),
        need_unsigned(f.keepalive_interval, 32, "keepalive interval"),
        need_unsigned(f.max_lifetime, 32, "max lifetime"),
    ]
    if f.resume_token is not None:
        flags |= FLAG_R
        token = need_bytes(f.resume_token, "resume token")
        parts += [need_unsigned(len(token), 16, "resume token length"), token]
    for field, mime in (("metadata MIME type", f.metadata_mime), ("data MIME type", f.data_mime)):
        raw = need_bytes(mime, field)
        parts += [need_unsigned(len(raw), 8, field + " length"), raw]
    mflag, rest = _with_metadata(f.metadata, f.data)
    return 0x01, flags | mflag, parts + rest


def write_lease(f: Lease) -> tuple[int, int, list[bytes]]:
    parts = [need_unsigned(f.ttl, 32, "time-to-live"), need_unsigned(f.number_of_requests, 32, "number of requests")]
    if f.metadata is None:
        return 0x02, 0, parts
    return 0x02, FLAG_M, parts + [need_bytes(f.metadata, "metadata")]


def write_keepalive(f: Keepalive) -> tuple[int, int, list[bytes]]:
    parts = [need_unsigned(f.last_received_position, 64, "last received position"), need_bytes(f.data, "data")]
    return 0x03, FLAG_R if f.respond else 0, parts


def write_request_response(f: RequestResponse) -> tuple[int, int, list[bytes]]:
    mflag, parts = _with_metadata(f.metadata, f.data)
    return 0x04, mflag | (FLAG_F if f.follows else 0), parts


def write_request_fnf(f: RequestFnf) -> tuple[int, int, list[bytes]]:
    mflag, parts = _with_metadata(f.metadata, f.data)
    return 0x05, mflag | (FLAG_F if f.follows else 0), parts


def write_request_stream(f: RequestStream) -> tuple[int, int, list[bytes]]:
    mflag, parts = _with_metadata(f.metadata, f.data)
    n = need_unsigned(f.initial_request_n, 32, "initial request N")
    return 0x06, mflag | (FLAG_F if f.follows else 0), [n, *parts]


def write_request_channel(f: RequestChannel) -> tuple[int, int, list[bytes]]:
    mflag, parts = _with_metadata(f.metadata, f.data)
    n = need_unsigned(f.initial_request_n, 32, "initial request N")
    return 0x07, mflag | (FLAG_F if f.follows else 0) | (FLAG_C if f.complete else 0), [n, *parts]


def write_request_n(f: RequestN) -> tuple[int, int, list[bytes]]:
    _no_metadata(f)
    return 0x08, 0, [need_unsigned(f.request_n, 32, "request N")]


def write_cancel(f: Cancel) -> tuple[int, int, list[bytes]]:
    _no_metadata(f)
    return 0x09, 0, []


def write_payload(f: Payload) -> tuple[int, int, list[bytes]]:
    mflag, parts = _with_metadata(f.metadata, f.data)
    flags = mflag | (FLAG_F if f.follows else 0) | (FLAG_C if f.complete else 0) | (FLAG_N if f.next else 0)
    return 0x0A, flags, parts


def write_error(f: Error) -> tuple[int, int, list[bytes]]:
    _no_metadata(f)
    return 0x0B, 0, [need_unsigned(f.error_code, 32, "error code"), need_bytes(f.data, "data")]


def write_metadata_push(f: MetadataPush) -> tuple[int, int, list[bytes]]:
    return 0x0C, FLAG_M, [need_bytes(f.metadata, "metadata")]


def write_resume(f: Resume) -> tuple[int, int, list[bytes]]:
    token = need_bytes(f.resume_token, "resume token")
    return 0x0D, 0, [
        need_unsigned(f.major_version, 16, "major version"),
        need_unsigned(f.minor_version, 16, "minor version"),
        need_unsigned(len(token), 16, "resume token length"),
        token,
        need_unsigned(f.last_received_server_position, 64, "last received server position"),
        need_unsigned(f.first_available_client_position, 64, "first available client position"),
    ]


def write_resume_ok(f: ResumeOk) -> tuple[int, int, list[bytes]]:
    return 0x0E, 0, [need_unsigned(f.last_received_client_position, 64, "last received client position")]


def write_ext(f: Ext) -> tuple[int, int, list[bytes]]:
    parts = [need_unsigned(f.extended_type, 32, "extended type"), need_bytes(f.body, "body")]
    return 0x3F, FLAG_M if f.has_metadata else 0, parts


WRITERS: dict[type, Writer] = {
    Setup: write_setup,
    Lease: write_lease,
    Keepalive: write_keepalive,
    RequestResponse: write_request_response,
    RequestFnf: write_request_fnf,
    RequestStream: write_request_stream,
    RequestChannel: write_request_channel,
    RequestN: write_request_n,
    Cancel: write_cancel,
    Payload: write_payload,
    Error: write_error,
    MetadataPush: write_metadata_push,
    Resume: write_resume,
    ResumeOk: write_resume_ok,
    Ext: write_ext,
}


class RSocket10(Profile):
    name = "rsocket-1.0"
    prefix_size = 3
    header_size = 6
    ignore_flag = FLAG_I
    id_last_byte = 3
    readers = READERS
    writers = WRITERS
    type_names = TYPE_NAMES

    def plain_next(self, buf: bytes, start: int) -> bool:
        # Reserved bit clear, type PAYLOAD (0x0A << 10) with the N flag (0x20) and no other flag.
        return buf[start] < 0x80 and buf[start + 4] == 0x28 and buf[start + 5] == 0x20

    def fast_decode(self, buf: bytes | bytearray, start: int, stop: int) -> Frame | None:
        word = (buf[start + 4] << 8) | buf[start + 5]
        if buf[start] & 0x80 or word & (FLAG_I | FLAG_M):
            return None  # a reserved bit, an ignorable frame or metadata: the general path
        kind = word >> 10
        if kind == 0x0A:
            # Built field by field: half the cost of the frozen dataclass's __init__.
            frame = _new(Payload)
            _set_stream(frame, int.from_bytes(buf[start : start + 4], "big"))
            _set_ignore(frame, False)
            _set_follows(frame, bool(word & FLAG_F))
            _set_complete(frame, bool(word & FLAG_C))
            _set_next(frame, bool(word & FLAG_N))
            _set_metadata(frame, None)
            _set_data(frame, bytes(buf[start + 6 : stop]))
            return frame
        if kind == 0x08 and stop - start == 10 and not buf[start + 6] & 0x80:
            return RequestN(
                stream_id=int.from_bytes(buf[start : start + 4], "big"),
                request_n=int.from_bytes(buf[start + 6 : stop], "big"),
            )
        if kind == 0x03 and stop - start >= 14 and not buf[start + 6] & 0x80:
            # A keepalive storm is a flood of these: the report's re-judgement and statistics decode each one.
            keepalive = _new(Keepalive)
            _set_ka_stream(keepalive, int.from_bytes(buf[start : start + 4], "big"))
            _set_ka_ignore(keepalive, False)
            _set_ka_respond(keepalive, bool(word & FLAG_R))
            _set_ka_position(keepalive, int.from_bytes(buf[start + 6 : start + 14], "big"))
            _set_ka_data(keepalive, bytes(buf[start + 14 : stop]))
            return keepalive
        return None

    def parse_header(self, raw: bytes, offset: int | None) -> Header:
        stream_id = int.from_bytes(raw[0:4], "big")
        if stream_id >> 31:
            raise violation("RS-FRAME-3", "reserved bit before the stream id is set", offset)
        word = (raw[4] << 8) | raw[5]
        flags = word & 0x3FF
        return Header(word >> 10, stream_id, bool(flags & FLAG_I), bool(flags & FLAG_M), flags, 6)

    def build_header(self, frame_type: int, flags: int, stream_id: int) -> bytes:
        return need_unsigned(stream_id, 32, "stream id") + ((frame_type << 10) | flags).to_bytes(2, "big")

    def frame_size(self, prefix: bytes | bytearray, offset: int | None) -> int:
        return int.from_bytes(prefix, "big")

    def build_prefix(self, frame_size: int) -> bytes:
        return need_unsigned(frame_size, 24, "frame length")
