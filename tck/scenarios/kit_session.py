"""The kit's end of one scenario connection: records, judges and sorts what arrives.

Theory of operation: ``KitSession`` owns the socket of one connection on one
binding.  Everything the kit sends is recorded (trace, transcript, monitor)
*before* it is written, and everything received is recorded when decoded, so
the monitor sees a causally sound order.  The binding's scenario adapter
(``rsio_tck.binding.ScenarioAdapter``, one per connection) turns each received
frame into events, which are sorted into per-key inboxes that the scenario steps
wait on: the connection (hellos, goodbye, close), target-initiated subscribes,
the kit's subscriptions (elements whole, however the wire carried them), and the
target's subscriptions (request, cancel).  The adapter also says what the kit's
own frames imply, what the binding answers by itself (sent after each read) and
what the kit sends on a timer (RSocket's keepalive).  Every wait has a deadline.

What one connection may hold is bounded (``bounds`` says how); received events are sorted into ``Event``s
under inbox keys (``events``), and the transcript keeps its first and last lines (``transcript.Transcript``).

``truncated`` collects, per store, where and why its record was cut; the runner
copies it into the result.  ``verdict_certain`` is set as soon as the target
has broken a MUST rule: the scenario fails whatever comes later, so the runner
ends it at once, and the read loop stops after ``POST_VERDICT_BYTES`` more
(enough to see a goodbye and close, too little for a flood to cost anything).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..binding import DEFAULT_BINDING, Binding, ScenarioAdapter, get_binding, profile_of
from ..catalogue import RULES
from ..errors import ProtocolViolation, Side
from ..monitor import Monitor
from ..monitor.trace import TraceRecord
from . import clock
from .bounds import (
    FIRST_READ_SIZE,
    INBOX_MAX_BYTES,
    INBOX_MAX_EVENTS,
    POST_VERDICT_BYTES,
    READ_SIZE,
    REPLIES_MAX_PENDING,
    TRACE_MAX_BYTES,
)
from .clock import Budget, Nothing, Progress
from .events import CONN, Event, Key
from .inbox import Inbox
from .transcript import Transcript, TranscriptLine, expand_runs, frame_count, holds_runs
from .waits import InboxWaits

Frame = Any  # a frame of the session's binding
KIT, TARGET = Side.CLIENT, Side.SERVER
NOT_SENT_NAMED = 3  # frames named in a "(not sent: ...)" line; the rest of a long batch is counted
CLOSE_WAIT = 1.0  # seconds a finished session waits for the connection to close before it aborts it


@dataclass
class KitSession(InboxWaits):
    reader: asyncio.StreamReader
    writer: Any
    codec: str | None = None  # the binding's wire profile (RS-IO: the codec); None: its default
    limits: Any = None
    t0: float = field(default_factory=time.monotonic)
    # The scenario runner's session: once the target broke a MUST rule, stop reading and raise
    # VerdictCertain to waiting steps.  Side connections (a bystander, a liveness probe) keep going.
    end_when_certain: bool = False
    binding: Binding | str = DEFAULT_BINDING
    options: dict[str, Any] = field(default_factory=dict)  # for the binding's scenario adapter
    # How long arriving bytes may stretch waits (see ``clock``): the scenario's, shared by its side connections.
    budget: Budget | None = None

    def __post_init__(self) -> None:
        if isinstance(self.binding, str):
            self.binding = get_binding(self.binding)
        binding = self.binding
        self.codec = profile_of(binding, self.codec)
        self.adapter: ScenarioAdapter = binding.scenario_adapter(
            self.codec, {"limits": self.limits, **self.options})
        # One set of limits for the connection (``bounds.session_limits``, which the transport opened with).
        self.limits = getattr(self.adapter, "session_limits", None) or self.limits
        self.monitor = Monitor(self.codec, self.limits, binding=binding)
        attach = getattr(self.adapter, "attach", None)
        if attach is not None:  # the adapter reads the connection's judge (``ScenarioAdapter``: optional ``attach``)
            attach(self.monitor.session, KIT, TARGET)
        self.encoder = binding.encoder(self.codec, self.limits)
        self.decoder = binding.decoder(self.codec, self.limits)
        # An adapter that ``takes_runs`` gets stretches of element frames as one value: judged, sorted, shown in bulk.
        feed_runs = getattr(self.decoder, "feed_runs", None)
        self._feed = feed_runs if self.adapter.takes_runs and feed_runs is not None else self.decoder.feed
        self._describe = binding.describe
        started = time.monotonic()
        self.progress = Progress(last=started)  # when the target's bytes last arrived (the read loop writes it)
        if self.budget is None:
            self.budget = Budget.starting(clock.DEFAULT_BUDGET, started)
        self.nothing: Nothing | None = None  # why the last wait that returned None came back empty
        # Seconds the slowest frame took to arrive, from the first read of its bytes to the read that completed
        # it (a frame that trickles in over seconds is a slow target's sign: ``liveness`` then probes its pace).
        self.slowest_frame = 0.0
        # Why the kit closed the connection at a limit of its own that no rule sets (``WebSocketError.kit_limit``):
        # the scenario is then not judged on what could not come after (``runner``).
        self.kit_limit: str | None = None
        self._frame_began: float | None = None  # when the first read since the last completed frame came
        self.trace: list[TraceRecord] = []
        self.trace_bytes = 0
        self.truncated: dict[str, str] = {}  # store -> where and why its record was cut
        self._transcript = Transcript(self.encoder, self._describe)  # its first and last lines
        self.inbox = Inbox()
        self.verdict_certain = asyncio.Event()  # the target broke a MUST rule: the scenario fails, whatever follows
        self.reading_done = asyncio.Event()  # the read loop ended (end of stream, an error, or it stopped)
        self.signals = 0  # events other than hellos: what "silence" means
        self.eof = False
        self.error: str | None = None  # why reading stopped abnormally
        self.goodbye: Event | None = None
        self._arrival = asyncio.Event()
        self._reader_task: asyncio.Task[None] | None = None
        self._keepalive_task: asyncio.Task[None] | None = None
        self.kit_closed = False
        self.kit_aborted = False
        self.write_failed = False  # a write failed (reset, stall): nothing later reaches the target
        self._sending = asyncio.Lock()  # held for the whole of one send, so no other send's bytes cut into it
        self._replying: set[asyncio.Task[None]] = set()  # automatic answers not yet sent

    # -- time, records ----------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _record(self, t: float, sender: Side, data: bytes | None, *, reset: bool = False) -> None:
        """Append to the trace within ``TRACE_MAX_BYTES``; past it, one truncation marker ends the trace."""
        if "trace" in self.truncated:
            return
        size = len(data) if data is not None else 0
        if self.trace_bytes + size > TRACE_MAX_BYTES:
            self.trace.append(TraceRecord(t=t, sender=sender, data=None, truncated=True))
            self.truncated["trace"] = (f"cut after {self.trace_bytes} bytes at {t:.3f} s "
                                       f"(TRACE_MAX_BYTES = {TRACE_MAX_BYTES}); nothing later was recorded")
            return
        self.trace_bytes += size
        self.trace.append(TraceRecord(t=t, sender=sender, data=data, reset=reset))

    def _line(self, direction: str, text: str | Frame, data: bytes | None, index: int | None) -> None:
        self._transcript.add(self.now(), direction, text, data, index)

    def _received_lines(self, frames: list[Frame], index: int, t: float) -> None:
        self._transcript.received(frames, index, t)

    @property
    def transcript(self) -> list[TranscriptLine]:
        return self._transcript.lines

    @property
    def transcript_dropped(self) -> int:
        """Lines dropped from the middle of a long transcript."""
        return self._transcript.dropped

    # -- sending ------------------------------------------------------------------------

    def _outbound_gone(self) -> bool:
        return self.kit_closed or self.write_failed or bool(self.writer.is_closing())

    def _not_sent(self, what: str) -> bool:
        """True, with a transcript line, when nothing more reaches the target: ``what`` is then neither shown
        as sent nor seen by the monitor."""
        if not self._outbound_gone():
            return False
        self._line("kit->target", f"(not sent: {what}; the connection is gone)", b"", None)
        return True

    def _frames_named(self, frames: list[Frame]) -> str:
        """The frames a reader needs to know never left, by name: the first few described, the rest counted."""
        named = ", ".join(self._describe(frame) for frame in frames[:NOT_SENT_NAMED])
        rest = len(frames) - NOT_SENT_NAMED
        return named + (f" and {rest} more frame(s)" if rest > 0 else "")

    async def send_frames(self, frames: list[Frame], chunk: int = 0) -> None:
        # One send at a time, whole: a chunked send (a byte a write) awaits between its pieces, and the kit's
        # keepalive or automatic answer written then would land inside its frame (seen on a loaded machine:
        # the draft's 1 s KEEPALIVE cut RSUNX-011's chunked REQUEST_N, and the target rightly refused it).
        async with self._sending:
            if self._not_sent(self._frames_named(frames)):
                return
            out: list[bytes] = []
            index = self.monitor.frame_count
            for frame in frames:
                data = self.encoder.encode(frame)
                self._line("kit->target", frame, data, index + len(out))
                out.append(data)
            # What the kit's frames imply for its inboxes (RSocket: a request opens the stream, so
            # its onSubscribe is the kit's own), recorded before the target can answer.
            for key, event in self.adapter.sent(frames, index):
                self._push(key, event)
            await self._write(b"".join(out), chunk)

    async def send_signal(self, name: str, fields: dict[str, Any], chunk: int = 0) -> None:
        """Send one contract signal or binding frame by name (fields resolved): ``adapter.frames``."""
        await self.send_frames(self.adapter.frames(name, fields), chunk)

    async def send_bytes(self, data: bytes, chunk: int = 0) -> None:
        """Raw bytes (a ``send_hex`` step), whole before any other send starts."""
        async with self._sending:
            if self._not_sent(f"raw bytes ({len(data)})"):
                return
            self._line("kit->target", f"raw bytes ({len(data)})", data, None)
            await self._write(data, chunk)

    async def _write(self, data: bytes, chunk: int) -> None:
        """Write ``data`` in pieces of ``chunk`` bytes (0: at once); the caller holds ``_sending``."""
        pieces = [data] if chunk <= 0 else [data[i : i + chunk] for i in range(0, len(data), chunk)]
        for piece in pieces:
            # The monitor judges the bytes on the wire: once a write failed, the rest of a chunked send and
            # later steps' bytes never left, and would be misread as the end of the failed piece's frame.
            if self._outbound_gone():
                return
            t = self.now()
            self._record(t, KIT, piece)
            self.monitor.observe(KIT, piece, t)  # recorded before it is written
            try:
                self.writer.write(piece)
                transport = getattr(self.writer, "transport", None)
                if transport is not None and not transport.is_closing() and not transport.get_write_buffer_size():
                    continue  # the socket took it all: no drain to wait for (``wait_for`` would cost a task and a turn)
                await asyncio.wait_for(self.writer.drain(), 5.0)
            except (TimeoutError, ConnectionError, RuntimeError):
                self.write_failed = True
                return  # the target closed or stalled; the scenario judges what it saw

    async def close(self, mode: str = "write") -> None:
        """Close our side: ``write`` = orderly half-close after flushing, ``abort`` = reset."""
        if self.kit_closed:
            return
        self.kit_closed = True
        self.kit_aborted = mode == "abort"
        t = self.now()
        self._record(t, KIT, None)
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

    def _reply(self, frames: list[Frame]) -> None:
        """Send the binding's automatic answers from a task of their own, in order (the send lock is fair):
        reading never waits behind a step's send, whose drain may need the target to be read first."""
        task = asyncio.get_running_loop().create_task(self.send_frames(frames))
        self._replying.add(task)
        task.add_done_callback(self._replying.discard)

    async def shutdown(self) -> None:
        for task in list(self._replying):
            task.cancel()
        # The session's own tasks end here and are let go: a task kept on ``self`` holds its exception (a
        # cancellation), whose traceback holds the task's frame, which holds ``self``: a cycle that keeps the
        # session (its buffers, its trace) alive until a full collection.
        tasks = [task for task in (self._keepalive_task, self._reader_task) if task is not None]
        self._keepalive_task = self._reader_task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        del tasks
        # A target that goes on sending and never reads our close (a flood the kit closed at its own limit) would
        # hold the connection open: the transport is aborted once the wait is over (shorter then: nothing is owed).
        try:
            self.writer.close()
            await asyncio.wait_for(self.writer.wait_closed(), CLOSE_WAIT if self.kit_limit is None else 0.1)
        except (TimeoutError, OSError, RuntimeError, ConnectionError):
            transport = getattr(self.writer, "transport", None)
            if transport is not None:
                transport.abort()

    # -- receiving ----------------------------------------------------------------------

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._reader_task = loop.create_task(self._read_loop())
        if self.adapter.keepalive_every > 0:
            self._keepalive_task = loop.create_task(self._keep_alive())

    async def _keep_alive(self) -> None:
        """Send the binding's keepalive every ``adapter.keepalive_every`` seconds while the connection
        is open (a timer, not a wait on the target: the kit's own obligation, e.g. RS-KEEPALIVE-2)."""
        while True:
            await asyncio.sleep(self.adapter.keepalive_every)
            if self.kit_closed or self.eof or self.writer.is_closing():
                return
            frames = self.adapter.keepalive()
            if frames:
                await self.send_frames(frames)

    async def _read_loop(self) -> None:
        size = FIRST_READ_SIZE
        after_verdict = -1  # bytes read since the verdict became certain (the read that made it not counted)
        try:
            while True:
                if not self.inbox.room.is_set():
                    await self._wait_for_room()
                if after_verdict >= 0:
                    size = min(size, POST_VERDICT_BYTES - after_verdict)
                data = await self.reader.read(size)
                size = min(size * 2, READ_SIZE) if len(data) == size else max(size // 2, FIRST_READ_SIZE)
                t = self.now()
                if not data:
                    # A WebSocket the kit failed (it sent the close): what the target still owed was cut by us.
                    self._on_eof(t, judged=not self._transport_failed(t))
                    return
                self._record(t, TARGET, data)
                arrived = time.monotonic()
                try:
                    frames = self._feed(data)
                except ProtocolViolation as violation:
                    frames = expand_runs(self.decoder.salvaged)  # what came before the bytes that broke
                    # A copy never raised: the raised one's traceback holds this frame, whose locals would then
                    # hold it back, a cycle keeping the whole session alive until a full collection.
                    bad: ProtocolViolation | None = violation.again()
                else:
                    bad = None
                self._time_frames(arrived, bool(frames))
                index = self.monitor.frame_count
                self.monitor.judge(TARGET, frames, t)
                self._received_lines(frames, index, t)
                if not await self._sort_all(frames, index) or not frames:
                    self.progress.saw(len(data), arrived)  # bytes of what is coming, even a partial frame
                replies = self.adapter.replies()
                if replies and not self.kit_closed:
                    self._reply(replies)  # the binding's automatic answers (RSocket keepalive)
                    if len(self._replying) > REPLIES_MAX_PENDING:
                        await self._wait_for_replies()
                if bad is not None:
                    finding = self.monitor.observe_error(TARGET, bad, t)
                    message = finding.message if finding is not None else f"{bad} (maybe declared: Decision f)"
                    self._line("target->kit", f"undecodable: {message}", data[-32:], None)
                    self.error = f"target sent bytes the kit cannot decode: {message}"
                    self._on_eof(t, judged=False)
                    return
                self._arrival.set()
                if self._check_verdict() and self.end_when_certain:
                    # Read on a little, so a target that answers with goodbye and close is seen doing
                    # so; a target that goes on sending is not judged further.
                    after_verdict = 0 if after_verdict < 0 else after_verdict + len(data)
                    if after_verdict >= POST_VERDICT_BYTES:
                        self._line("target->kit", "(kit stops reading: the target broke a MUST rule, the verdict "
                                   "is certain)", b"", None)
                        return
        except (ConnectionError, OSError) as exc:
            self.error = f"connection failed: {exc}"
            self._on_eof(self.now(), reset=True)
        finally:
            self.reading_done.set()

    def _time_frames(self, arrived: float, completed: bool) -> None:
        """Account for a read in ``slowest_frame``: a read that completes frames ends the frame begun at the
        first read after the last such read (a read that also begins the next frame is not counted for it:
        an under-estimate, which only a trickle of reads makes large, the case this is for)."""
        began = self._frame_began
        if completed:
            if began is not None:
                self.slowest_frame = max(self.slowest_frame, arrived - began)
            self._frame_began = None
        elif began is None:
            self._frame_began = arrived

    async def _sort_all(self, frames: list[Frame], index: int) -> bool:
        """Sort one read's frames into the inboxes, pausing whenever the inbox is over its caps.

        True when every frame made only quiet events (hellos, keepalives): no progress (see ``clock``)."""
        box, adapter = self.inbox, self.adapter
        queues, room = box.queues, box.room
        fast_type, fast = adapter.fast_type, adapter.fast_element
        quiet_kinds = adapter.quiet_kinds
        quiet = True
        runs = holds_runs(frames)
        for frame in frames:
            hit = fast(frame, index) if type(frame) is fast_type else None
            if hit is not None:
                # Whole elements dominate floods: their inbox entry, inlined.
                key, event = hit
                queue = queues.get(key)
                if queue is None:
                    queue = queues[key] = deque()
                queue.append(event)
                box.size += 1
                box.held_bytes += event.size
                self.signals += 1
                quiet = False
                if box.size > INBOX_MAX_EVENTS or box.held_bytes > INBOX_MAX_BYTES:
                    room.clear()
            else:
                # One frame can hold a million elements (RS-IO's onNextPacked): pause within it.
                made = False  # a frame that makes no event (a fragment) is progress too
                for key, event in adapter.received(frame, index):
                    made = True
                    quiet = quiet and event.kind in quiet_kinds
                    self._note(key, event)
                    if not room.is_set():
                        await self._wait_for_room()
                quiet = quiet and made
                if adapter.error is not None and self.error is None:
                    self.error = adapter.error
                    self.truncated.update(adapter.truncated)
            if not room.is_set():
                await self._wait_for_room()
            index += frame_count(frame) if runs else 1
        return quiet

    async def _wait_for_replies(self) -> None:
        """Reading follows writing: a target that asks for answers (RSocket KEEPALIVE with R) and never reads
        them would otherwise have the kit queue answers without end while it reads on.  Each send ends within
        its drain's bound (a stalled write fails the connection's outbound side, and later sends return at once)."""
        self.truncated.setdefault("replies", f"reading paused at {self.now():.3f} s: the answers to over "
                                  f"{REPLIES_MAX_PENDING} reads not yet written")
        while len(self._replying) > REPLIES_MAX_PENDING:
            await asyncio.wait(set(self._replying), return_when=asyncio.FIRST_COMPLETED)

    async def _wait_for_room(self) -> None:
        """Reading follows consumption: wait until steps have taken the inbox below half its caps."""
        inbox = self.inbox
        inbox.pauses += 1
        if inbox.pauses == 1:
            self._line("target->kit", f"(kit pauses reading: {inbox.size} signals, {inbox.held_bytes} element "
                       "bytes not yet taken; TCP holds the rest)", b"", None)
            self.truncated.setdefault("inbox", f"reading paused at {self.now():.3f} s: over {INBOX_MAX_EVENTS} "
                                      f"events or {INBOX_MAX_BYTES} bytes not yet taken by a step")
        self._arrival.set()  # wake a waiter: what it waits for may already be here
        await inbox.room.wait()

    def _check_verdict(self) -> bool:
        if self.monitor.must_seen[TARGET] and not self.verdict_certain.is_set():
            self.verdict_certain.set()
            self._arrival.set()
        return self.verdict_certain.is_set()

    @property
    def wire_trace(self) -> list[TraceRecord]:
        """Over WebSocket: the raw bytes both ways (the trace holds the binding's stream); else empty."""
        wire = getattr(self.writer, "wire", None)
        return wire.trace(self.t0) if wire is not None else []

    def _transport_failed(self, t: float) -> bool:
        """A WebSocket that failed (a message of the wrong type, too big, a malformed frame): the binding's rule
        when one was broken, and one line saying what happened.  Whether it failed."""
        failure = getattr(self.writer, "failure", None)
        if failure is None or self.error is not None:
            return failure is not None
        if failure.violation is not None and failure.violation.rule in RULES:
            self.monitor.observe_error(TARGET, failure.violation, t)
        self.error = f"WebSocket: {failure}"
        if failure.kit_limit:
            self.kit_limit = self.error
        self._line("target->kit", f"(WebSocket failed: {failure})", b"", None)
        return True

    def _on_eof(self, t: float, judged: bool = True, *, reset: bool = False) -> None:
        """The target's stream ended (``judged``: not cut by the kit; ``reset``: by a reset, SPEC.md decision y)."""
        self.eof = True
        if self.kit_aborted:
            judged = False  # we reset it: a frame cut or a goodbye missing then is not the target's violation
        if judged:
            try:
                if not reset:  # a frame a reset cut is not judged
                    self.decoder.eof()
            except ProtocolViolation as violation:
                self.monitor.observe_error(TARGET, violation, t)
            self._record(t, TARGET, None, reset=reset)
            self.monitor.close(TARGET, t, reset=reset)
        self._check_verdict()  # judged or not: a rule the target broke on its way out (undecodable bytes) is certain
        ended = "(target reset the connection)" if reset else "(target closed)"
        self._line("target->kit", ended if judged else "(kit stopped reading)", b"", None)
        self._push(CONN, Event("close", {}, self.monitor.frame_count))
        self._arrival.set()

    def _push(self, key: Key, event: Event) -> None:
        self.inbox.push(key, event)
        if event.kind not in self.adapter.quiet_kinds:
            self.signals += event.left

    def _note(self, key: Key, event: Event) -> None:
        """Push one received event; the first goodbye of the target is kept apart."""
        if key == CONN and event.kind in self.adapter.goodbye_kinds and self.goodbye is None:
            self.goodbye = event
        self._push(key, event)

    def _sort(self, frame: Frame, index: int) -> None:
        """Sort one received frame (no pausing: for callers outside the read loop)."""
        for key, event in self.adapter.received(frame, index):
            self._note(key, event)
        if self.adapter.error is not None and self.error is None:
            self.error = self.adapter.error
            self.truncated.update(self.adapter.truncated)
