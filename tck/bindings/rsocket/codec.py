"""What both RSocket wire profiles share: limits, the field reader, the profile table, and the I/O-free halves.

Theory of operation.  A wire profile (``rsocket-1.0``, ``reactivesocket-draft``)
is a ``Profile``: how a frame's header and length prefix look, a dispatch table
from frame type code to one small *reader* per frame kind, and a table from
frame class to one small *writer*.  A reader gets the parsed ``Header`` and a
``Body`` cursor over the bytes after the header; the cursor raises the precise
``ProtocolViolation`` when a field runs past the end, so readers are straight-line
code with no bounds arithmetic of their own.

On a stream transport (TCP) every frame has a length prefix; the
``FrameDecoder`` buffers only the frame in progress, judges the announced length
against ``RSocketLimits.max_frame`` the moment the prefix is complete (before
waiting for, or holding, the body), then hands the whole frame to the profile.
On a message transport (WebSocket) one message is one frame with no prefix:
the same decoder with ``length_prefix=False`` decodes each ``feed`` as one frame.
Frames the spec says to ignore come back as ``IgnoredFrame`` values, not errors.
After a violation the decoder is dead: every later ``feed`` raises it again,
and ``salvaged`` holds the frames that feed completed before the bad bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...errors import ProtocolViolation
from .frames import Decoded, Frame, IgnoredFrame
from .rules import RULES
from .runs import FIRST_FRAMES, MAX_WINDOW, MIN_FRAMES, PayloadRun, find_run

# -- limits ---------------------------------------------------------------------------

FRAME_MAX = 16_777_215  # Protocol.md, Max Frame Size


@dataclass(frozen=True, slots=True, kw_only=True)
class RSocketLimits:
    # One frame without its length prefix; a length above it fails on the prefix.
    max_frame: int = FRAME_MAX
    # Bytes (metadata + data) of one reassembled fragmented payload, and of all
    # chains in progress together.
    max_reassembly: int = 64 * 1024 * 1024


DEFAULT_LIMITS = RSocketLimits()


def violation(rule: str, message: str, offset: int | None = None) -> ProtocolViolation:
    """A violation whose message ends with the rule's title, so the one line explains itself."""
    return ProtocolViolation(rule=rule, side=None, offset=offset, message=f"{message}; rule: {RULES[rule].title}")


