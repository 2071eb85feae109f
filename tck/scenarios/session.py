"""The kit's end of one scenario connection: records, judges and sorts what arrives.

Theory of operation: ``KitSession`` owns the socket.  Everything the kit sends
is recorded (trace, transcript, monitor) *before* it is written, and
everything received is recorded when decoded, so the monitor sees a causally
sound order.  Received frames are sorted into per-key inboxes that the scenario
steps wait on: the connection (hellos, goodbye, close), target-initiated
subscribes, the kit's subscriptions (elements joined from parts and unpacked
from packed frames), and the target's subscriptions (request, cancel).  Every
wait has a deadline; a target that floods the kit past its inbox bound is
disconnected with a clear error instead of eating memory.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..errors import ProtocolViolation, Side
from ..monitor import Monitor
from ..monitor.trace import TraceRecord
from ..wire import Frame, Limits, describe, get_codec
from ..wire.frames import (
    Cancel,
    ClientHello,
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
from ..wire.runs import expand

KIT, TARGET = Side.CLIENT, Side.SERVER
MAX_INBOX = 200_000  # events buffered before the kit stops reading a flooding target
MAX_TRANSCRIPT = 4000
READ_SIZE = 256 * 1024

Key = tuple[str, int | None]
CONN: Key = ("conn", None)
SUBSCRIBES: Key = ("sub", None)


@dataclass(slots=True)
class Event:
    kind: str  # wire name; "onNext" for every delivered element; "close" for end of stream
    fields: dict[str, Any]
    index: int  # frame index in the connection (both directions)
    via: str = ""  # onNext, onNextPacked or split, for elements


@dataclass(slots=True)
class TranscriptLine:
    """One line of the transcript, rendered only when someone reads it.

    Floods of elements make hundreds of thousands of lines; describing and
    hex-encoding each as it arrives would cost more than judging it.
    """

    t: float
    direction: str  # "kit->target", "target->kit"
    text: str | Frame  # a frame is described at render time
    data: bytes | None  # bytes as written; None: re-encode ``text`` to show its hex
    index: int | None = None
    encoder: Any = None

    def render(self) -> str:
        arrow = ">>" if self.direction == "kit->target" else "<<"
        text = self.text if isinstance(self.text, str) else describe(self.text)
        data = self.data
        if data is None and not isinstance(self.text, str) and self.encoder is not None:
            data = self.encoder.encode(self.text)  # the target's frame, in canonical encoding
        hexed = (data or b"")[:25].hex()
        shown = hexed if len(hexed) <= 48 else hexed[:48] + "..."
        number = f"#{self.index:<4}" if self.index is not None else "     "
        return f"{self.t * 1000:8.1f}ms {number} {arrow} {text}  [{shown}]"


FIELD_NAMES = {"initial_demand": "initialDemand", "element_size": "elementSize"}


def frame_fields(frame: Frame) -> dict[str, Any]:
    return {FIELD_NAMES.get(name, name): getattr(frame, name) for name in frame.__dataclass_fields__
            if name not in ("code", "wire_name")}


@dataclass
class KitSession:
    reader: asyncio.StreamReader
    writer: Any
    codec: str = "msgpack"
    limits: Limits | None = None
    t0: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        chosen = get_codec(self.codec)
        self.monitor = Monitor(self.codec, self.limits)
        self.encoder = chosen.encoder(self.limits)
        self.decoder = chosen.decoder(self.limits)
        self.trace: list[TraceRecord] = []
        # The first and the last lines of a long transcript are kept; the middle is counted.
        self._transcript_head: list[TranscriptLine] = []
        self._transcript_tail: deque[TranscriptLine] = deque(maxlen=MAX_TRANSCRIPT // 2)
        self.transcript_dropped = 0
        self.inbox: dict[Key, deque[Event]] = {}
        self.inbox_size = 0
        self.signals = 0  # events other than hellos: what "silence" means
        self.eof = False
        self.error: str | None = None  # why reading stopped abnormally
        self.goodbye: Event | None = None
        self._arrival = asyncio.Event()
        self._parts: dict[int, bytearray] = {}
        self._reader_task: asyncio.Task[None] | None = None
        self.kit_closed = False
        self.kit_aborted = False

    # -- time, records ----------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _line(self, direction: str, text: str | Frame, data: bytes | None, index: int | None) -> None:
        line = TranscriptLine(self.now(), direction, text, data, index, self.encoder)
        if len(self._transcript_head) < MAX_TRANSCRIPT // 2:
            self._transcript_head.append(line)
            return
        if len(self._transcript_tail) == self._transcript_tail.maxlen:
            self.transcript_dropped += 1
        self._transcript_tail.append(line)

    def _received_lines(self, frames: list[Frame], index: int, t: float) -> None:
        """Transcript lines for one read's frames, in bulk: of a flood only the lines that will
        stay (the head, the last of the tail) are made at all; the rest are counted."""
        head, tail, encoder = self._transcript_head, self._transcript_tail, self.encoder
        room = max(0, MAX_TRANSCRIPT // 2 - len(head))
        for offset, frame in enumerate(frames[:room]):
            head.append(TranscriptLine(t, "target->kit", frame, None, index + offset, encoder))
        rest = len(frames) - room
        if rest <= 0:
            return
        keep = tail.maxlen or 0
        self.transcript_dropped += max(0, len(tail) + rest - keep)
        start = room + max(0, rest - keep)
        for offset in range(start, len(frames)):
            tail.append(TranscriptLine(t, "target->kit", frames[offset], None, index + offset, encoder))

    @property
    def transcript(self) -> list[TranscriptLine]:
        return self._transcript_head + list(self._transcript_tail)

    # -- sending ------------------------------------------------------------------------

    async def send_frames(self, frames: list[Frame], chunk: int = 0) -> None:
        out: list[bytes] = []
        for frame in frames:
            data = self.encoder.encode(frame)
            self._line("kit->target", frame, data, self.monitor.frame_count + len(out))
            out.append(data)
        await self.send_bytes(b"".join(out), chunk, record_line=False)

    async def send_bytes(self, data: bytes, chunk: int = 0, record_line: bool = True) -> None:
        if record_line:
            self._line("kit->target", f"raw bytes ({len(data)})", data, None)
        pieces = [data] if chunk <= 0 else [data[i : i + chunk] for i in range(0, len(data), chunk)]
        for piece in pieces:
            t = self.now()
            self.trace.append(TraceRecord(t=t, sender=KIT, data=piece))
            self.monitor.observe(KIT, piece, t)  # recorded before it is written
            if self.kit_closed or self.writer.is_closing():
                return
            try:
                self.writer.write(piece)
                await asyncio.wait_for(self.writer.drain(), 5.0)
            except (TimeoutError, ConnectionError, RuntimeError):
                return  # the target closed or stalled; the scenario judges what it saw

    async def close(self, mode: str = "write") -> None:
        """Close our side: ``write`` = orderly half-close after flushing, ``abort`` = reset."""
        if self.kit_closed:
            return
        self.kit_closed = True
        self.kit_aborted = mode == "abort"
        t = self.now()
        self.trace.append(TraceRecord(t=t, sender=KIT, data=None))
        self.monitor.close(KIT, t)
        self._line("kit->target", "(kit closes)" if mode == "write" else "(kit aborts)", b"", None)
        try:
            if mode == "abort" and hasattr(self.writer, "transport"):
                self.writer.transport.abort()
            elif hasattr(self.writer, "can_write_eof") and self.writer.can_write_eof():
                self.writer.write_eof()
            else:
                self.writer.close()
        except (OSError, RuntimeError):
            pass

    async def shutdown(self) -> None:
        if self._reader_task is not None:
            self._reader_task.cancel()
            try:
                await self._reader_task
            except (asyncio.CancelledError, Exception):
                pass
        try:
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)
        except (TimeoutError, OSError, RuntimeError, ConnectionError):
            pass

    # -- receiving ----------------------------------------------------------------------

    def start(self) -> None:
        self._reader_task = asyncio.get_running_loop().create_task(self._read_loop())

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self.reader.read(READ_SIZE)
                t = self.now()
                if not data:
                    self._on_eof(t)
                    return
                self.trace.append(TraceRecord(t=t, sender=TARGET, data=data))
                try:
                    frames = self.decoder.feed(data)
                except ProtocolViolation as violation:
                    frames = expand(self.decoder.salvaged)  # what came before the bytes that broke
                    bad: ProtocolViolation | None = violation
                else:
                    bad = None
                index = self.monitor.frame_count
                self.monitor.judge(TARGET, frames, t)
                self._received_lines(frames, index, t)
                sort, inbox = self._sort, self.inbox
                for frame in frames:
                    if type(frame) is OnNext and frame.subscriber not in self._parts:
                        # Whole elements dominate floods: their inbox entry, inlined.
                        sid = frame.subscriber
                        queue = inbox.get(("kit", sid))
                        if queue is None:
                            queue = inbox[("kit", sid)] = deque()
                        queue.append(Event("onNext", {"subscriber": sid, "element": frame.element}, index, "onNext"))
                        self.inbox_size += 1
                        self.signals += 1
                    else:
                        sort(frame, index)
                    index += 1
                if bad is not None:
                    finding = self.monitor.observe_error(TARGET, bad, t)
                    self._line("target->kit", f"undecodable: {finding.message}", data[-32:], None)
                    self.error = f"target sent bytes the kit cannot decode: {finding.message}"
                    self._on_eof(t, judged=False)
                    return
                self._arrival.set()
                if self.inbox_size > MAX_INBOX:
                    self.error = f"target sent more than {MAX_INBOX} signals the scenario did not consume"
                    self._on_eof(t, judged=False)
                    return
        except (ConnectionError, OSError) as exc:
            self.error = f"connection failed: {exc}"
            self._on_eof(self.now())

    def _on_eof(self, t: float, judged: bool = True) -> None:
        self.eof = True
        if self.kit_aborted:
            # We reset the connection: whatever the target was writing was cut by us, so a
            # truncated last frame or a missing goodbye is not the target's violation.
            judged = False
        if judged:
            try:
                self.decoder.eof()
            except ProtocolViolation as violation:
                self.monitor.observe_error(TARGET, violation, t)
            self.trace.append(TraceRecord(t=t, sender=TARGET, data=None))
            self.monitor.close(TARGET, t)
        self._line("target->kit", "(target closed)" if judged else "(kit stopped reading)", b"", None)
        self._push(CONN, Event("close", {}, self.monitor.frame_count))
        self._arrival.set()

    def _push(self, key: Key, event: Event) -> None:
        self.inbox.setdefault(key, deque()).append(event)
        self.inbox_size += 1
        if event.kind not in ("serverHello", "clientHello"):
            self.signals += 1

    def _sort(self, frame: Frame, index: int) -> None:
        kind = type(frame)
        if kind in (ServerHello, ClientHello, Goodbye):
            event = Event(frame.wire_name, frame_fields(frame), index)
            if kind is Goodbye and self.goodbye is None:
                self.goodbye = event
            self._push(CONN, event)
        elif kind is Subscribe:
            self._push(SUBSCRIBES, Event("subscribe", frame_fields(frame), index))
        elif kind in (Request, Cancel):
            self._push(("target", frame.subscriber), Event(frame.wire_name, frame_fields(frame), index))  # type: ignore[union-attr]
        elif isinstance(frame, OnNext):
            self._element(frame.subscriber, frame.element, index, "onNext")
        elif kind is OnNextPacked:
            for element in frame.elements():  # type: ignore[union-attr]
                self._element(frame.subscriber, element, index, "onNextPacked")  # type: ignore[union-attr]
        elif kind in (OnNextPart, OnNextLastPart):
            joined = self._parts.setdefault(frame.subscriber, bytearray())  # type: ignore[union-attr]
            joined += frame.data  # type: ignore[union-attr]
            if len(joined) > (self.limits.max_reassembly if self.limits else 64 << 20):
                self.error = "target sent a split element over the kit's reassembly limit"
                self._parts.pop(frame.subscriber, None)  # type: ignore[union-attr]
            elif kind is OnNextLastPart:
                self._element(frame.subscriber, bytes(self._parts.pop(frame.subscriber)), index, "split")  # type: ignore[union-attr]
        elif kind in (OnSubscribe, OnComplete, OnError):
            # A terminal signal ends the element in progress; so does the onSubscribe of a reused
            # Id: parts joined before it belong to the cancelled subscription (ID-4).
            self._parts.pop(frame.subscriber, None)  # type: ignore[union-attr]
            self._push(("kit", frame.subscriber), Event(frame.wire_name, frame_fields(frame), index))  # type: ignore[union-attr]

    def _element(self, subscriber: int, element: bytes, index: int, via: str) -> None:
        self._push(("kit", subscriber), Event("onNext", {"subscriber": subscriber, "element": element}, index, via))

    # -- waiting --------------------------------------------------------------------------

    async def next_event(self, key: Key, timeout: float) -> Event | None:
        """The next event for ``key`` within ``timeout`` seconds, else None."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            queue = self.inbox.get(key)
            if queue:
                self.inbox_size -= 1
                return queue.popleft()
            if self.eof:
                return None
            if key != CONN and self.goodbye is not None and key[0] != "conn":
                # After the target's goodbye nothing new will come for this key.
                remaining = min(deadline - loop.time(), 0.05)
            else:
                remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            self._arrival.clear()
            try:
                await asyncio.wait_for(self._arrival.wait(), remaining)
            except TimeoutError:
                if self.goodbye is not None and key != CONN and not self.inbox.get(key):
                    return None

    def peek(self, key: Key) -> Event | None:
        queue = self.inbox.get(key)
        return queue[0] if queue else None
