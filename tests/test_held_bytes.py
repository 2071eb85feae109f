"""What a monitor and a WebSocket observer keep toward frames not yet whole (``held``), read from the owners.

The proxy bounds the total of these across its connections (``tck/proxy/budget.py``), so each count must say
what a sender made the kit keep: a partial frame or line in a decoder, RSocket's reassembly in the judge, a
frame in the WebSocket parser and a message being joined; and it must fall back when the frame completes, the
direction dies (a dead decoder is let go, not kept to the connection's end) or the connection is over.
"""

from __future__ import annotations

import msgpack
import pytest
from websockets.frames import Frame, Opcode

from rsio_tck.binding import get_binding
from rsio_tck.bindings.ditto.codec import DittoLimits
from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import OnNext
from rsio_tck.bindings.rsocket import get_profile
from rsio_tck.bindings.rsocket.frames import Payload, RequestStream, Setup
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor
from rsio_tck.websocket.framing import StreamFraming
from rsio_tck.websocket.link import Observer, WebSocketLink


def _rsio_frame(codec: str) -> bytes:
    return get_codec(codec).encoder(None).encode(OnNext(subscriber=1, element=msgpack.packb("x" * 4000)))


def _rsocket_frame() -> bytes:
    return get_profile("rsocket-1.0").encoder().encode(Payload(stream_id=1, next=True, data=b"x" * 4000))


def _ditto_line() -> bytes:
    from rsio_tck.bindings.ditto.framing import encode_line
    from rsio_tck.bindings.ditto.messages import StreamingNext, Target

    return encode_line(StreamingNext(target=Target(namespace="tck", entity_name="range"), subscription_id="s1",
                                     item={"x": "x" * 4000}))


@pytest.mark.parametrize(("binding", "profile", "frame"), [
    ("rsio", "msgpack", _rsio_frame("msgpack")),
    ("rsio", "varint", _rsio_frame("varint")),
    ("rsocket", "rsocket-1.0", _rsocket_frame()),
    ("ditto", "streaming", _ditto_line()),
])
def test_a_partial_frame_is_held_until_it_is_whole(binding: str, profile: str, frame: bytes) -> None:
    monitor = Monitor(profile, binding=get_binding(binding))
    assert monitor.held == 0
    monitor.observe(Side.SERVER, frame[:1000])
    monitor.observe(Side.SERVER, frame[1000:3000])
    assert monitor.held == 3000
    monitor.observe(Side.SERVER, frame[3000:] + frame[:10])  # the rest, and the start of the next one
    assert monitor.held == 10


def _setup_and_request() -> bytes:
    encoder = get_profile("rsocket-1.0").encoder()
    setup = Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"a/b", data_mime=b"a/b")
    return encoder.encode(setup) + encoder.encode(RequestStream(stream_id=1, initial_request_n=100, data=b"s"))


def test_rsocket_reassembly_is_held_until_the_payload_is_whole_or_the_chain_is_dropped() -> None:
    from rsio_tck.bindings.rsocket.fragments import CHAIN_COST

    encoder = get_profile("rsocket-1.0").encoder()
    monitor = Monitor("rsocket-1.0", binding=get_binding("rsocket"))
    monitor.observe(Side.CLIENT, _setup_and_request())
    fragment = encoder.encode(Payload(stream_id=1, next=True, follows=True, data=b"x" * 1000))
    monitor.observe(Side.SERVER, fragment * 5)
    assert monitor.held == CHAIN_COST + 5000  # the chain's bytes, as the reassembler charges them
    monitor.observe(Side.SERVER, encoder.encode(Payload(stream_id=1, next=True, data=b"x")))  # the last one
    assert monitor.held == 0 and not monitor.findings
    monitor.observe(Side.SERVER, fragment * 2)
    assert monitor.held == CHAIN_COST + 2000
    monitor.release()  # the connection is over: the chain can never complete
    assert monitor.held == 0 and not monitor.findings
    monitor.observe(Side.SERVER, fragment)  # nothing is decoded after release
    assert monitor.held == 0 and monitor.bytes_ignored[Side.SERVER] == len(fragment)


