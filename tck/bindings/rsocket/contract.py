"""RSocket's test-publisher contract (``bindings.md`` §2): what a target must send for each tck/ name.

Theory of operation: when a request's data names a test publisher (the grammar
and parser of ``rsio_tck.testpubs``, shared with RS-IO), the stream is *watched*:
each whole PAYLOAD and ERROR its responder sends is compared with what that
publisher must emit.  Elements are the decimal UTF-8 text of the integer
(``tck/range``, ``tck/infinite``, ``tck/error``) or the section 8 byte pattern
(``tck/large``, whole after reassembly); request-response answers with the first
element, an empty completion, or the ERROR; ``tck/echo`` on a channel sends back
every later inbound payload and completes after the inbound completes.  Names
the target need not serve on RSocket (``tck/fixed``, ``tck/subscribe``, names
outside ``tck/``) are not watched.  A requester's CANCEL or ERROR ends the watch,
and an ended watch no longer keeps its stream off the judge's fast paths.

Fast path: on a watched request-stream of a decimal publisher (``tck/range``,
``tck/infinite``, ``tck/error``), the judge asks ``due`` whether the data of a
run of plain PAYLOAD(N) frames is exactly the publisher's next elements, none
beyond its count; if so (and the stream's demand covers them) it counts them
with ``took`` instead of judging each frame, which would find nothing.  Any
other frame, or a run ``due`` declines, is judged frame by frame;
``tests/test_rsocket_judge_watched.py`` holds the two paths to each other.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...errors import Side
from ...semantics.streams import StreamState
from ...testpubs import Error as ErrorPub
from ...testpubs import Infinite, Large, Malformed, Range, TestPublisher, count_of, large_bytes, parse
from .frames import APPLICATION_ERROR, Error, Payload
from .interactions import Kind, RStream
from .model import ConnectionModel

ECHO = "tck/echo"
# bindings.md §2's fire-and-forget publishers: served on RSocket, but what they answer (a count kept
# across connections) is not known from one connection, so they are not watched.
SERVED_UNWATCHED = frozenset({"tck/fnf", "tck/fnf-count"})


@dataclass(slots=True)
class Watch:
    spec: TestPublisher | Malformed | None  # None: tck/echo
    kind: Kind
    name: str
    index: int = 0  # elements the responder sent
    echo: deque[bytes] = field(default_factory=deque)  # tck/echo: inbound payloads not yet sent back
    inbound_done: bool = False
    stream: RStream | None = None  # the stream watched: its ``watched`` flag ends with the watch
    # A request-stream of a decimal publisher: element i is the decimal text of first + i, and there are at most
    # ``limit`` (None: no end); ``first`` is None for any other watch.  Read by ``due``.
    first: int | None = None
    limit: int | None = None


def _rule(spec: TestPublisher | Malformed | None, kind: Kind) -> str:
    if spec is None:
        return "RS-TCK-7"
    if isinstance(spec, Malformed):
        return "RS-TCK-5"
    if kind is Kind.RESPONSE:
        return "RS-TCK-6"
    return {Range: "RS-TCK-1", Infinite: "RS-TCK-2", ErrorPub: "RS-TCK-3", Large: "RS-TCK-4"}[type(spec)]


def _element(spec: TestPublisher, index: int) -> bytes:
    if isinstance(spec, (Range, Infinite)):
        return str(spec.start + index).encode()
    if isinstance(spec, ErrorPub):
        return str(index).encode()
    assert isinstance(spec, Large)
    return large_bytes(index, 0, spec.size)


def _shown(data: bytes) -> str:
    return repr(data[:24]) + (f"...({len(data)} bytes)" if len(data) > 24 else "")


class ContractJudge:
    def __init__(self, model: ConnectionModel) -> None:
        self.model = model
        self.watches: dict[int, Watch] = {}

    def request(self, sid: int, st: RStream, data: bytes) -> None:
        """A whole request opened stream ``sid``: watch it if its data names a test publisher."""
        self._end(sid)
        try:
            name = data.decode("utf-8")
        except UnicodeDecodeError:
            return
        if st.kind is Kind.CHANNEL:
            if name == ECHO:
                done = st.inbound is not None and st.inbound.state is StreamState.DONE  # C on REQUEST_CHANNEL
                self._watch(sid, st, Watch(None, st.kind, name, inbound_done=done))
            return
        if st.kind not in (Kind.STREAM, Kind.RESPONSE) or name.partition("?")[0] in SERVED_UNWATCHED:
            return
        spec = parse(name)  # tck/echo outside a channel is a name the target does not serve: Malformed
        if isinstance(spec, Malformed) and not spec.certain:
            return
        if isinstance(spec, (Range, Infinite, ErrorPub, Large, Malformed)):
            self._watch(sid, st, Watch(spec, st.kind, name))

    def _watch(self, sid: int, st: RStream, watch: Watch) -> None:
        watch.stream = st
        spec = watch.spec
        if watch.kind is Kind.STREAM and isinstance(spec, (Range, Infinite, ErrorPub)):  # decimal elements
            watch.first = spec.start if isinstance(spec, (Range, Infinite)) else 0
            watch.limit = count_of(spec)
        self.watches[sid] = watch
        st.watched = True
        st.refresh()

    def _end(self, sid: int) -> Watch | None:
        """The watch of stream ``sid`` ends: nothing more of that stream is compared with a publisher."""
        watch = self.watches.pop(sid, None)
        if watch is not None and watch.stream is not None:
            watch.stream.watched = False
            watch.stream.refresh()
        return watch

    def due(self, sid: int, datas: Sequence[bytes]) -> bool:
        """Whether ``datas`` (plain elements its responder sends next on request-stream ``sid``) are exactly the
        next elements of its decimal publisher, none beyond its count: ``responder_payload`` would find nothing
        in them and only count them.  Changes nothing."""
        watch = self.watches.get(sid)
        if watch is None or watch.first is None:
            return False
        index, n = watch.index, len(datas)
        if watch.limit is not None and index + n > watch.limit:
            return False
        first = watch.first + index
        if n == 1:
            return datas[0] == str(first).encode()
        return tuple(datas) == tuple(map(str.encode, map(str, range(first, first + n))))

    def took(self, sid: int, n: int) -> None:
        """The judge took ``n`` elements that ``due`` found due, without ``responder_payload``."""
        self.watches[sid].index += n

    def _fail(self, watch: Watch, side: Side, sid: int, why: str) -> None:
        self.model.report(_rule(watch.spec, watch.kind), side, f"{side} answered {watch.name!r} on stream {sid}: {why}")

    def requester_frame(self, sid: int, frame: Payload | Error | None) -> None:
        """The requester's PAYLOAD (tck/echo input), or its ERROR or CANCEL (None), on a watched stream."""
        watch = self.watches.get(sid)
        if watch is None:
            return
        if not isinstance(frame, Payload):
            self._end(sid)
            return
        if frame.next:
            watch.echo.append(frame.data)
        watch.inbound_done = watch.inbound_done or frame.complete

    def responder_payload(self, side: Side, sid: int, frame: Payload, complete: bool) -> None:
        watch = self.watches.get(sid)
        if watch is None:
            return
        spec = watch.spec
        if spec is None:  # tck/echo
            if frame.next:
                want = watch.echo.popleft() if watch.echo else None
                if want is None:
                    self._fail(watch, side, sid, f"element {_shown(frame.data)} echoes no inbound payload")
                elif frame.data != want:
                    self._fail(watch, side, sid, f"element {_shown(frame.data)} where the echo is {_shown(want)}")
            if complete and not (watch.inbound_done and not watch.echo):
                self._fail(watch, side, sid, "completed before the inbound completed and was echoed")
            if complete:
                self._end(sid)
            return
        if isinstance(spec, Malformed):
            self._fail(watch, side, sid, f"PAYLOAD where ERROR[APPLICATION_ERROR] was due ({spec.reason})")
            self._end(sid)
            return
        count = count_of(spec)
        if watch.kind is Kind.RESPONSE:
            self._response(watch, side, sid, spec, frame, count)
            return
        if frame.next:
            if count is not None and watch.index >= count:
                self._fail(watch, side, sid, f"element {watch.index} beyond the {count} it emits")
            elif frame.data != _element(spec, watch.index):
                self._fail(watch, side, sid, f"element {watch.index} is {_shown(frame.data)}, "
                           f"not {_shown(_element(spec, watch.index))}")
            watch.index += 1
        if complete:
            if count is None or isinstance(spec, ErrorPub) or watch.index != count:
                self._fail(watch, side, sid, f"completed after {watch.index} element(s)" + (
                    "; it never completes" if count is None else
                    f" where ERROR comes after {count}" if isinstance(spec, ErrorPub) else f" of {count}"))
            self._end(sid)

    def _response(self, watch: Watch, side: Side, sid: int, spec: TestPublisher, frame: Payload,
                  count: int | None) -> None:
        self._end(sid)  # one answer: the first element, an empty completion, or the ERROR
        due = ("the ERROR" if isinstance(spec, ErrorPub) and spec.after == 0
               else "an empty completion" if count == 0 else "the first element")
        if frame.next and due == "the first element":
            if frame.data != _element(spec, 0):
                self._fail(watch, side, sid, f"response {_shown(frame.data)}, not the first element "
                           f"{_shown(_element(spec, 0))}")
        elif frame.next or due != "an empty completion":
            self._fail(watch, side, sid, f"{'an element' if frame.next else 'an empty completion'} where {due} "
                       "is due")

    def responder_error(self, side: Side, sid: int, frame: Error) -> None:
        watch = self._end(sid)
        if watch is None or watch.spec is None:
            return
        spec = watch.spec
        if frame.error_code != APPLICATION_ERROR:
            self._fail(watch, side, sid, f"ERROR code {frame.error_code:#x}, not APPLICATION_ERROR")
        elif isinstance(spec, ErrorPub):
            at = 0 if watch.kind is Kind.RESPONSE else watch.index
            if at != spec.after or frame.data != spec.message.encode():
                self._fail(watch, side, sid, f"ERROR {_shown(frame.data)} after {at} element(s), not "
                           f"{spec.message!r} after {spec.after}")
        elif not isinstance(spec, Malformed):
            self._fail(watch, side, sid, f"ERROR {_shown(frame.data)} from a publisher that does not fail")
