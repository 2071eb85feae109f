"""The proxy's relay: bytes pass through unchanged; the monitor judges both directions.

Theory of operation: for every accepted client connection the relay opens one
connection to the target and runs two pumps, client->server and server->client.
Each pump reads, records the bytes (trace, bounded like the kit's own sessions),
hands them to the connection's ``Monitor`` with the sending side, and only then
writes them on, so the monitor sees a causally sound order.  End of stream is
passed on as a half-close (``write_eof``) and given to the monitor as that side's
close, as is a reset of the sender's connection; when the receiver is gone, the pump stops without
closing the sender's side (the relay cut it, perhaps mid-frame; the sender did not end it).  The monitor
is the binding's: the relay itself knows no wire.

Over WebSocket (``ws://`` to listen on and ``ws://`` target, both) the relay still
passes the raw bytes unchanged (the HTTP upgrade, masked frames, pings and closes as
the two ends wrote them); a passive ``websocket.link.Observer`` reads both directions
and hands the monitor the binding's stream carried in the messages.  A WebSocket
failure of one side (a malformed frame, a message of the wrong type) is that side's
finding when the binding has a rule for it, and the connection's ``error`` in any
case.  The trace holds the binding's stream; ``wire_trace`` the raw bytes (the pcap's).

Bounds: at most ``max_connections`` connections (then the listener closes), all
within ``duration`` seconds (then open connections are cut, both sides reset, and their verdicts kept,
marked ``cut``); the trace of a connection stops at ``TRACE_MAX_BYTES`` with a
truncation marker.  Every connect has a timeout.  A pump reads ``READ_SIZE`` at a time
and writes it on before reading again (awaiting the receiver's drain), so the relay holds
at most a read per direction besides what the monitor holds: a partial frame or line
within the limits it judges with (and RSocket's reassembly within its ``max_reassembly``):
the binding's defaults for a proxy (16 MiB of one RSocket frame or Ditto line, 64 MiB of
RSocket reassembly per direction), the kit's own in listen mode, where the kit is the
receiver (its scenario adapter's ``session_limits``: 4 MiB, 1 MiB of reassembly).
All connections together are bounded by one ``HeldBudget`` per run (``budget.py``;
``max_held``, 64 MiB by default): after each read it judged, a pump counts what its
connection holds, as the owners count it (``Monitor.held``, ``Observer.held``, the traces'
sizes), and a connection whose bytes take the total past the budget is closed at the kit's
own limit (no rule sets it): its line says so, nothing after is judged against either side,
and neither is charged for the close.  Traces are kept while the total is within half the
budget, then cut (their truncation marker), never closing a connection.  When a connection
ends its monitor lets go of what it held (``Monitor.release``) and the budget of its count;
with ``keep_traces=False`` (the proxy command) no trace stays in memory once written to
``out_dir``, and none is recorded without one.
In listen mode (``certain``: the client) the verdict on the client is certain once it
broke a MUST rule: as the kit's own scenarios stop reading a target then, the relay
passes ``POST_VERDICT_BYTES`` more of the client's bytes (a goodbye, a close) and closes
both connections, judging neither side's end from there (the kit ended it).  A proxy
(``certain`` None) passes everything on.  ``ConnectionVerdict.line`` says in one line
what happened: frames and bytes each way, how the connection ended, the MUST
violations by side and the rules.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..binding import Binding
from ..catalogue import RULES
from ..errors import Side
from ..monitor import Monitor
from ..monitor.trace import TraceRecord, write_trace
from ..scenarios.bounds import POST_VERDICT_BYTES, TRACE_MAX_BYTES  # as the kit's own sessions
from ..transport import Target, TargetError, open_target, reset
from ..websocket.framing import framing_for
from ..websocket.link import Observer
from .budget import DEFAULT_MAX_HELD, HeldBudget

READ_SIZE = 64 * 1024


@dataclass
class ConnectionVerdict:
    index: int
    monitor: Monitor = field(repr=False)  # the connection's judge: its findings are the verdict
    cut: bool = False  # the proxy's duration ended before the connection did
    error: str | None = None  # the target could not be reached, or a socket failed
    ended: str | None = None  # how it ended, in words: "the client closed", "the kit closed it: ..."
    sent: dict[str, int] = field(default_factory=lambda: {str(side): 0 for side in Side})  # bytes by sender
    trace: list[TraceRecord] = field(default_factory=list, repr=False)  # both directions, bounded
    wire_trace: list[TraceRecord] = field(default_factory=list, repr=False)  # WebSocket: the raw bytes

    @property
    def frames(self) -> int:
        return self.monitor.frame_count

    @property
    def findings(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.monitor.findings]

    @property
    def must(self) -> dict[str, int]:
        """MUST violations by side ("client", "server")."""
        return {str(side): len(self.monitor.violations(side)) for side in Side}

    def to_json(self) -> dict[str, Any]:
        return {"connection": self.index, "frames": self.frames, "cut": self.cut, "error": self.error,
                "ended": self.ended, "bytes": self.sent, "must_violations": self.must, "findings": self.findings}

    def line(self) -> str:
        """What happened to the connection, in one line: frames and bytes each way, how it ended, and the
        MUST violations by side with the rules broken (dropped findings counted too: a flood of one rule)."""
        state = "error: " + self.error if self.error else (
            "cut at the proxy's --duration" if self.cut else (self.ended or "ended"))
        rules = sorted({f.rule for f in self.monitor.findings} | set(self.monitor.findings_dropped))
        must = self.monitor.must_seen
        return (f"connection {self.index}: {self.frames} frames, client {_size(self.sent['client'])}, server "
                f"{_size(self.sent['server'])}; {state}; MUST violations client {must[Side.CLIENT]}, server "
                f"{must[Side.SERVER]}" + (f"; rules {', '.join(rules)}" if rules else ""))


def _size(count: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


@dataclass
class ProxyResult:
    connections: list[ConnectionVerdict] = field(default_factory=list)
    budget: HeldBudget = field(default_factory=HeldBudget)  # the run's: its limit, and the most held at once


class Activity:
    """Whether the relay's connections are getting anywhere, for a caller that bounds them by silence (listen
    mode ends a client test case whose client stopped, ``listen.runner``).  Progress is a connection opening
    or ending, or a whole frame either way (the monitor's count) other than the binding's liveness frames
    (``Binding.liveness_frames``: a keepalive shows its sender alive, not getting anywhere).  Bytes that complete
    no frame, and keepalives, are counted apart, so a sender trickling bytes forever, or storming keepalives, is
    told from one that is silent.  The relay is the only writer; ``changed`` is set at every progress, for the
    reader to wait on."""

    def __init__(self) -> None:
        self.changed = asyncio.Event()
        self.last_progress = time.monotonic()
        self.open: set[_Relayed] = set()  # connections being relayed now
        self.closed_at_verdict = 0  # connections the relay closed once a verdict was certain (``certain``)
        self.bytes_since_progress = 0
        self.liveness_since_progress = 0  # keepalives, either way

    def progress(self) -> None:
        self.last_progress = time.monotonic()
        self.bytes_since_progress = 0
        self.liveness_since_progress = 0
        self.changed.set()

    def close_all(self, why: str) -> None:
        """Close every open connection, the kit's doing (``why``): neither side's end is judged from here, so a
        client the caller then ends is not charged with a frame cut short by that end."""
        for relayed in list(self.open):
            relayed.close_both(why)


class _Recorder:
    """A connection's trace: cut at ``TRACE_MAX_BYTES``, or where the run's budget has no room for a record
    (``HeldBudget.trace_room``); none at all when nobody reads it (``on`` False)."""

    def __init__(self, budget: HeldBudget | None = None, on: bool = True) -> None:
        self.records: list[TraceRecord] = []
        self.size = 0  # bytes kept
        self.cut = not on
        self.budget = budget

    def add(self, t: float, sender: Side, data: bytes | None, *, reset: bool = False) -> None:
        if self.cut:
            return
        size = len(data or b"")
        if self.size + size > TRACE_MAX_BYTES or (size and self.budget is not None
                                                  and not self.budget.trace_room(size)):
            self.cut = True
            self.records.append(TraceRecord(t=t, sender=sender, data=None, truncated=True))
            return
        self.size += size
        self.records.append(TraceRecord(t=t, sender=sender, data=data, reset=reset))


class _WebSocketView:
    """What the monitor sees of a relayed WebSocket connection: the messages' binding stream."""

    def __init__(self, observer: Observer, verdict: ConnectionVerdict, budget: HeldBudget | None = None,
                 record: bool = True) -> None:
        self.observer = observer
        self.verdict = verdict
        self.wire = _Recorder(budget, record)
        self.closed: set[Side] = set()  # senders whose stream ended inside the WebSocket (close frame, failure)

    def judged(self, t: float, sender: Side, data: bytes) -> bytes:
        self.wire.add(t, sender, data)
        stream = self.observer.feed(sender, data)
        failure = self.observer.failure.get(sender)
        if failure is not None and self.verdict.error is None:
            self.verdict.error = f"WebSocket: {failure}"
            if failure.violation is not None and failure.violation.rule in RULES:
                self.verdict.monitor.observe_error(sender, failure.violation, t)
        if (sender in self.observer.ended or sender in self.observer.failure) and sender not in self.closed:
            # A close frame ends the sender's stream, and so does a WebSocket it broke: the monitor judges that
            # end now, not the receiver's answer to it as a close owing what the stream no longer asks (a Ditto
            # server closing after a client's close frame owes no `created`).
            self.closed.add(sender)
            if stream:
                self.verdict.monitor.observe(sender, stream, t)
                stream = b""
            self.close(sender, t)
        return stream

    def close(self, sender: Side, t: float, *, reset: bool = False) -> None:
        """Judge the end of ``sender``'s stream (``reset``: SPEC.md decision y), unless the other side had gone
        past a limit of the kit's own (a ping flood): a peer that closes then refused it, as the kit's own
        endpoints do, and owes nothing."""
        if self.observer.past_a_limit(sender.peer):
            self.verdict.error = self.verdict.error or (f"WebSocket: the {sender} closed once the {sender.peer} "
                                                        "had gone past a limit of the kit's own (not judged)")
        else:
            self.verdict.monitor.close(sender, t, reset=reset)


class _Relayed:
    """One relayed connection's state shared by its two pumps: the two writers, and how it ended."""

    def __init__(self, verdict: ConnectionVerdict, recorder: _Recorder, t0: float, view: _WebSocketView | None,
                 certain: Side | None, budget: HeldBudget | None = None, activity: Activity | None = None) -> None:
        self.verdict = verdict
        self.activity = Activity() if activity is None else activity
        self.monitor = verdict.monitor
        self.recorder = recorder
        self.t0 = t0
        self.view = view
        self.certain = certain  # listen mode: the side judged, whose first MUST violation ends the connection
        self.writers: dict[Side, Any] = {}  # to whom: Side.CLIENT writes to the client
        self.after_verdict = 0  # bytes of ``certain`` relayed once its verdict was certain
        self.kit_closed = False  # the relay ended it: no side's end of stream is judged from here
        self.budget = budget or HeldBudget()  # the run's, shared by every connection

    def close(self, sender: Side, t: float, *, reset: bool = False) -> None:
        """The end of ``sender``'s stream, judged (over WebSocket, as the view decides); ``reset``: by a
        connection reset, which leaves a frame it cut unjudged (SPEC.md decision y)."""
        if self.view is not None:
            self.view.close(sender, t, reset=reset)
        else:
            self.monitor.close(sender, t, reset=reset)

    def ended(self, what: str) -> None:
        if self.verdict.ended is None:
            self.verdict.ended = what

    def close_both(self, why: str) -> None:
        self.kit_closed = True
        self.ended(why)
        for writer in self.writers.values():
            writer.close()

    def within_budget(self) -> bool:
        """Count what the connection holds now, as its owners count it (the monitor's decoders and judge, the
        WebSocket observer, the traces), against the run's budget."""
        held = self.monitor.held + self.recorder.size
        view = self.view
        if view is not None:
            held += view.observer.held + view.wire.size
        return self.budget.hold(self.verdict.index, held)

    def close_at_limit(self) -> None:
        """The connection's bytes took the run's total past its budget: the kit closes it at a limit of its own,
        which no rule sets, so neither side is judged from here (what came before keeps its findings).  What it
        held is let go at once, and both sockets are reset (not closed after their unsent bytes, which a peer
        that does not read would keep), so that the budget's room is there for the other connections now."""
        self.kit_closed = True
        self.verdict.ended = f"the kit closed it at the kit's limit: {self.budget.describe()}, not judged from there"
        self.monitor.release()
        self.budget.let_go(self.verdict.index)
        for writer in self.writers.values():
            reset(writer)

    def close_at_verdict(self, sender: Side) -> None:
        if not self.kit_closed:
            self.activity.closed_at_verdict += 1
        broken = self.monitor.violations(sender)
        rule = broken[0].rule if broken else "a MUST rule"
        self.close_both(f"the kit closed it once the {sender} broke {rule} (the verdict is certain)")

    def allowance(self, sender: Side, size: int) -> int:
        """How many of ``size`` bytes ``sender`` read may still be relayed: all, unless its verdict is certain
        (listen mode), then ``POST_VERDICT_BYTES`` more in all (a goodbye and a close), as the kit's own
        scenarios read once a target broke a MUST rule."""
        if sender is not self.certain or not self.monitor.must_seen[sender]:
            return size
        take = max(0, min(size, POST_VERDICT_BYTES - self.after_verdict))
        self.after_verdict += take
        return take


async def _pump(reader: asyncio.StreamReader, sender: Side, relayed: _Relayed) -> None:
    monitor, recorder, view = relayed.monitor, relayed.recorder, relayed.view
    receiver = Side.SERVER if sender is Side.CLIENT else Side.CLIENT
    verdict = relayed.verdict
    while True:
        try:
            data = await reader.read(READ_SIZE)
        except (ConnectionError, OSError):  # the sender's transport ended abruptly (reset): its close
            if not relayed.kit_closed:
                t = time.monotonic() - relayed.t0
                relayed.ended(f"the {sender}'s connection was reset")
                recorder.add(t, sender, None, reset=True)
                if view is not None:
                    view.wire.add(t, sender, None, reset=True)
                relayed.close(sender, t, reset=True)
            return
        if relayed.kit_closed:
            return  # what came after the relay ended the connection is nobody's to judge
        t = time.monotonic() - relayed.t0
        verdict.sent[str(sender)] += len(data)
        if data:
            data = data[: relayed.allowance(sender, len(data))]
            if not data:
                relayed.close_at_verdict(sender)
                return
        # A whole frame, judged here or by the WebSocket view, is progress, unless it only shows its sender alive
        # (a keepalive: a storm of them is no progress).
        frames, liveness = monitor.frame_count, monitor.liveness_count
        if view is not None:
            if data:
                judged = view.judged(t, sender, data)
            else:
                view.wire.add(t, sender, None)
        else:
            judged = data
        if not data:
            relayed.ended(f"the {sender} closed")
            recorder.add(t, sender, None)
            if view is None or sender not in view.closed:  # a WebSocket close frame ended it already
                relayed.close(sender, t)
            try:
                writer = relayed.writers[receiver]
                if writer.can_write_eof():
                    writer.write_eof()  # pass the half-close on, so the receiver sees the sender's end
            except (ConnectionError, OSError):
                pass  # the receiver went away first (ENOTCONN): nobody is left to tell
            return
        if judged:
            recorder.add(t, sender, judged)
            monitor.observe(sender, judged, t)
        made = monitor.frame_count - frames
        if made > monitor.liveness_count - liveness:
            relayed.activity.progress()
        elif made:  # whole frames, every one a keepalive
            relayed.activity.liveness_since_progress += made
        else:  # bytes short of a frame (over WebSocket, perhaps short of a message)
            relayed.activity.bytes_since_progress += len(data)
        if not relayed.within_budget():
            relayed.close_at_limit()
            return
        try:
            relayed.writers[receiver].write(data)
            await relayed.writers[receiver].drain()
        except (ConnectionError, OSError):
            # The receiver is gone, so the relay stops reading the sender, perhaps inside a frame: that cut
            # is the relay's, not the sender's, whose transport has not ended (no close, so no RS-FRAME-8).
            relayed.ended(f"the {receiver} went away")
            return
        if relayed.after_verdict >= POST_VERDICT_BYTES:
            relayed.close_at_verdict(sender)
            return


async def _relay_one(index: int, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
                     target: Target, binding: Binding, profile: str | None, out_dir: Path | None,
                     verdicts: list[ConnectionVerdict], certain: Side | None = None, limits: Any = None, *,
                     budget: HeldBudget, activity: Activity, keep_traces: bool = True) -> None:
    monitor = Monitor(profile, limits, binding=binding, count_liveness=True)
    verdict = ConnectionVerdict(index, monitor)
    verdicts.append(verdict)
    record = keep_traces or out_dir is not None  # else nobody reads the traces: none are recorded
    recorder = _Recorder(budget, record)
    t0 = time.monotonic()
    server_writer: Any = None
    view = None
    if target.websocket:
        view = _WebSocketView(Observer(framing_for(binding, profile, limits)), verdict, budget, record)
        # The relay passes the WebSocket bytes through: a plain TCP connection to the target.
        target = Target.parse(f"tcp://{target.host}:{target.port}" if ":" not in target.host
                              else f"tcp://[{target.host}]:{target.port}")
    relayed = _Relayed(verdict, recorder, t0, view, certain, budget, activity)
    activity.open.add(relayed)
    activity.progress()
    try:
        server_reader, server_writer = await open_target(target, timeout=5.0)
        relayed.writers = {Side.CLIENT: client_writer, Side.SERVER: server_writer}
        await asyncio.gather(_pump(client_reader, Side.CLIENT, relayed), _pump(server_reader, Side.SERVER, relayed))
    except TargetError as exc:
        verdict.error = str(exc)
    except (ConnectionError, OSError) as exc:  # the relay's own socket call failed: this connection's error only
        verdict.error = f"relay: {exc.strerror or exc}"
    except asyncio.CancelledError:
        verdict.cut = True
    finally:
        activity.open.discard(relayed)
        activity.progress()
        for writer in (client_writer, server_writer):
            if writer is not None:
                if verdict.cut:
                    # Cut by the relay's end (a listen case over, a proxy's duration): reset, not closed after the
                    # bytes still unsent, which a side busy with a backlog (a keepalive storm's) reads for seconds.
                    reset(writer)
                else:
                    writer.close()
        monitor.release()  # nothing more is judged: the partial frames and reassembly go, the findings stay
        budget.let_go(index)
        if keep_traces:
            verdict.trace = recorder.records
            if view is not None:
                verdict.wire_trace = view.wire.records
        if out_dir is not None:
            with (out_dir / f"conn-{index}.trace").open("wb") as stream:
                write_trace(stream, recorder.records)
            (out_dir / f"conn-{index}.json").write_text(json.dumps(verdict.to_json(), indent=1) + "\n")


async def run_proxy(listen: str, target: str, binding: Binding, profile: str | None = None, *,
                    out_dir: Path | None = None, max_connections: int = 100, duration: float = 600.0,
                    on_ready: Callable[[str], None] | None = None, stop: asyncio.Event | None = None,
                    grace: float = 2.0, certain: Side | None = None, limits: Any = None,
                    max_held: int = DEFAULT_MAX_HELD, keep_traces: bool = True,
                    activity: Activity | None = None) -> ProxyResult:
    """Relay and judge until ``max_connections`` have ended, ``duration`` seconds have passed, or
    ``stop`` is set (then connections still open get ``grace`` seconds to end before they are cut).
    ``certain`` (listen mode: the client) is the side judged: once it broke a MUST rule, a connection
    relays ``POST_VERDICT_BYTES`` more of its bytes and is closed (a proxy passes everything on).  ``limits``:
    the binding's limits the monitor judges with (None: the binding's defaults, a proxy's assumption about
    receivers it does not know; listen mode gives the kit's own, as its receiver).  ``max_held``: the bytes all
    connections may hold at once (``HeldBudget``).  ``keep_traces``: each verdict keeps its connection's traces
    (False: only ``out_dir`` gets them, and a long run keeps no trace in memory).  ``activity``: where the
    relay says how its connections progress (listen mode watches it)."""
    activity = Activity() if activity is None else activity
    where = Target.parse(listen)
    to = Target.parse(target)
    if where.scheme == "ws" or to.websocket:
        if where.scheme != "ws" or to.scheme != "ws":
            raise TargetError(f"{listen} -> {target}: over WebSocket the proxy relays the bytes unchanged, so it "
                              "listens on ws:// for a ws:// target (not wss://, not mixed with tcp://)")
        try:
            framing_for(binding, profile, limits)
        except ValueError as exc:
            raise TargetError(f"{target}: {exc}") from None
    elif where.scheme != "tcp":
        raise TargetError(f"{listen}: the proxy listens on tcp://host:port or ws://host:port/path")
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    result = ProxyResult(budget=HeldBudget(max_held))
    tasks: set[asyncio.Task[None]] = set()
    accepted = 0
    finished = asyncio.Event()

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        if accepted >= max_connections:
            writer.close()
            return
        accepted += 1
        if accepted >= max_connections:
            server.close()  # no more connections; the ones open go on
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await _relay_one(accepted, reader, writer, to, binding, profile, out_dir, result.connections, certain,
                             limits, budget=result.budget, activity=activity, keep_traces=keep_traces)
        finally:
            tasks.discard(task)
            if accepted >= max_connections and not tasks:
                finished.set()

    try:
        server = await asyncio.start_server(accept, where.host, where.port)
    except OSError as exc:
        raise TargetError(f"cannot listen on {listen}: {exc.strerror or exc}") from None
    host, port = server.sockets[0].getsockname()[:2]
    if on_ready is not None:
        on_ready(f"ws://{host}:{port}{where.resource}" if where.websocket else f"tcp://{host}:{port}")
    waits = [asyncio.ensure_future(finished.wait())]
    if stop is not None:
        waits.append(asyncio.ensure_future(stop.wait()))
    try:
        await asyncio.wait(waits, timeout=duration, return_when=asyncio.FIRST_COMPLETED)
        server.close()
        if tasks and not finished.is_set():
            await asyncio.wait(list(tasks), timeout=grace)
    finally:
        for waiter in waits:
            waiter.cancel()
        server.close()
        for task in list(tasks):
            task.cancel()
        if tasks:
            await asyncio.wait(list(tasks), timeout=5.0)
    result.connections.sort(key=lambda v: v.index)
    return result