def test_a_dead_direction_lets_go_of_its_partial_line() -> None:
    # Before, a Ditto line that broke DITTO-LINE-1 (16 MiB without a newline, at the binding's limit) stayed in
    # the dead decoder to the end of the connection, and in the proxy's verdict after it.
    monitor = Monitor("streaming", DittoLimits(max_message=5000), binding=get_binding("ditto"))
    monitor.observe(Side.CLIENT, b'{"topic":"' + b"a" * 4000)
    assert monitor.held == 4010
    monitor.observe(Side.CLIENT, b"a" * 2000)  # past the line limit: the direction is dead
    assert [f.rule for f in monitor.findings] == ["DITTO-LINE-1"]
    assert monitor.held == 0
    monitor.observe(Side.SERVER, _ditto_line()[:100])  # the other direction is still read
    assert monitor.held == 100


def test_a_direction_that_ends_inside_a_frame_lets_go_of_it() -> None:
    monitor = Monitor("rsocket-1.0", binding=get_binding("rsocket"))
    monitor.observe(Side.SERVER, _rsocket_frame()[:2000])
    assert monitor.held == 2000
    assert [f.rule for f in monitor.close(Side.SERVER)] == ["RS-FRAME-8"]
    assert monitor.held == 0


def test_the_observer_holds_a_frame_in_progress() -> None:
    client = WebSocketLink(Side.CLIENT, StreamFraming(), uri="ws://127.0.0.1:1/")
    observer = Observer(StreamFraming())
    (upgrade,) = client.data_to_send()
    assert observer.feed(Side.CLIENT, upgrade) == b"" and observer.held == 0
    frame = Frame(Opcode.BINARY, b"y" * 5000).serialize(mask=True)
    observer.feed(Side.CLIENT, frame[:3000])  # the parser keeps the frame until it is whole
    assert observer.held == 3000 - 8  # the payload so far (its 8-byte header is parsed)
    assert observer.feed(Side.CLIENT, frame[3000:]) == b"y" * 5000
    assert observer.held == 0


def test_the_observer_holds_a_message_joined_from_its_frames() -> None:
    from rsio_tck.bindings.rsocket.websocket import RSocketFraming

    framing = RSocketFraming(get_profile("rsocket-1.0"))
    client = WebSocketLink(Side.CLIENT, framing, uri="ws://127.0.0.1:1/")
    observer = Observer(framing)
    observer.feed(Side.CLIENT, client.data_to_send()[0])
    first = Frame(Opcode.BINARY, b"z" * 2000, fin=False).serialize(mask=True)
    more = Frame(Opcode.CONT, b"z" * 2000, fin=False).serialize(mask=True)
    assert observer.feed(Side.CLIENT, first + more) == b""
    assert observer.held == 4000  # a message's frames are joined (RSocket: one message is one frame)
    last = Frame(Opcode.CONT, b"z", fin=True).serialize(mask=True)
    assert len(observer.feed(Side.CLIENT, last)) == 3 + 4001  # the frame, with the length prefix put back
    assert observer.held == 0


def test_a_fragment_chain_keeps_one_copy_of_its_bytes() -> None:
    # The reassembler charges a chain's bytes once; it kept the first fragment's bytes twice (in the frame it
    # keeps, and copied into the chain), so a large first fragment cost twice what ``held`` said.
    import gc
    import tracemalloc

    from rsio_tck.bindings.rsocket.fragments import Reassembler

    reassembler = Reassembler()
    tracemalloc.start()
    try:
        frame = Payload(stream_id=1, next=True, follows=True, data=bytes(4 << 20))
        assert reassembler.push(frame) is None
        del frame
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reassembler.held >= 4 << 20
    assert kept < (4 << 20) + (1 << 20), kept  # one copy (and a little), not two