class IgnoreSignal(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by a reader for a frame the spec says to ignore; the profile turns it into ``IgnoredFrame``."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(reason)
        self.rule = rule
        self.reason = reason


# -- reading fields -------------------------------------------------------------------


class Header(NamedTuple):
    frame_type: int
    stream_id: int
    ignore: bool
    metadata: bool  # the M flag
    flags: int  # the profile's whole flags field, for the frame-specific bits
    size: int  # bytes of the header


class Body:
    """A cursor over one frame's bytes after its header; every read is bounds-checked.

    ``name`` is the frame type's name and ``offset`` the frame's stream offset,
    both for messages.  A fixed field cut short is RS-FRAME-6; a body announced
    by a length field that runs past the end is RS-FRAME-5.
    """

    __slots__ = ("data", "pos", "name", "offset")

    def __init__(self, data: bytes, pos: int, name: str, offset: int | None) -> None:
        self.data = data
        self.pos = pos
        self.name = name
        self.offset = offset

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def _fixed(self, size: int, field: str) -> int:
        pos = self.pos
        if len(self.data) - pos < size:
            raise violation(
                "RS-FRAME-6",
                f"{self.name}: frame ends inside {field} ({self.remaining()} of {size} bytes)",
                self.offset,
            )
        self.pos = pos + size
        return pos

    def uint(self, size: int, field: str) -> int:
        pos = self._fixed(size, field)
        return int.from_bytes(self.data[pos : pos + size], "big")

    def reserved_high(self, size: int, field: str) -> int:
        """An unsigned field whose top bit is reserved (the 31- and 63-bit fields); a set bit is RS-FRAME-3."""
        value = self.uint(size, field)
        if value >> (size * 8 - 1):
            raise violation("RS-FRAME-3", f"{self.name}: reserved high bit of {field} is set", self.offset)
        return value

    def take(self, size: int, field: str) -> bytes:
        """``size`` bytes announced by a length field."""
        pos = self.pos
        if len(self.data) - pos < size:
            raise violation(
                "RS-FRAME-5",
                f"{self.name}: {field} of {size} bytes runs past the end of the frame ({self.remaining()} left)",
                self.offset,
            )
        self.pos = pos + size
        return self.data[pos : pos + size]

    def rest(self) -> bytes:
        pos, self.pos = self.pos, len(self.data)
        return self.data[pos:]

    def done(self) -> None:
        """The frame's layout ends here: trailing bytes are RS-FRAME-7."""
        if self.pos != len(self.data):
            raise violation(
                "RS-FRAME-7",
                f"{self.name}: {len(self.data) - self.pos} bytes after the last field of the frame",
                self.offset,
            )


Reader = Callable[[Header, Body], Frame]
Writer = Callable[[Any], tuple[int, int, list[bytes]]]  # frame -> (type code, flags, body parts)


def need_unsigned(value: Any, bits: int, field: str) -> bytes:
    """``value`` big-endian in ``bits`` bits; ValueError if the wire cannot carry it."""
    if type(value) is not int or not 0 <= value < 1 << bits:
        raise ValueError(f"{field} {value!r} does not fit in {bits} unsigned bits")
    return value.to_bytes((bits + 7) // 8, "big")


def need_bytes(value: Any, field: str) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise ValueError(f"{field} is {type(value).__name__}, not bytes")
    return bytes(value)


# -- profiles ---------------------------------------------------------------------------


class Profile:
    """One wire profile: header layout, length prefix, and the reader/writer tables.

    Subclasses set the class attributes and implement the header and prefix
    methods; ``decode_frame`` and ``encode_frame`` are the whole-frame entry
    points (no length prefix), shared by both framings.
    """

    name: str
    prefix_size: int  # bytes of the length prefix on stream transports
    header_size: int  # bytes of the frame header (without the prefix)
    ignore_flag: int  # the I bit in this profile's flags field
    id_last_byte: int  # offset in the header of the stream id's last (least significant) byte
    readers: dict[int, Reader]
    writers: dict[type, Writer]
    type_names: dict[int, str]

    # Subclass hooks ------------------------------------------------------------------

    def parse_header(self, raw: bytes, offset: int | None) -> Header:
        raise NotImplementedError

    def build_header(self, frame_type: int, flags: int, stream_id: int) -> bytes:
        raise NotImplementedError

    def frame_size(self, prefix: bytes | bytearray, offset: int | None) -> int:
        """Bytes of the frame after a complete length prefix (violations for reserved bits, short lengths)."""
        raise NotImplementedError

    def build_prefix(self, frame_size: int) -> bytes:
        raise NotImplementedError

    def plain_next(self, buf: bytes, start: int) -> bool:
        """Whether the whole frame at ``buf[start]`` (after its prefix) is a PAYLOAD with only the
        NEXT flag and a valid header: one that may start or continue a ``PayloadRun``."""
        return False

    def fast_decode(self, buf: bytes | bytearray, start: int, stop: int) -> Frame | None:
        """The frame in ``buf[start:stop]`` when it is a common, plainly valid one; None sends it the general way.

        The hot frames (PAYLOAD, REQUEST_N) skip the header tuple and the field
        cursor; anything unusual returns None and gets the precise violation
        from ``decode_frame``.
        """
        return None

    # Whole frames -------------------------------------------------------------------

    def decode_frame(self, raw: bytes, offset: int | None = None) -> Decoded:
        """One frame without length prefix (a WebSocket message, or the body of a TCP frame)."""
        if len(raw) < self.header_size:
            raise violation(
                "RS-FRAME-1", f"frame of {len(raw)} bytes is shorter than the {self.header_size}-byte header", offset
            )
        header = self.parse_header(raw, offset)
        reader = self.readers.get(header.frame_type)
        if reader is None:
            what = f"unknown frame type 0x{header.frame_type:02x}"
            if header.ignore:
                return IgnoredFrame(
                    frame_type=header.frame_type,
                    stream_id=header.stream_id,
                    rule="RS-IGNORE-1",
                    reason=f"{what} with the I flag set",
                    raw=bytes(raw),
                )
            raise violation("RS-FRAME-4", f"{what} without the I flag", offset)
        name = self.type_names[header.frame_type]
        try:
            return reader(header, Body(raw, header.size, name, offset))
        except IgnoreSignal as signal:
            return IgnoredFrame(
                frame_type=header.frame_type,
                stream_id=header.stream_id,
                rule=signal.rule,
                reason=f"{name}: {signal.reason}",
                raw=bytes(raw),
                type_name=name,
            )

    def encode_frame(self, frame: Frame | IgnoredFrame) -> bytes:
        """One frame without length prefix.  An ``IgnoredFrame`` is written back as its raw bytes.

        Writes what it is given as far as this wire can carry it (a reserved bit
        set by a too-large value included, so faults can build bad frames);
        a frame or value the wire has no form for raises ValueError.
        """
        if isinstance(frame, IgnoredFrame):
            return frame.raw
        writer = self.writers.get(type(frame))
        if writer is None:
            raise ValueError(f"{frame.wire_name} has no form in the {self.name} profile")
        try:
            frame_type, flags, parts = writer(frame)
            header = self.build_header(frame_type, flags | (self.ignore_flag if frame.ignore else 0), frame.stream_id)
        except ValueError as exc:
            raise ValueError(f"cannot encode {frame.wire_name} in {self.name}: {exc}") from None
        return header + b"".join(parts)

    # Codec halves -------------------------------------------------------------------

    def encoder(self, limits: RSocketLimits | None = None, *, length_prefix: bool = True) -> FrameEncoder:
        """``limits`` is accepted for symmetry with ``decoder``: an encoder writes what it is given."""
        return FrameEncoder(self, length_prefix=length_prefix)

    def decoder(self, limits: RSocketLimits | None = None, *, length_prefix: bool = True) -> FrameDecoder:
        return FrameDecoder(self, limits, length_prefix=length_prefix)


class FrameEncoder:
    """Encodes frames for one direction; with ``length_prefix`` (TCP) each frame gets its prefix."""

    def __init__(self, profile: Profile, *, length_prefix: bool = True) -> None:
        self.profile = profile
        self.length_prefix = length_prefix

    def encode(self, frame: Frame | IgnoredFrame) -> bytes:
        raw = self.profile.encode_frame(frame)
        if not self.length_prefix:
            return raw
        try:
            return self.profile.build_prefix(len(raw)) + raw
        except ValueError as exc:
            raise ValueError(f"cannot frame {frame.wire_name}: {exc}") from None


class FrameDecoder:
    """Incremental decoder: ``feed`` any chunk, get every frame it completes.

    ``offset`` is the stream offset of the frame in progress.  Without
    ``length_prefix`` every ``feed`` is one whole frame (one WebSocket message).
    ``feed_runs`` returns the same frames, except that stretches of plain NEXT
    PAYLOAD frames on one stream may come back as ``PayloadRun`` values (see
    ``runs.py``); after a failed ``feed_runs``, ``salvaged`` may hold runs too.
    """

    def __init__(
        self, profile: Profile, limits: RSocketLimits | None = None, *, length_prefix: bool = True
    ) -> None:
        self.profile = profile
        self.limits = limits or DEFAULT_LIMITS
        self.length_prefix = length_prefix
        self.offset = 0
        self.salvaged: list[Decoded | PayloadRun] = []
        self._buf = bytearray()  # bytes not consumed yet: the frame in progress; _buf[0] is at self.offset
        self._dead: ProtocolViolation | None = None
        # The run finder's backoff: after a miss, this many chances to try are skipped.
        self._skip = 0
        self._backoff = 0

    @property
    def held(self) -> int:
        """Bytes of the frame in progress kept (none on a message transport: a message is a whole frame)."""
        return len(self._buf)

    def feed_runs(self, data: bytes) -> list[Decoded | PayloadRun]:
        """``feed``, with stretches of plain NEXT PAYLOAD frames on one stream as ``PayloadRun`` values."""
        if self._dead is not None:
            raise self._dead.again()
        if not self.length_prefix:
            return self.feed(data)  # type: ignore[return-value]
        held = self._buf
        prefix_size = self.profile.prefix_size
        if len(held) >= prefix_size:
            # A frame in progress whose prefix was judged when it came: while these bytes do not complete it,
            # they are only kept.  Copying the held bytes on every feed (below) made a large frame arriving in
            # reads of 64 KiB quadratic: a 16 MiB frame was 2 GB of copies and three copies alive at once.
            if len(held) + len(data) < prefix_size + self.profile.frame_size(held[:prefix_size], self.offset):
                held += data
                return []
        out: list[Decoded | PayloadRun] = []
        # One bytes object over the held bytes and the new ones: the pieces of a run are
        # split from it, and a feed costs one copy of the bytes that were held (made after joining them in
        # place, and the held ones let go at once: two copies of a large frame alive, not three).
        if held:
            held += data
            buf = bytes(held)
            held.clear()
        else:
            buf = bytes(data)
        try:
            pos = self._frames_and_runs(buf, out)
        except ProtocolViolation as exc:
            self._dead = exc.again()  # kept without the traceback of this raise (``again``)
            self.salvaged = out
            raise
        self._buf[:] = buf[pos:]
        self.offset += pos
        return out

    def feed(self, data: bytes) -> list[Decoded]:
        if self._dead is not None:
            raise self._dead.again()
        out: list[Decoded] = []
        try:
            if self.length_prefix:
                self._feed_stream(data, out)
            else:
                self._feed_message(data, out)
        except ProtocolViolation as exc:
            self._dead = exc.again()  # kept without the traceback of this raise (``again``)
            self.salvaged = [*out]
            raise
        return out

    def eof(self) -> None:
        """The transport ended: a frame in progress is truncated (RS-FRAME-8)."""
        if self._dead is None and self._buf:
            self._dead = violation(
                "RS-FRAME-8",
                f"transport ended inside a frame ({len(self._buf)} bytes of it arrived)",
                self.offset,
            )
            raise self._dead.again()

    def _feed_message(self, data: bytes, out: list[Decoded]) -> None:
        if len(data) > self.limits.max_frame:
            raise violation(
                "RS-FRAME-2", f"message of {len(data)} bytes is over the frame limit {self.limits.max_frame}", self.offset
            )
        out.append(self.profile.decode_frame(bytes(data), self.offset))
        self.offset += len(data)

    def _feed_stream(self, data: bytes, out: list[Decoded]) -> None:
        buf = self._buf
        buf += data
        pos = self._frames(buf, out)
        # Only the frame in progress stays buffered (CPython trims a bytearray's front cheaply).
        if pos:
            del buf[:pos]
            self.offset += pos

    def _frames(self, buf: bytearray, out: list[Decoded]) -> int:
        """Decode every whole frame in ``buf``; the position after the last one."""
        profile = self.profile
        prefix_size = profile.prefix_size
        header_size = profile.header_size
        max_frame = self.limits.max_frame
        frame_size = profile.frame_size
        fast = profile.fast_decode
        decode = profile.decode_frame
        append = out.append
        end = len(buf)
        pos = 0
        while end - pos >= prefix_size:
            # The prefix is judged as soon as it is complete, before the body is awaited.
            size = frame_size(buf[pos : pos + prefix_size], self.offset + pos)
            if size > max_frame or size < header_size:
                self._bad_size(size, pos)
            start = pos + prefix_size
            stop = start + size
            if stop > end:
                break
            frame = fast(buf, start, stop)
            if frame is not None:
                append(frame)
            else:
                with memoryview(buf) as view:  # one copy of the frame, not a slice and then its copy
                    append(decode(bytes(view[start:stop]), self.offset + pos))
            pos = stop
        return pos

    def _frames_and_runs(self, buf: bytes, out: list[Decoded | PayloadRun]) -> int:
        """``_frames`` over ``buf``, trying a run wherever a plain NEXT frame is followed by
        another with the same header; the position after the last whole frame or run."""
        profile = self.profile
        prefix_size = profile.prefix_size
        header_size = profile.header_size
        max_frame = self.limits.max_frame
        frame_size = profile.frame_size
        fast = profile.fast_decode
        decode = profile.decode_frame
        plain_next = profile.plain_next
        id_last = profile.id_last_byte
        probe = prefix_size + id_last  # from a frame's end: the next frame's last stream id byte
        append = out.append
        end = len(buf)
        pos = 0
        while end - pos >= prefix_size:
            size = frame_size(buf[pos : pos + prefix_size], self.offset + pos)
            if size > max_frame or size < header_size:
                self._bad_size(size, pos)
            start = pos + prefix_size
            stop = start + size
            if stop > end:
                break
            # A run is worth trying where the next frame repeats this one's header (the last
            # stream id byte first: one comparison rules out interleaved streams).
            if (
                stop + probe < end
                and buf[stop + probe] == buf[start + id_last]
                and buf[stop + prefix_size : stop + prefix_size + header_size] == buf[start : start + header_size]
                and plain_next(buf, start)
            ):
                if self._skip:
                    self._skip -= 1
                else:
                    taken = self._run(buf, pos, stop, out)
                    if taken:
                        pos += taken
                        continue
            frame = fast(buf, start, stop)
            append(frame if frame is not None else decode(buf[start:stop], self.offset + pos))
            pos = stop
        return pos

    def _run(self, buf: bytes, pos: int, stop: int, out: list[Decoded | PayloadRun]) -> int:
        """Append the run starting with the frame ``buf[pos:stop]`` if one is proved; the bytes it covers."""
        prefix, header = self.profile.prefix_size, self.profile.header_size
        found = find_run(buf, pos, stop, prefix=prefix, header=header,
                         window=FIRST_FRAMES * (stop - pos), max_frame=self.limits.max_frame)
        pieces, covered, complete = found
        if complete:  # the first window was all one run: take as much as a window holds
            pieces, covered, _ = find_run(buf, pos, stop, prefix=prefix, header=header,
                                          window=MAX_WINDOW, max_frame=self.limits.max_frame)
        if len(pieces) < MIN_FRAMES:
            self._skip = self._backoff
            self._backoff = min(2 * self._backoff + 1, 1023)
        else:
            self._backoff = 0
        if len(pieces) < 2:
            return 0
        stream_id = self.profile.parse_header(buf[pos + prefix : pos + prefix + header], None).stream_id
        out.append(PayloadRun(stream_id, len(pieces), pieces, prefix))
        return covered

    def _bad_size(self, size: int, pos: int) -> None:
        offset = self.offset + pos
        if size > self.limits.max_frame:
            raise violation("RS-FRAME-2", f"frame length {size} is over the frame limit {self.limits.max_frame}", offset)
        raise violation(
            "RS-FRAME-1", f"frame length {size} is shorter than the {self.profile.header_size}-byte header", offset
        )
