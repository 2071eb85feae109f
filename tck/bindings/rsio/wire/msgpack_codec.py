"""The ``msgpack`` wire profile (rsio-v0 section 1, the default).

Theory of operation: a frame is one type byte followed by MessagePack objects,
so the whole stream (except the raw bytes of fixed-size elements) is a sequence
of MessagePack objects.  The decoder lets msgpack's C ``Unpacker`` do the
parsing and keeps, per frame, only the type code and the fields read so far, so
a frame cut at any byte resumes where it stopped.

Sizes are checked before allocation in two places: the Unpacker's own
``max_*_len`` limits reject a complete oversize object, and when an object is
incomplete at the end of a feed the decoder reads its header itself, so a bin32
header announcing 4 GiB is rejected as soon as its five bytes arrive instead of
buffering toward it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack

from ....errors import ProtocolViolation
from .codec import DecoderBase, ElementSizes, type_code_violation
from .frames import (
    ID_MAX,
    Cancel,
    ClientHello,
    Frame,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from .limits import DEFAULT_LIMITS, Limits
from .msgpack_runs import RunFinder

# Field kinds.  RAW is the fixed-size element of onNext; PACKED the count*size data.
ID, LONG, UINT, COUNT, STR, BIN, IDS = "Id", "Long", "int", "count", "String", "Bytes", "Array[Id]"

# Per type code: the frame class and its fields as (attribute, kind).
LAYOUT: dict[int, tuple[Any, tuple[tuple[str, str], ...]]] = {
    0x01: (ClientHello, (("version", UINT), ("extensions", IDS))),
    0x02: (ServerHello, (("version", UINT), ("extensions", IDS))),
    0x03: (Goodbye, (("reason", STR),)),
    0x04: (Subscribe, (("publisher", STR), ("subscriber", ID), ("initial_demand", LONG))),
    0x05: (Request, (("subscriber", ID), ("demand", LONG))),
    0x06: (Cancel, (("subscriber", ID),)),
    0x07: (OnSubscribe, (("subscriber", ID), ("element_size", UINT))),
    0x08: (OnNext, (("subscriber", ID), ("element", BIN))),
    0x09: (OnComplete, (("subscriber", ID),)),
    0x0A: (OnError, (("subscriber", ID), ("error", STR))),
    0x0B: (OnNextPacked, (("subscriber", ID), ("count", COUNT), ("data", BIN))),
    0x0C: (OnNextPart, (("subscriber", ID), ("element", ID), ("data", BIN))),
    0x0D: (OnNextLastPart, (("subscriber", ID), ("element", ID), ("data", BIN))),
}

_FEED_CHUNK = 1 << 20  # bounded slices keep the Unpacker's buffer within its limit


# -- encoding -----------------------------------------------------------------


class MsgpackEncoder:
    """Encodes frames; remembers fixed-size streams from the onSubscribe frames it encodes."""

    def __init__(self, limits: Limits | None = None) -> None:
        self._limits = limits or DEFAULT_LIMITS
        self._sizes = ElementSizes(self._limits.max_streams)
        self._pack: Callable[[Any], bytes] = msgpack.Packer(use_bin_type=True).pack

    def element_size(self, subscriber: int) -> int:
        return self._sizes.sizes.get(subscriber, 0)

    def encode(self, frame: Frame) -> bytes:
        pack = self._pack
        code = frame.code
        if isinstance(frame, OnNext) and frame.subscriber in self._sizes.sizes:
            # Fixed-size mode: the element is raw, with no MessagePack header.
            return b"\x08" + pack(frame.subscriber) + frame.element
        if isinstance(frame, OnNextPacked):
            return b"\x0b" + pack(frame.subscriber) + pack(frame.count) + frame.data
        _, fields = LAYOUT[code]
        try:
            out = bytes((code,)) + b"".join(
                pack(list(getattr(frame, name)) if kind == IDS else getattr(frame, name))
                for name, kind in fields
            )
        except (OverflowError, TypeError) as exc:
            raise ValueError(f"cannot encode {frame!r}: {exc}") from None
        self._sizes.track(frame)
        return out

    def encode_elements(self, subscriber: int, elements: list[bytes]) -> bytes:
        """Many onNext frames for one variable-size stream, in one buffer (the hot send path)."""
        head = b"\x08" + self._pack(subscriber)
        pack = self._pack
        return b"".join([head + pack(element) for element in elements])


# -- decoding -----------------------------------------------------------------


def _wire_kind(obj: object) -> str:
    """How a decoded MessagePack object is named in error messages."""
    if obj is None:
        return "nil"
    if isinstance(obj, bool):
        return "bool"
    return {int: "int", str: "str", bytes: "bin", tuple: "array", float: "float", dict: "map"}.get(
        type(obj), type(obj).__name__
    )


def _header_length(head: bytes) -> tuple[str, int] | None:
    """(family, announced length) of an incomplete MessagePack object, if its header is here."""
    if not head:
        return None
    b = head[0]
    if 0xA0 <= b <= 0xBF:
        return "str", b & 0x1F
    if 0x90 <= b <= 0x9F:
        return "array", b & 0x0F
    if 0x80 <= b <= 0x8F:
        return "map", b & 0x0F
    sized = {
        0xC4: ("bin", 1), 0xC5: ("bin", 2), 0xC6: ("bin", 4),
        0xD9: ("str", 1), 0xDA: ("str", 2), 0xDB: ("str", 4),
        0xDC: ("array", 2), 0xDD: ("array", 4),
        0xDE: ("map", 2), 0xDF: ("map", 4),
        0xC7: ("ext", 1), 0xC8: ("ext", 2), 0xC9: ("ext", 4),
    }.get(b)
    if sized is None:
        return ("scalar", 0)
    family, width = sized
    if len(head) < 1 + width:
        return None
    return family, int.from_bytes(head[1 : 1 + width], "big")


_EXPECTED_FAMILY = {STR: "str", BIN: "bin", IDS: "array"}
_PYTHON_TYPE: dict[str, type] = {ID: int, LONG: int, UINT: int, COUNT: int, STR: str, BIN: bytes, IDS: tuple}


class MsgpackDecoder(DecoderBase):
    """Incremental decoder: ``feed`` any chunk, get every frame it completes."""

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__()
        self._limits = limits = limits or DEFAULT_LIMITS
        self._u = msgpack.Unpacker(
            raw=False,
            use_list=False,
            strict_map_key=False,
            max_buffer_size=max(limits.max_frame, limits.max_element) + 2 * _FEED_CHUNK,
            max_bin_len=limits.max_element,
            max_str_len=limits.max_string,
            max_array_len=limits.max_array,
            max_map_len=limits.max_array,
            max_ext_len=limits.max_element,
        )
        self._sizes = ElementSizes(limits.max_streams)
        self._fed = 0  # bytes fed so far
        self.offset = 0  # start of the frame being decoded
        self._code = 0  # type code of the frame in progress, 0 = between frames
        self._fields: list[Any] = []
        self._raw = bytearray()  # raw bytes of a fixed-size element in progress
        self._raw_need = 0
        self._head = b""  # first bytes of an incomplete object, for the header check
        self._head_at = -1
        self._pending_at = -1  # start of an object the Unpacker holds half-parsed
        self._runs = RunFinder(self._sizes.sizes, self._limits)

    @property
    def held(self) -> int:
        """Bytes of the frame in progress fed and not yet decoded into a whole frame (the Unpacker's, ``_raw``)."""
        return self._fed - self.offset

    # The public entry points (feed, feed_runs) are DecoderBase's -------------------

    def _decode_feed(self, data: bytes, out: list[Any], runs: bool) -> None:
        for start in range(0, len(data), _FEED_CHUNK):
            chunk = data[start : start + _FEED_CHUNK]
            self._u.feed(chunk)
            self._fed += len(chunk)
            self._run(out, chunk, runs)

    def eof(self) -> None:
        """The transport ended: a frame in progress is a truncated frame (ERR-6)."""
        if self._dead is not None:
            return
        if self._code or self._fed > self.offset:
            raise ProtocolViolation(
                rule="ERR-6",
                side=None,
                offset=self.offset,
                message=f"transport ended inside a frame ({self._fed - self.offset} bytes of it arrived)",
            )

    # Decoding ------------------------------------------------------------------

    def _fail(self, rule: str, message: str) -> ProtocolViolation:
        return ProtocolViolation(rule=rule, side=None, offset=self.offset, message=message)

    def _run(self, out: list[Any], chunk: bytes, runs: bool = False) -> None:
        u = self._u
        unpack = u.unpack
        tell = u.tell
        read_bytes = u.read_bytes
        sizes = self._sizes.sizes
        append = out.append
        new = object.__new__
        set_sub = OnNext.__dict__["subscriber"].__set__
        set_el = OnNext.__dict__["element"].__set__
        set_psub = OnNextPacked.__dict__["subscriber"].__set__
        set_count = OnNextPacked.__dict__["count"].__set__
        set_data = OnNextPacked.__dict__["data"].__set__
        max_frame = self._limits.max_frame
        obj_at = run_start = frame_start = tell()
        base = self._fed - len(chunk)  # stream offset of chunk[0]
        find_run = self._runs.find
        try:
            while True:
                if self._code == 0:
                    # Between frames.  The fast path below handles the element frames
                    # that dominate traffic without storing per-frame state; should a
                    # frame be cut off, it records how far the frame got and re-raises.
                    frame_start = tell()
                    if runs and frame_start >= base:
                        # Nothing of an earlier feed is pending here, so the rest of
                        # the Unpacker's buffer is chunk[frame_start - base:].
                        found = find_run(chunk, frame_start - base)
                        if found is not None:
                            read_bytes(found[1])
                            append(found[0])
                            continue
                    head = read_bytes(1)
                    if not head:
                        self.offset = frame_start
                        self._pending_at = -1
                        return
                    code = head[0]
                    if code == 0x08 or code == 0x0B:
                        sid = count = after_sid = -1
                        try:
                            sid = unpack()
                            if type(sid) is not int or sid < 0 or sid > ID_MAX:
                                self._code, self._fields, self.offset = code, [], frame_start
                                self._check_field(ID, sid)
                            size = sizes.get(sid)
                            if code == 0x08:
                                if size is None:
                                    after_sid = tell()  # an Id may use a wider encoding than needed
                                    element = unpack()
                                    if type(element) is not bytes:
                                        self._code, self._fields, self.offset = code, [sid], frame_start
                                        self._check_field(BIN, element)
                                    frame = new(OnNext)
                                    set_sub(frame, sid)
                                    set_el(frame, element)
                                    append(frame)
                                    continue
                                data = read_bytes(size)
                                if len(data) == size:
                                    frame = new(OnNext)
                                    set_sub(frame, sid)
                                    set_el(frame, data)
                                    append(frame)
                                    continue
                                cut = [sid]
                            else:
                                after_sid = tell()
                                count = unpack()
                                if type(count) is not int or count < 1 or not size or size * count > max_frame:
                                    self._code, self._fields, self.offset = code, [sid], frame_start
                                    self._check_packed(sid, count, size or 0)
                                size = count * (size or 0)
                                data = read_bytes(size)
                                if len(data) == size:
                                    packed = new(OnNextPacked)
                                    set_psub(packed, sid)
                                    set_count(packed, count)
                                    set_data(packed, data)
                                    append(packed)
                                    continue
                                cut = [sid, count]
                        except msgpack.OutOfData:
                            # Cut off inside the frame: record how far it got.
                            got_fields = [] if sid == -1 else [sid] if count == -1 else [sid, count]
                            self._code, self._fields, self.offset = code, got_fields, frame_start
                            obj_at = frame_start + 1 if sid == -1 else after_sid if count == -1 else tell()
                            raise
                        except (ValueError, TypeError, msgpack.BufferFull):
                            # The Unpacker rejected a field (over a max_*_len, bad UTF-8, ...):
                            # record the frame so the violation names it and its offset.
                            got_fields = [] if sid == -1 else [sid] if count == -1 else [sid, count]
                            self._code, self._fields, self.offset = code, got_fields, frame_start
                            raise
                        # A raw element cut off: keep what arrived, wait for the rest.
                        self._code, self._fields, self.offset = code, cut, frame_start
                        self._raw = bytearray(data)
                        self._raw_need = size - len(data)
                        self._pending_at = -1
                        return
                    if code not in LAYOUT:
                        self.offset = frame_start
                        raise type_code_violation(code, frame_start)
                    self._code, self._fields, self.offset = code, [], frame_start
                if self._raw_need:
                    piece = read_bytes(self._raw_need)
                    self._raw += piece
                    self._raw_need -= len(piece)
                    if self._raw_need:
                        self._pending_at = -1
                        return
                    self._finish_raw(append)
                    continue
                cls, fields = LAYOUT[self._code]
                got = self._fields
                while len(got) < len(fields):
                    name, kind = fields[len(got)]
                    if kind == BIN and self._code in (0x08, 0x0B):
                        size = sizes.get(got[0], 0)
                        if self._code == 0x0B:
                            if size == 0:
                                raise self._fail(
                                    "PACK-2",
                                    f"onNextPacked(subscriber={got[0]}) on a stream that is not in fixed-size mode",
                                )
                            total = size * got[1]
                            if total > max_frame:
                                raise self._fail(
                                    "ERR-8",
                                    f"onNextPacked of {got[1]} x {size} bytes exceeds the frame limit {max_frame}",
                                )
                            self._raw_need = total
                            self._raw.clear()
                            break
                        if size:
                            self._raw_need = size
                            self._raw.clear()
                            break
                    obj_at = tell()
                    value = unpack()
                    got.append(self._check_field(kind, value))
                if self._raw_need:
                    continue
                frame = cls(**{name: value for (name, _), value in zip(fields, got)})
                try:
                    self._sizes.track(frame)
                except ProtocolViolation as violation:
                    raise self._fail(violation.rule, f"{cls.wire_name}: {violation.message}") from None
                self._code, self._fields = 0, []
                append(frame)
        except msgpack.OutOfData:
            # tell() counts the bytes the Unpacker already holds of a half-parsed
            # object, so the first object of a run may have started earlier.
            if obj_at == run_start and self._pending_at >= 0:
                obj_at = self._pending_at
            self._pending_at = obj_at
            self._check_incomplete(obj_at, chunk)
        except ProtocolViolation:
            raise
        except UnicodeDecodeError as exc:
            raise self._fail("ERR-5", f"{self._field_name()}: string is not valid UTF-8 ({exc.reason})") from None
        # TypeError: a map whose key is a map or an array (msgpack cannot hash it) is malformed input too.
        except (ValueError, TypeError, msgpack.FormatError, msgpack.StackError, msgpack.BufferFull) as exc:
            raise self._classify(exc) from None

    def _finish_raw(self, append: Callable[[Frame], None]) -> None:
        got = self._fields
        data = bytes(self._raw)
        self._raw.clear()
        frame: Frame
        if self._code == 0x08:
            frame = OnNext(subscriber=got[0], element=data)
        else:
            frame = OnNextPacked(subscriber=got[0], count=got[1], data=data)
        self._code, self._fields = 0, []
        append(frame)

    def _check_packed(self, sid: int, count: Any, size: int) -> None:
        self._check_field(COUNT, count)
        if not size:
            raise self._fail("PACK-2", f"onNextPacked(subscriber={sid}) on a stream that is not in fixed-size mode")
        if size * count > self._limits.max_frame:
            raise self._fail(
                "ERR-8",
                f"onNextPacked of {count} x {size} bytes exceeds the frame limit {self._limits.max_frame}",
            )

    def _frame_name(self) -> str:
        cls = LAYOUT.get(self._code, (None,))[0]
        return cls.wire_name if cls is not None else "frame"

    def _field_name(self) -> str:
        """``frame.field`` for the field being read (``frame`` alone between fields)."""
        frame = self._frame_name()
        if not self._code:
            return frame
        fields = LAYOUT[self._code][1]
        index = len(self._fields)
        return f"{frame}.{fields[index][0]}" if index < len(fields) else frame

    def _check_field(self, kind: str, value: Any) -> Any:
        frame = self._frame_name()
        index = len(self._fields)
        name = LAYOUT[self._code][1][index][0] if self._code else "?"
        if type(value) is not _PYTHON_TYPE[kind]:
            raise self._fail(
                "ERR-4", f"{frame}.{name}: expected {kind}, got MessagePack {_wire_kind(value)}"
            )
        return self._check_range(kind, name, frame, value)

    def _check_range(self, kind: str, name: str, frame: str, value: Any) -> Any:
        if kind == ID and not 0 <= value <= ID_MAX:
            raise self._fail("ERR-9", f"{frame}.{name}: Id {value} is outside 0..2^63-1")
        if kind == UINT and value < 0:
            raise self._fail("ERR-9", f"{frame}.{name}: {value} is negative")
        if kind == COUNT and value < 1:
            raise self._fail("ERR-9", f"{frame}.{name}: count {value} is below 1")
        if kind == UINT and name == "element_size" and value > self._limits.max_element_size:
            raise self._fail(
                "ERR-8", f"{frame}.elementSize {value} exceeds the limit {self._limits.max_element_size}"
            )
        if kind == IDS:
            for item in value:
                if type(item) is not int:
                    raise self._fail("ERR-4", f"{frame}.{name}: item is MessagePack {_wire_kind(item)}, not an Id")
                if not 0 <= item <= ID_MAX:
                    raise self._fail("ERR-9", f"{frame}.{name}: Id {item} is outside 0..2^63-1")
        return value

    def _expected_kind(self) -> str | None:
        if not self._code:
            return None
        fields = LAYOUT[self._code][1]
        index = len(self._fields)
        if self._code == 0x08 and not self._fields:
            return ID
        return fields[index][1] if index < len(fields) else None

    def _check_incomplete(self, obj_at: int, chunk: bytes) -> None:
        """An object is cut off at the end of the feed: judge its header now (ERR-4, ERR-8)."""
        if obj_at != self._head_at:
            self._head_at, self._head = obj_at, b""
        if len(self._head) >= 9:
            return
        start = obj_at - (self._fed - len(chunk))
        self._head = (self._head + chunk[max(start, 0) :])[:9]
        header = _header_length(self._head)
        if header is None:
            return
        family, length = header
        kind = self._expected_kind()
        name = self._field_name()
        if kind is None:
            return
        wanted = _EXPECTED_FAMILY.get(kind, "int")
        if family != wanted and not (wanted == "int" and family == "scalar"):
            raise self._fail("ERR-4", f"{name}: expected {kind}, got MessagePack {family}")
        limit = {"str": self._limits.max_string, "bin": self._limits.max_element, "array": self._limits.max_array}.get(family)
        if limit is not None and length > limit:
            raise self._fail("ERR-8", f"{name}: {family} of {length} bytes announced, over the limit {limit}")

    def _classify(self, exc: Exception) -> ProtocolViolation:
        text = str(exc)
        name = self._field_name()
        kind = self._expected_kind()
        for family, field_kind in (("bin", BIN), ("str", STR), ("array", IDS)):
            if f"max_{family}_len" in text:
                if kind == field_kind:
                    return self._fail("ERR-8", f"{name}: {family} length {text.split()[0]} over the limit")
                return self._fail("ERR-4", f"{name}: expected {kind}, got MessagePack {family}")
        if "max_map_len" in text or "max_ext_len" in text:
            return self._fail("ERR-4", f"{name}: expected {kind}, got a MessagePack map or ext")
        if isinstance(exc, msgpack.BufferFull):
            return self._fail("ERR-8", f"{name}: frame larger than the receive buffer")
        return self._fail("ERR-4", f"{name}: malformed MessagePack ({text})")


class MsgpackCodec:
    name = "msgpack"

    def encoder(self, limits: Limits | None = None) -> MsgpackEncoder:
        return MsgpackEncoder(limits)

    def decoder(self, limits: Limits | None = None) -> MsgpackDecoder:
        return MsgpackDecoder(limits)
