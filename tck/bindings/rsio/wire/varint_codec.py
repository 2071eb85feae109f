"""The ``varint`` wire profile (rsio-v0 section 1, draft revision B).

Every integer, the type code included, is an unsigned LEB128 varint (at most
10 bytes, value below 2^64; ERR-10 otherwise).  Strings and byte arrays are a
varint length and the bytes, arrays a varint count and the items.  Fixed-size
element data (rsio-v0 section 5) is raw: a fixed-size ``onNext`` carries exactly
``elementSize`` bytes, ``onNextPacked`` carries ``count * elementSize`` bytes.

Theory of operation.  The decoder keeps one ``bytearray`` holding only the
bytes not yet consumed, and a read position into it; at the end of every feed
the consumed prefix is dropped (CPython trims a bytearray's front in constant
time), so memory is the frame in progress plus one feed slice, never the
stream.  Parsing proceeds in *units*: a varint, or the body of a string, byte
array or raw element.  A unit is consumed only once it is complete; its value
goes into the per-frame state (type code, fields read so far, items of an array
in progress, bytes a body still needs), so a frame cut at any byte resumes at
the unit where it stopped.  A varint in progress is simply re-read from its
first byte on the next feed (it is at most 10 bytes).  A body is copied out
with one slice once all of it has arrived; until then a feed costs O(1).

Every announced length or count is judged against ``Limits`` the moment its
varint is complete, before the decoder waits for (or allocates) what it
announces, so a length of 4 GiB fails on the feed that completes the length.

Element frames, which dominate traffic, take a fast path when the whole frame
is already buffered and plainly valid; anything else (a frame cut off, a value
out of range) goes through the general, resumable path, which raises the
precise violation.  Non-minimal varints (``81 00`` for 1) are accepted, as in
protobuf: the profile bounds only their length and value.  The encoder always
writes the minimal form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
from .varint_runs import fixed_run, gather_elements
from .varints import INCOMPLETE, ONE_BYTE, TOO_LONG, read_uvarint, uvarint

# Field kinds.  ESIZE is onSubscribe.elementSize (checked against max_element_size);
# DATA the count * elementSize raw bytes of onNextPacked.
ID, LONG, UINT, ESIZE, COUNT = "Id", "Long", "int", "elementSize", "count"
STR, BIN, IDS, DATA = "String", "Bytes", "Array[Id]", "data"
_INT_KINDS = frozenset((ID, LONG, UINT, ESIZE, COUNT))

# Per type code: the frame class and its fields as (attribute, wire name, kind).
LAYOUT: dict[int, tuple[type, tuple[tuple[str, str, str], ...]]] = {
    0x01: (ClientHello, (("version", "version", UINT), ("extensions", "extensions", IDS))),
    0x02: (ServerHello, (("version", "version", UINT), ("extensions", "extensions", IDS))),
    0x03: (Goodbye, (("reason", "reason", STR),)),
    0x04: (
        Subscribe,
        (("publisher", "publisher", STR), ("subscriber", "subscriber", ID), ("initial_demand", "initialDemand", LONG)),
    ),
    0x05: (Request, (("subscriber", "subscriber", ID), ("demand", "demand", LONG))),
    0x06: (Cancel, (("subscriber", "subscriber", ID),)),
    0x07: (OnSubscribe, (("subscriber", "subscriber", ID), ("element_size", "elementSize", ESIZE))),
    0x08: (OnNext, (("subscriber", "subscriber", ID), ("element", "element", BIN))),
    0x09: (OnComplete, (("subscriber", "subscriber", ID),)),
    0x0A: (OnError, (("subscriber", "subscriber", ID), ("error", "error", STR))),
    0x0B: (OnNextPacked, (("subscriber", "subscriber", ID), ("count", "count", COUNT), ("data", "data", DATA))),
    0x0C: (OnNextPart, (("subscriber", "subscriber", ID), ("element", "element", ID), ("data", "data", BIN))),
    0x0D: (OnNextLastPart, (("subscriber", "subscriber", ID), ("element", "element", ID), ("data", "data", BIN))),
}

_FEED_CHUNK = 1 << 20  # a large feed is buffered in slices of this size

# -- encoding -----------------------------------------------------------------------


class VarintEncoder:
    """Encodes frames; remembers fixed-size streams from the onSubscribe frames it encodes.

    It writes what it is given, legal or not, as far as the wire can carry it (an
    Id of 2^63 is written; a negative integer cannot be and raises ValueError).
    A ``bytes`` value in a String field is written as is, so a fault can send
    invalid UTF-8.
    """

    def __init__(self, limits: Limits | None = None) -> None:
        self._limits = limits or DEFAULT_LIMITS
        self._sizes = ElementSizes(self._limits.max_streams)

    def element_size(self, subscriber: int) -> int:
        return self._sizes.sizes.get(subscriber, 0)

    def encode(self, frame: Frame) -> bytes:
        code = frame.code
        try:
            if code == 0x08 and frame.subscriber in self._sizes.sizes:  # type: ignore[union-attr]
                # Fixed-size mode: the element is raw, with no length.
                return b"\x08" + uvarint(frame.subscriber) + bytes(frame.element)  # type: ignore[union-attr]
            if code == 0x0B:
                return (
                    b"\x0b"
                    + uvarint(frame.subscriber)  # type: ignore[union-attr]
                    + uvarint(frame.count)  # type: ignore[union-attr]
                    + bytes(frame.data)  # type: ignore[union-attr]
                )
            _, fields = LAYOUT[code]
            parts = [ONE_BYTE[code]]
            for attr, _wire, kind in fields:
                value = getattr(frame, attr)
                if kind in _INT_KINDS:
                    if type(value) is not int:
                        raise TypeError(f"{attr} is {type(value).__name__}, not int")
                    parts.append(uvarint(value))
                elif kind == IDS:
                    items = list(value)
                    parts.append(uvarint(len(items)))
                    for item in items:
                        if type(item) is not int:
                            raise TypeError(f"{attr} item is {type(item).__name__}, not int")
                        parts.append(uvarint(item))
                else:
                    raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
                    parts.append(uvarint(len(raw)))
                    parts.append(raw)
        except (OverflowError, TypeError, ValueError, UnicodeEncodeError) as exc:
            raise ValueError(f"cannot encode {frame!r}: {exc}") from None
        self._sizes.track(frame)
        return b"".join(parts)

    def encode_elements(self, subscriber: int, elements: list[bytes]) -> bytes:
        """Many onNext frames for one variable-size stream, in one buffer (the hot send path)."""
        head = b"\x08" + uvarint(subscriber)
        one = ONE_BYTE
        return b"".join(
            [head + (one[n] if (n := len(element)) < 0x80 else uvarint(n)) + element for element in elements]
        )


# -- decoding -----------------------------------------------------------------------

_new = object.__new__
_set_sub: Callable[[Any, Any], None] = OnNext.subscriber.__set__  # type: ignore[attr-defined,misc]
_set_el: Callable[[Any, Any], None] = OnNext.element.__set__  # type: ignore[attr-defined,misc]
_set_psub: Callable[[Any, Any], None] = OnNextPacked.subscriber.__set__  # type: ignore[attr-defined,misc]
_set_count: Callable[[Any, Any], None] = OnNextPacked.count.__set__  # type: ignore[attr-defined,misc]
_set_data: Callable[[Any, Any], None] = OnNextPacked.data.__set__  # type: ignore[attr-defined,misc]


def _take(buf: bytearray, pos: int, size: int) -> bytes:
    """``size`` bytes from ``pos`` as ``bytes``, with one copy for large bodies."""
    if size > 4096:
        with memoryview(buf) as view:
            return bytes(view[pos : pos + size])
    return bytes(buf[pos : pos + size])


class VarintDecoder(DecoderBase):
    """Incremental decoder: ``feed`` any chunk, get every frame it completes.

    ``offset`` is the stream offset of the frame in progress (after a feed that
    ends between frames: the number of bytes consumed).  After a violation the
    decoder is dead: every later ``feed`` raises the same violation.
    """

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__()
        self._limits = limits = limits or DEFAULT_LIMITS
        self._sizes = ElementSizes(limits.max_streams)
        self._buf = bytearray()  # bytes not yet consumed; _buf[0] is at stream offset _base
        self._base = 0
        self.offset = 0  # start of the frame being decoded
        self._code = 0  # type code of the frame in progress, 0 = between frames
        self._fields: list[Any] = []  # values of the fields read so far
        self._need = -1  # bytes the body in progress needs, -1 = its length is not read yet
        self._count = -1  # items of the array in progress, -1 = its count is not read yet
        self._items: list[int] = []

    @property
    def held(self) -> int:
        """Bytes of the frame in progress that arrived (those kept, and its fields already read from them)."""
        return self._base + len(self._buf) - self.offset

    # The public entry points (feed, feed_runs) are DecoderBase's -------------------

    def _decode_feed(self, data: bytes, out: list[Any], runs: bool) -> None:
        if len(data) <= _FEED_CHUNK:
            self._buf += data
            self._consume(self._decode(out, runs))
        else:
            with memoryview(data) as view:
                for start in range(0, len(data), _FEED_CHUNK):
                    self._buf += view[start : start + _FEED_CHUNK]
                    self._consume(self._decode(out, runs))
        if runs:
            out[:] = gather_elements(out)  # after decoding, so a violation's salvaged frames are plain frames

    def eof(self) -> None:
        """The transport ended: a frame in progress is a truncated frame (ERR-6)."""
        if self._dead is not None:
            return
        if self._code or self._buf:
            arrived = self._base + len(self._buf) - self.offset
            raise ProtocolViolation(
                rule="ERR-6",
                side=None,
                offset=self.offset,
                message=f"transport ended inside {self._frame_name()} ({arrived} bytes of it arrived)",
            )

    # Decoding ------------------------------------------------------------------------

    def _consume(self, pos: int) -> None:
        """Drop the ``pos`` bytes decoded; only the frame in progress stays buffered."""
        if pos:
            if pos >= len(self._buf):
                self._buf.clear()
            else:
                del self._buf[:pos]
            self._base += pos
        if not self._code:
            self.offset = self._base

    def _decode(self, out: list[Any], runs: bool = False) -> int:
        """Decode every frame the buffer completes; the position after the last byte consumed."""
        buf = self._buf
        end = len(buf)
        pos = 0
        sizes = self._sizes.sizes
        append = out.append
        max_element = self._limits.max_element
        max_frame = self._limits.max_frame
        read = read_uvarint
        new = _new
        set_sub, set_el = _set_sub, _set_el
        get_size = sizes.get
        if self._code:
            pos = self._resume(buf, pos, end, append)
            if self._code:
                return pos  # the frame in progress needs more bytes
        while pos < end:
            # Between frames.  The fast paths take a whole, plainly valid element
            # frame; anything else falls through to the general path.
            code = buf[pos]
            p = pos + 1
            if runs and (code == 0x08 or code == 0x0B) and sizes:
                found = fixed_run(buf, pos, sizes, max_frame)
                if found is not None:
                    append(found[0])
                    pos += found[1]
                    continue
            if code == 0x08:
                sid = buf[p] if p < end else 0x80
                if sid < 0x80:
                    q = p + 1
                else:
                    sid, q = read(buf, p, end)
                if 0 <= sid <= ID_MAX:
                    size = get_size(sid)
                    if size is None:
                        size = buf[q] if q < end else 0x80
                        if size < 0x80:
                            q += 1
                        else:
                            size, q = read(buf, q, end)
                        if size > max_element:
                            size = -1
                    if 0 <= size <= end - q:
                        pos = q + size
                        frame = new(OnNext)
                        set_sub(frame, sid)
                        set_el(frame, bytes(buf[q:pos]) if size <= 4096 else _take(buf, q, size))
                        append(frame)
                        continue
            elif code == 0x0B:
                sid, q = read(buf, p, end)
                size = sizes.get(sid, 0)
                if size and sid <= ID_MAX:
                    count, q = read(buf, q, end)
                    if count > 0:
                        size *= count
                        if size <= max_frame and size <= end - q:
                            packed = new(OnNextPacked)
                            _set_psub(packed, sid)
                            _set_count(packed, count)
                            _set_data(packed, _take(buf, q, size))
                            append(packed)
                            pos = q + size
                            continue
            elif code >= 0x80:
                code, p = read(buf, pos, end)
                if code < 0:
                    if code == INCOMPLETE:
                        return pos
                    self.offset = self._base + pos
                    raise self._varint_error(code, "type code")
            # The general path, from the first field.
            self.offset = self._base + pos
            if code not in LAYOUT:
                raise type_code_violation(code, self.offset)
            self._code = code
            self._fields = []
            self._need = self._count = -1
            pos = self._resume(buf, p, end, append)
            if self._code:
                return pos  # the frame in progress needs more bytes
        return pos

    def _resume(self, buf: bytearray, pos: int, end: int, append: Callable[[Frame], None]) -> int:
        """Read fields of the frame in progress from ``pos``; the position after what it consumed.

        Leaves ``self._code`` set when the frame needs more bytes; on completion
        appends the frame and resets ``self._code`` to 0.
        """
        cls, fields = LAYOUT[self._code]
        got = self._fields
        limits = self._limits
        while len(got) < len(fields):
            _attr, wire, kind = fields[len(got)]
            if kind in _INT_KINDS:
                value, p = read_uvarint(buf, pos, end)
                if value < 0:
                    if value == INCOMPLETE:
                        return pos
                    raise self._varint_error(value, self._field(wire))
                self._check_int(kind, wire, value)
                got.append(value)
                pos = p
            elif kind == IDS:
                if self._count < 0:
                    count, p = read_uvarint(buf, pos, end)
                    if count < 0:
                        if count == INCOMPLETE:
                            return pos
                        raise self._varint_error(count, self._field(wire) + " count")
                    if count > limits.max_array:
                        raise self._fail(
                            "ERR-8", f"{self._field(wire)}: array of {count} items announced, over the limit {limits.max_array}"
                        )
                    self._count, self._items = count, []
                    pos = p
                items = self._items
                while len(items) < self._count:
                    item, p = read_uvarint(buf, pos, end)
                    if item < 0:
                        if item == INCOMPLETE:
                            return pos
                        raise self._varint_error(item, f"{self._field(wire)}[{len(items)}]")
                    if item > ID_MAX:
                        raise self._fail("ERR-9", f"{self._field(wire)}[{len(items)}]: Id {item} is outside 0..2^63-1")
                    items.append(item)
                    pos = p
                got.append(tuple(items))
                self._count, self._items = -1, []
            else:  # STR, BIN, DATA: a body
                need = self._need
                if need < 0:
                    if kind == DATA:
                        need = self._packed_size()
                    elif kind == BIN and self._code == 0x08 and got[0] in self._sizes.sizes:
                        need = self._sizes.sizes[got[0]]  # fixed-size onNext: raw, no length
                    else:
                        need, p = read_uvarint(buf, pos, end)
                        if need < 0:
                            if need == INCOMPLETE:
                                return pos
                            raise self._varint_error(need, self._field(wire) + " length")
                        limit = limits.max_string if kind == STR else limits.max_element
                        if need > limit:
                            what = "string" if kind == STR else "byte array"
                            raise self._fail(
                                "ERR-8", f"{self._field(wire)}: {what} of {need} bytes announced, over the limit {limit}"
                            )
                        pos = p
                    self._need = need
                if end - pos < need:
                    return pos
                raw = _take(buf, pos, need)
                pos += need
                self._need = -1
                if kind == STR:
                    try:
                        got.append(raw.decode("utf-8"))
                    except UnicodeDecodeError as exc:
                        raise self._fail("ERR-5", f"{self._field(wire)}: string is not valid UTF-8 ({exc.reason})") from None
                else:
                    got.append(raw)
        frame = cls(**{attr: value for (attr, _, _), value in zip(fields, got, strict=True)})
        try:
            self._sizes.track(frame)
        except ProtocolViolation as violation:
            raise self._fail(violation.rule, f"{self._frame_name()}: {violation.message}") from None
        self._code, self._fields = 0, []
        append(frame)
        return pos

    def _packed_size(self) -> int:
        """Bytes of onNextPacked data, judged before any of it is awaited (PACK-2, ERR-8)."""
        sid, count = self._fields
        size = self._sizes.sizes.get(sid, 0)
        if not size:
            raise self._fail("PACK-2", f"onNextPacked(subscriber={sid}) on a stream that is not in fixed-size mode")
        total = size * count
        if total > self._limits.max_frame:
            raise self._fail(
                "ERR-8", f"onNextPacked.data: {count} x {size} bytes exceeds the frame limit {self._limits.max_frame}"
            )
        return total

    def _check_int(self, kind: str, wire: str, value: int) -> None:
        if kind == ID:
            if value > ID_MAX:
                raise self._fail("ERR-9", f"{self._field(wire)}: Id {value} is outside 0..2^63-1")
        elif kind == COUNT:
            if value < 1:
                raise self._fail("ERR-9", f"{self._field(wire)}: count {value} is below 1")
        elif kind == ESIZE:
            if value > self._limits.max_element_size:
                raise self._fail(
                    "ERR-8", f"{self._field(wire)} {value} exceeds the limit {self._limits.max_element_size}"
                )

    # Messages ------------------------------------------------------------------------

    def _frame_name(self) -> str:
        entry = LAYOUT.get(self._code)
        return entry[0].wire_name if entry is not None else "a frame"  # type: ignore[attr-defined]

    def _field(self, wire: str) -> str:
        return f"{self._frame_name()}.{wire}"

    def _fail(self, rule: str, message: str) -> ProtocolViolation:
        return ProtocolViolation(rule=rule, side=None, offset=self.offset, message=message)

    def _varint_error(self, status: int, where: str) -> ProtocolViolation:
        if status == TOO_LONG:
            return self._fail("ERR-10", f"{where}: varint longer than 10 bytes")
        return self._fail("ERR-10", f"{where}: varint value 2^64 or more")


class VarintCodec:
    name = "varint"

    def encoder(self, limits: Limits | None = None) -> VarintEncoder:
        return VarintEncoder(limits)

    def decoder(self, limits: Limits | None = None) -> VarintDecoder:
        return VarintDecoder(limits)
