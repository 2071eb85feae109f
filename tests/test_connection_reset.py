"""A frame cut by a connection reset is not judged (SPEC.md decision y), in every binding and every role.

An orderly end (FIN) inside a frame or line breaks the binding's rule for it (ERR-6, RS-FRAME-8, DITTO-LINE-2).
A reset (RST) discards what either kernel still held, so what arrived may end inside a frame its sender wrote
whole: seen in the interop grid, where the rsocket-rust client exited with a server's flood unread and the
proxy charged it RS-FRAME-8 for the CANCEL the reset cut.  The monitor, the kit's own session, the proxy's relay,
traces and pcaps all keep the two ends apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import msgpack
import pytest

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import OnNext
from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import Payload
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor
from rsio_tck.monitor.trace import TraceRecord, read_trace, write_trace
from rsio_tck.report.pcap import iter_trace_packets

TIMEOUT = 10.0


def _ditto_line() -> bytes:
    from rsio_tck.bindings.ditto.framing import encode_line
    from rsio_tck.bindings.ditto.messages import StreamingNext, Target

    return encode_line(StreamingNext(target=Target(namespace="tck", entity_name="range"), subscription_id="s1",
                                     item={"x": "x" * 64}))


def _rsio(codec: str) -> bytes:
    return get_codec(codec).encoder(None).encode(OnNext(subscriber=1, element=msgpack.packb("x" * 64)))


def _rsocket() -> bytes:
    return get_profile("rsocket-1.0").encoder().encode(Payload(stream_id=1, next=True, data=b"x" * 64))


# (binding, profile, a whole frame or line, the rule an orderly end inside it breaks)
CASES = [("rsio", "msgpack", _rsio("msgpack"), "ERR-6"), ("rsio", "varint", _rsio("varint"), "ERR-6"),
         ("rsocket", "rsocket-1.0", _rsocket(), "RS-FRAME-8"), ("ditto", "streaming", _ditto_line(), "DITTO-LINE-2")]


@pytest.mark.parametrize(("binding", "profile", "whole", "rule"), CASES, ids=[c[0] + "-" + c[1] for c in CASES])
def test_an_orderly_end_inside_a_frame_breaks_the_rule_and_a_reset_does_not(binding: str, profile: str,
                                                                             whole: bytes, rule: str) -> None:
    for reset, expected in ((False, [rule]), (True, [])):
        monitor = Monitor(profile, binding=get_binding(binding))
        monitor.observe(Side.SERVER, whole[: len(whole) // 2])
        assert monitor.held == len(whole) // 2
        assert [f.rule for f in monitor.close(Side.SERVER, reset=reset)] == expected
        assert monitor.held == 0  # the cut frame is let go either way


def test_a_trace_keeps_a_reset_apart_from_a_close_and_a_replay_judges_it_so() -> None:
    half = _rsocket()[:20]
    for reset, expected in ((False, ["RS-FRAME-8"]), (True, [])):
        records = [TraceRecord(t=0.0, sender=Side.SERVER, data=half), TraceRecord(t=0.1, sender=Side.SERVER,
                                                                                   data=None, reset=reset)]
        stream = io.BytesIO()
        write_trace(stream, records)
        stream.seek(0)
        back = list(read_trace(stream))
        assert back == records
        monitor = Monitor("rsocket-1.0", binding=get_binding("rsocket"))
        assert [f.rule for f in monitor.replay(back)] == expected


def test_a_pcap_ends_a_reset_direction_with_rst_and_a_closed_one_with_fin() -> None:
    for reset, flag in ((False, "F"), (True, "R")):
        records = [TraceRecord(t=0.0, sender=Side.CLIENT, data=b"abc"),
                   TraceRecord(t=0.1, sender=Side.CLIENT, data=None, reset=reset)]
        packets = list(iter_trace_packets(records, build=lambda me, peer, flags, t, payload, ack: (me.port, flags)))
        ends = [(port, flags) for port, flags in packets if "F" in flags or "R" in flags]
        assert ends[0] == (40000, flag + "A"), packets


@contextmanager
def _target_cutting_a_frame(reset: bool) -> Iterator[str]:
    """An RSocket server that, on each connection that sends something (the kit's SETUP), writes half a PAYLOAD
    frame and ends the connection: with a reset (SO_LINGER 0) or an orderly close.  Stops with the test."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(TIMEOUT)
    stopping = threading.Event()

    def one(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(TIMEOUT)
            if not conn.recv(65536):  # a reachability probe that sent nothing
                return
            conn.sendall(_rsocket()[:20])
            if reset:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                conn.shutdown(socket.SHUT_WR)
                while conn.recv(65536):  # until the kit closes (or the time-out)
                    pass

    def serve() -> None:
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            try:
                one(conn)
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stopping.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() waiting in the thread
        listener.close()
        thread.join(TIMEOUT)


@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_the_kit_as_client_does_not_charge_a_frame_a_reset_cut(reset: bool) -> None:
    from rsio_tck.scenarios import RunConfig, load_directory, run_suite

    scenario = [s for s in load_directory(binding="rsocket") if s.id == "RSIM-001"]
    with _target_cutting_a_frame(reset) as url:
        (result,) = asyncio.run(asyncio.wait_for(run_suite(scenario, RunConfig(target=url, codec="rsocket-1.0",
                                                                               binding="rsocket"), jobs=1), 30))
    rules = {v["rule"] for v in result.violations}
    assert ("RS-FRAME-8" in rules) is not reset, result.explain()
    assert rules, result.explain()  # five elements never came either way
    ending = "(target reset the connection)" if reset else "(target closed)"
    assert ending in result.explain(), result.explain()
