"""RSocket frames: one frozen, keyword-only dataclass per frame type of Protocol.md (RSocket 1.0).

Frames are plain values, as in :mod:`rsio_tck.wire.frames`: they check nothing
on construction, so a test or a fault can build any frame, legal or not.  The
codecs (``rsocket-1.0`` and ``reactivesocket-draft``) check what their wire can
carry; protocol rules (stream id 0 for SETUP, request N > 0, ...) are judged
above the codec.

Both wire profiles decode into these classes, so that everything above the
codec sees one vocabulary.  The draft (seed 001) has three frame types with no
1.0 equivalent (SETUP_ERROR, REQUEST_SUB; its RESPONSE maps onto PAYLOAD) and a
few fields 1.0 lacks (metadata on REQUEST_N, CANCEL and ERROR; the SETUP S flag):
those are the classes ``SetupError`` and ``RequestSubscription`` and optional
fields defaulting to "absent".  DECISIONS.md records every mapping.

Flags: ``ignore`` is the I flag; the M flag is ``metadata is not None`` (an
empty ``b""`` metadata is M set with zero bytes); F, C, N, R and L are named
booleans.  Flag bits the layout does not name are not kept: the spec says a
receiver ignores them.

A decoder returns ``IgnoredFrame`` (not an exception) for a frame the spec says
to ignore: an unknown type with the I flag set, or (draft) a frame whose
metadata length does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, Union

# Error codes (Protocol.md, ERROR frame).
RESERVED_ERROR = 0x00000000
INVALID_SETUP = 0x00000001
UNSUPPORTED_SETUP = 0x00000002
REJECTED_SETUP = 0x00000003
REJECTED_RESUME = 0x00000004
CONNECTION_ERROR = 0x00000101
CONNECTION_CLOSE = 0x00000102
APPLICATION_ERROR = 0x00000201
REJECTED = 0x00000202
CANCELED = 0x00000203
INVALID = 0x00000204
RESERVED_EXTENSION_ERROR = 0xFFFFFFFF

ERROR_CODE_NAMES: dict[int, str] = {
    RESERVED_ERROR: "RESERVED",
    INVALID_SETUP: "INVALID_SETUP",
    UNSUPPORTED_SETUP: "UNSUPPORTED_SETUP",
    REJECTED_SETUP: "REJECTED_SETUP",
    REJECTED_RESUME: "REJECTED_RESUME",
    CONNECTION_ERROR: "CONNECTION_ERROR",
    CONNECTION_CLOSE: "CONNECTION_CLOSE",
    APPLICATION_ERROR: "APPLICATION_ERROR",
    REJECTED: "REJECTED",
    CANCELED: "CANCELED",
    INVALID: "INVALID",
    RESERVED_EXTENSION_ERROR: "RESERVED_FOR_EXTENSION",
}

# SETUP_ERROR codes of the draft (seed 001); 1.0 folded them into ERROR with other values.
DRAFT_INVALID_SETUP = 0x0001
DRAFT_UNSUPPORTED_SETUP = 0x0010
DRAFT_REJECTED_SETUP = 0x0100

U31_MAX = 2**31 - 1  # the largest value of RSocket's 31-bit fields; the one copy of the number
STREAM_ID_MAX = U31_MAX  # 1.0: a 31-bit stream id
REQUEST_N_MAX = U31_MAX  # 1.0: a 31-bit request N
POSITION_MAX = 2**63 - 1  # 1.0: 63-bit resume positions


@dataclass(frozen=True, slots=True, kw_only=True)
class Setup:
    wire_name: ClassVar[str] = "SETUP"
    stream_id: int = 0
    ignore: bool = False
    major_version: int = 1
    minor_version: int = 0
    keepalive_interval: int  # ms in 1.0, ns in the draft
    max_lifetime: int
    resume_token: bytes | None = None  # the R flag: present iff not None
    lease: bool = False  # the L flag
    strict: bool = False  # the draft's S flag; 1.0 has none
    metadata_mime: bytes
    data_mime: bytes
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class Lease:
    wire_name: ClassVar[str] = "LEASE"
    stream_id: int = 0
    ignore: bool = False
    ttl: int
    number_of_requests: int
    metadata: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Keepalive:
    wire_name: ClassVar[str] = "KEEPALIVE"
    stream_id: int = 0
    ignore: bool = False
    respond: bool = False  # the R flag; the draft has none
    last_received_position: int = 0  # the draft has none
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestResponse:
    wire_name: ClassVar[str] = "REQUEST_RESPONSE"
    stream_id: int
    ignore: bool = False
    follows: bool = False
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestFnf:
    wire_name: ClassVar[str] = "REQUEST_FNF"
    stream_id: int
    ignore: bool = False
    follows: bool = False
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestStream:
    wire_name: ClassVar[str] = "REQUEST_STREAM"
    stream_id: int
    ignore: bool = False
    follows: bool = False
    initial_request_n: int
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestChannel:
    wire_name: ClassVar[str] = "REQUEST_CHANNEL"
    stream_id: int
    ignore: bool = False
    follows: bool = False
    complete: bool = False
    initial_request_n: int
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestN:
    wire_name: ClassVar[str] = "REQUEST_N"
    stream_id: int
    ignore: bool = False
    request_n: int
    metadata: bytes | None = None  # the draft only


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancel:
    wire_name: ClassVar[str] = "CANCEL"
    stream_id: int
    ignore: bool = False
    metadata: bytes | None = None  # the draft only


@dataclass(frozen=True, slots=True, kw_only=True)
class Payload:
    wire_name: ClassVar[str] = "PAYLOAD"
    stream_id: int
    ignore: bool = False
    follows: bool = False
    complete: bool = False
    next: bool = False
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class Error:
    wire_name: ClassVar[str] = "ERROR"
    stream_id: int
    ignore: bool = False
    error_code: int
    data: bytes = b""  # SHOULD be UTF-8 text; kept as bytes, judged above the codec
    metadata: bytes | None = None  # the draft only


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataPush:
    wire_name: ClassVar[str] = "METADATA_PUSH"
    stream_id: int = 0
    ignore: bool = False
    metadata: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class Resume:
    wire_name: ClassVar[str] = "RESUME"
    stream_id: int = 0
    ignore: bool = False
    major_version: int = 1
    minor_version: int = 0
    resume_token: bytes
    last_received_server_position: int
    first_available_client_position: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeOk:
    wire_name: ClassVar[str] = "RESUME_OK"
    stream_id: int = 0
    ignore: bool = False
    last_received_client_position: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Ext:
    """An extension frame; what follows the extended type depends on it, so it stays raw."""

    wire_name: ClassVar[str] = "EXT"
    stream_id: int
    ignore: bool = False
    has_metadata: bool = False  # the M flag, whose layout the extension defines
    extended_type: int
    body: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class SetupError:
    """The draft's SETUP_ERROR (0x0002); 1.0 uses ERROR[INVALID_SETUP|...] on stream 0."""

    wire_name: ClassVar[str] = "SETUP_ERROR"
    stream_id: int = 0
    ignore: bool = False
    error_code: int
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestSubscription:
    """The draft's REQUEST_SUB (0x0014): a stream that never completes; gone in 1.0."""

    wire_name: ClassVar[str] = "REQUEST_SUB"
    stream_id: int
    ignore: bool = False
    initial_request_n: int
    metadata: bytes | None = None
    data: bytes = b""


