"""RS-IO frames: one frozen, keyword-only dataclass per message of rsio-v0 section 2.

Frames are plain values: they carry no codec and check nothing on construction,
so a test (or a deliberate fault) can build any frame, legal or not.  The codecs
check what the wire allows, the semantics layer checks what the protocol allows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import ClassVar, Union

from ....semantics.demand import UNBOUNDED

ID_MAX = UNBOUNDED  # largest legal Id (2^63-1), and the saturated ("unbounded") demand


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientHello:
    code: ClassVar[int] = 0x01
    wire_name: ClassVar[str] = "clientHello"
    version: int
    extensions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerHello:
    code: ClassVar[int] = 0x02
    wire_name: ClassVar[str] = "serverHello"
    version: int
    extensions: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Goodbye:
    code: ClassVar[int] = 0x03
    wire_name: ClassVar[str] = "goodbye"
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Subscribe:
    code: ClassVar[int] = 0x04
    wire_name: ClassVar[str] = "subscribe"
    publisher: str
    subscriber: int
    initial_demand: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    code: ClassVar[int] = 0x05
    wire_name: ClassVar[str] = "request"
    subscriber: int
    demand: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Cancel:
    code: ClassVar[int] = 0x06
    wire_name: ClassVar[str] = "cancel"
    subscriber: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OnSubscribe:
    code: ClassVar[int] = 0x07
    wire_name: ClassVar[str] = "onSubscribe"
    subscriber: int
    element_size: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class OnNext:
    code: ClassVar[int] = 0x08
    wire_name: ClassVar[str] = "onNext"
    subscriber: int
    element: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class OnComplete:
    code: ClassVar[int] = 0x09
    wire_name: ClassVar[str] = "onComplete"
    subscriber: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OnError:
    code: ClassVar[int] = 0x0A
    wire_name: ClassVar[str] = "onError"
    subscriber: int
    error: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OnNextPacked:
    """``count`` fixed-size elements in one frame; ``data`` is ``count * elementSize`` raw bytes."""

    code: ClassVar[int] = 0x0B
    wire_name: ClassVar[str] = "onNextPacked"
    subscriber: int
    count: int
    data: bytes

    def elements(self) -> Iterator[bytes]:
        if self.count <= 0:
            return
        size, rest = divmod(len(self.data), self.count)
        if rest:
            raise ValueError("onNextPacked data is not count * elementSize bytes")
        for start in range(0, len(self.data), size):
            yield self.data[start : start + size]


@dataclass(frozen=True, slots=True, kw_only=True)
class OnNextPart:
    code: ClassVar[int] = 0x0C
    wire_name: ClassVar[str] = "onNextPart"
    subscriber: int
    element: int
    data: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class OnNextLastPart:
    code: ClassVar[int] = 0x0D
    wire_name: ClassVar[str] = "onNextLastPart"
    subscriber: int
    element: int
    data: bytes


Frame = Union[
    ClientHello,
    ServerHello,
    Goodbye,
    Subscribe,
    Request,
    Cancel,
    OnSubscribe,
    OnNext,
    OnComplete,
    OnError,
    OnNextPacked,
    OnNextPart,
    OnNextLastPart,
]

FRAME_TYPES: tuple[type[Frame], ...] = (
    ClientHello,
    ServerHello,
    Goodbye,
    Subscribe,
    Request,
    Cancel,
    OnSubscribe,
    OnNext,
    OnComplete,
    OnError,
    OnNextPacked,
    OnNextPart,
    OnNextLastPart,
)
FRAME_BY_CODE: dict[int, type[Frame]] = {cls.code: cls for cls in FRAME_TYPES}
FRAME_BY_NAME: dict[str, type[Frame]] = {cls.wire_name: cls for cls in FRAME_TYPES}

RESERVED_CODES = range(0x0E, 0x40)  # later core versions
EXTENSION_CODES = range(0x40, 0x80)  # extensions; never declared in version 0


# Each frame class's field names, read once: ``dataclasses.fields`` builds its tuple on every call, and every
# transcript line is described.
_FIELD_NAMES: dict[type, tuple[str, ...]] = {cls: tuple(spec.name for spec in fields(cls)) for cls in FRAME_TYPES}


def describe(frame: Frame, max_bytes: int = 16) -> str:
    """A one-line, human-readable rendering: ``onNext(subscriber=1, element=6869)``."""
    parts = []
    names = _FIELD_NAMES.get(type(frame)) or tuple(spec.name for spec in fields(frame))
    for name in names:
        value = getattr(frame, name)
        if isinstance(value, bytes):
            shown = value[:max_bytes].hex()
            if len(value) > max_bytes:
                shown += f"...({len(value)} bytes)"
            parts.append(f"{name}={shown or '(empty)'}")
        else:
            parts.append(f"{name}={value!r}")
    return f"{frame.wire_name}({', '.join(parts)})"
