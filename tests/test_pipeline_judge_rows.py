"""``framing.judge_rows`` held to the row-by-row walk it replaced: the same findings, with the same times.

``judge_rows`` groups a connection's rows into the chunks it feeds the monitor (consecutive rows of one direction,
each eof alone) with comprehensions instead of a Python step per row.  ``_reference`` is the row-by-row walk it
replaced, kept here as the specification: on any rows (frames, empty and missing data, undecodable bytes, eofs of
either direction in any place, directions in any order), both feed the monitor the same chunks at the same times,
so every finding (rule, side, frame index, time, message) is the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import Cancel, Payload, RequestN, RequestStream, Setup
from rsio_tck.monitor import Finding, Monitor
from rsio_tck.monitor.trace import SENDERS
from rsio_tck.pipeline.framing import EOF, UNDECODABLE, judge_rows

ENCODE = get_profile("rsocket-1.0").encoder().encode
CLIENT_FRAMES = [ENCODE(Setup(major_version=1, keepalive_interval=30_000, max_lifetime=90_000,
                              metadata_mime=b"application/octet-stream", data_mime=b"text/plain")),
                 ENCODE(RequestStream(stream_id=1, initial_request_n=3, data=b"tck/range?count=5")),
                 ENCODE(RequestN(stream_id=1, request_n=2)), ENCODE(Cancel(stream_id=1))]
SERVER_FRAMES = [ENCODE(Payload(stream_id=1, next=True, data=str(i).encode())) for i in range(6)] + [
    ENCODE(Payload(stream_id=1, complete=True)), ENCODE(Payload(stream_id=1, next=True, data=b"9"))]


def _reference(directions: Sequence[str], data: Sequence[bytes | None], times: Sequence[float],
               kinds: Sequence[str], codec: str, binding: str) -> list[Finding]:
    monitor = Monitor(codec, binding=binding)
    frame_times: list[float] = []
    pending: list[bytes] = []
    pending_dir, pending_t = "", 0.0
    for direction, chunk, t, kind in zip(directions, data, times, kinds):
        if pending and (direction != pending_dir or kind == EOF):
            monitor.observe(SENDERS[pending_dir], b"".join(pending), pending_t)
            pending = []
        if kind == EOF:
            monitor.close(SENDERS[direction], t)
        elif chunk:
            if not pending:
                pending_dir, pending_t = direction, t
            pending.append(chunk)
            if kind != UNDECODABLE:
                frame_times.append(t)
    if pending:
        monitor.observe(SENDERS[pending_dir], b"".join(pending), pending_t)
    out = []
    for finding in monitor.findings:
        index = finding.frame_index
        if index is not None and 0 <= index < len(frame_times) and finding.t != frame_times[index]:
            finding = replace(finding, t=frame_times[index])
        out.append(finding)
    return out


ROW = st.one_of(
    st.tuples(st.just("c2s"), st.sampled_from(CLIENT_FRAMES), st.just("FRAME")),
    st.tuples(st.just("s2c"), st.sampled_from(SERVER_FRAMES), st.just("FRAME")),
    st.tuples(st.sampled_from(("c2s", "s2c")), st.sampled_from((b"", None)), st.just("FRAME")),
    st.tuples(st.sampled_from(("c2s", "s2c")), st.sampled_from((b"\x00\x00", b"\xff" * 9)), st.just(UNDECODABLE)),
    st.tuples(st.sampled_from(("c2s", "s2c")), st.just(b""), st.just(EOF)),
)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(ROW, max_size=40), steps=st.lists(st.sampled_from((0.0, 0.25, 1.0)), min_size=40, max_size=40))
def test_judge_rows_finds_what_the_row_by_row_walk_finds(rows: list[tuple[str, bytes | None, str]],
                                                          steps: list[float]) -> None:
    directions = [direction for direction, _, _ in rows]
    data = [chunk for _, chunk, _ in rows]
    kinds = [kind for _, _, kind in rows]
    times = [sum(steps[: i + 1]) for i in range(len(rows))]
    expected = _reference(directions, data, times, kinds, "rsocket-1.0", "rsocket")
    assert judge_rows(directions, data, times, kinds, "rsocket-1.0", "rsocket") == expected


def test_a_connection_with_findings_gives_them_at_their_frames_times() -> None:
    rows = [("c2s", CLIENT_FRAMES[0], "FRAME", 0.0), ("c2s", CLIENT_FRAMES[1], "FRAME", 0.1)]
    rows += [("s2c", frame, "FRAME", t) for frame, t in zip(SERVER_FRAMES[:5], (0.2, 0.3, 0.4, 0.5, 0.6))]
    rows += [("c2s", b"", EOF, 1.0), ("s2c", b"", EOF, 1.1)]
    columns = [list(column) for column in zip(*rows)]
    directions, data, kinds, times = columns
    found = judge_rows(directions, data, times, kinds, "rsocket-1.0", "rsocket")
    assert [(f.rule, f.frame_index, f.t) for f in found if f.rule == "RS-FLOW-2"] == [("RS-FLOW-2", 5, 0.5),
                                                                                      ("RS-FLOW-2", 6, 0.6)]
    assert found == _reference(directions, data, times, kinds, "rsocket-1.0", "rsocket")