@dataclass(frozen=True, slots=True, kw_only=True)
class IgnoredFrame:
    """A frame the receiver must ignore, with the rule that says so; ``raw`` is the frame without length prefix."""

    wire_name: ClassVar[str] = "(ignored)"
    frame_type: int
    stream_id: int
    rule: str
    reason: str
    raw: bytes
    type_name: str = ""  # the frame type's wire name, when the type is known (an invalid metadata length)


Frame = Union[
    Setup,
    Lease,
    Keepalive,
    RequestResponse,
    RequestFnf,
    RequestStream,
    RequestChannel,
    RequestN,
    Cancel,
    Payload,
    Error,
    MetadataPush,
    Resume,
    ResumeOk,
    Ext,
    SetupError,
    RequestSubscription,
]

Decoded = Union[Frame, IgnoredFrame]

# The frame types of Protocol.md, in its table order.
FRAME_TYPES: tuple[type[Frame], ...] = (
    Setup,
    Lease,
    Keepalive,
    RequestResponse,
    RequestFnf,
    RequestStream,
    RequestChannel,
    RequestN,
    Cancel,
    Payload,
    Error,
    MetadataPush,
    Resume,
    ResumeOk,
    Ext,
)
DRAFT_ONLY_TYPES: tuple[type[Frame], ...] = (SetupError, RequestSubscription)

# The frame types that may be fragmented (Protocol.md, Fragmentation And Reassembly).
FRAGMENTABLE: tuple[type[Frame], ...] = (RequestResponse, RequestFnf, RequestStream, RequestChannel, Payload)


# The slot setters of the hot frames, for the decoders' fast paths (``Profile.fast_decode``), which build them slot
# by slot (``object.__new__``, then each setter): half the cost of the frozen dataclass's ``__init__``.
PAYLOAD_SETTERS = tuple(getattr(Payload, name).__set__
                        for name in ("stream_id", "ignore", "follows", "complete", "next", "metadata", "data"))
KEEPALIVE_SETTERS = tuple(getattr(Keepalive, name).__set__
                          for name in ("stream_id", "ignore", "respond", "last_received_position", "data"))


def describe(frame: Decoded, max_bytes: int = 16) -> str:
    """A one-line rendering: ``PAYLOAD(stream_id=1, next=True, data=6869)``; defaults are left out."""
    parts = []
    for spec in fields(frame):
        value = getattr(frame, spec.name)
        if spec.default is value or (spec.default == value and type(spec.default) is type(value)):
            continue
        if isinstance(value, bytes):
            shown = value[:max_bytes].hex()
            if len(value) > max_bytes:
                shown += f"...({len(value)} bytes)"
            parts.append(f"{spec.name}={shown or '(empty)'}")
        elif spec.name == "error_code":
            parts.append(f"error_code={ERROR_CODE_NAMES.get(value, hex(value))}")
        else:
            parts.append(f"{spec.name}={value!r}")
    return f"{frame.wire_name}({', '.join(parts)})"
