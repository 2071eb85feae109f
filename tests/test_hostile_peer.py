"""The reference peer's hostile modes themselves (``rsio-peer --hostile MODE``): what each writes, and its bounds.

The kit's side (bounded runs against every mode) is in ``test_hostile_rsio.py``,
``test_hostile_rsocket.py`` and ``test_hostile_ditto.py``; here a bare asyncio client plays the kit's opening and looks at the bytes.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
from hostile_target import HostileTarget
from websockets.client import ClientProtocol
from websockets.frames import Frame, Opcode
from websockets.uri import parse_uri

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsio.wire.frames import ClientHello, OnNext, OnNextPart, ServerHello
from rsio_tck.bindings.rsocket.codec import FRAME_MAX
from rsio_tck.bindings.rsocket.frames import Payload, Setup
from rsio_tck.errors import ProtocolViolation
from rsio_tck.transport import Target

# Slow by nature (each waits out a hostile peer within a bound of tens of seconds): the tier `make interop`
# runs, not `make test` (issue 29).
pytestmark = pytest.mark.hostile

PEER = [sys.executable, "-m", "rsio_tck.reference_peer"]
WAIT = 10.0  # seconds any read of these tests may wait


def _setup() -> bytes:
    setup = Setup(keepalive_interval=30_000, max_lifetime=90_000, metadata_mime=b"text/plain", data_mime=b"text/plain")
    return get_binding("rsocket").encoder("rsocket-1.0").encode(setup)  # type: ignore[no-any-return]


async def _tcp(url: str, opening: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    target = Target.parse(url)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(target.host, target.port), WAIT)
    writer.write(opening)
    return reader, writer


async def _read_all(reader: asyncio.StreamReader, limit: int) -> bytes:
    """Everything until the peer closes (at most ``limit`` bytes, each read within ``WAIT``)."""
    out = bytearray()
    while len(out) <= limit:
        data = await asyncio.wait_for(reader.read(65536), WAIT)
        if not data:
            break
        out += data
    return bytes(out)


@pytest.mark.parametrize("binding", ["rsio", "rsocket", "ditto"])
def test_list_prints_every_mode_with_one_line(binding: str) -> None:
    done = subprocess.run([*PEER, "--binding", binding, "--hostile", "list"], capture_output=True, text=True,
                          timeout=30, check=True)
    lines = done.stdout.splitlines()
    names = [line.split()[0] for line in lines]
    common = ["garbage", "flood", "huge-length", "silent", "slowloris", "half-close", "mid-frame-close",
              "ws-huge-frame", "ws-ping-flood", "ws-continuations", "ws-close-then-data"]
    own = {"rsio": ["endless-split", "unknown-next-flood"],
           "rsocket": ["endless-fragments", "keepalive-storm", "lease-storm"],
           "ditto": ["endless-line", "unclosed-json", "invalid-utf8", "deep-json", "unknown-next-flood"]}[binding]
    assert names == common + own
    assert all(len(line.split()) > 3 for line in lines)


@pytest.mark.parametrize(("args", "said"), [
    (["--binding", "rsocket", "--listen", "tcp://127.0.0.1:0", "--hostile", "ws-ping-flood"], "needs a ws://"),
    (["--binding", "ditto", "--listen", "tcp://127.0.0.1:0", "--hostile", "nonsense"], "no such mode"),
    (["--binding", "rsocket", "--listen", "tcp://127.0.0.1:0", "--hostile", "deep-json"], "no such mode"),
    (["--binding", "rsocket", "--listen", "unix:/tmp/x.sock", "--hostile", "garbage"], "tcp:// or ws://"),
])
def test_a_mode_that_cannot_run_is_one_line_and_exit_2(args: list[str], said: str) -> None:
    done = subprocess.run([*PEER, *args], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_garbage_is_seeded_and_stops_at_the_connection_byte_budget() -> None:
    budget = 300_000

    async def one(url: str) -> bytes:
        reader, writer = await _tcp(url, _setup())
        try:
            return await _read_all(reader, 2 * budget)
        finally:
            writer.close()

    with HostileTarget("rsocket", "garbage", max_bytes=budget, seed=7) as url:
        first = asyncio.run(one(url))
    with HostileTarget("rsocket", "garbage", max_bytes=budget, seed=7) as url:
        again = asyncio.run(one(url))
    # The budget is checked before each 64 KiB write: at most one write over it, then the peer closes.
    assert budget <= len(first) < budget + 65536 + 1
    assert first == again  # the same seed, the same bytes


def test_huge_length_announces_the_largest_frame_then_trickles() -> None:
    async def go(url: str) -> bytes:
        reader, writer = await _tcp(url, _setup())
        try:
            got = await asyncio.wait_for(reader.readexactly(3 + 6 + 2), WAIT)  # prefix, header, two trickled bytes
        finally:
            writer.close()
        return got

    with HostileTarget("rsocket", "huge-length") as url:
        got = asyncio.run(go(url))
    assert int.from_bytes(got[:3], "big") == FRAME_MAX and got[-2:] == b"\x2a\x2a"


@pytest.mark.parametrize("codec", ["msgpack", "varint"])
def test_rsio_answers_the_client_hello_then_announces_the_largest_element(codec: str) -> None:
    """serverHello first (HS-1, HS-6), then an onNext whose element length is the largest the codec can
    write: the kit's decoder refuses it on the header (ERR-8), before a byte of the body."""
    rsio = get_binding("rsio")

    async def go(url: str) -> bytes:
        reader, writer = await _tcp(url, rsio.encoder(codec).encode(ClientHello(version=0)))
        try:
            return await asyncio.wait_for(reader.readexactly(3 + 13), WAIT)  # serverHello, the longest header
        finally:
            writer.close()

    with HostileTarget("rsio", "huge-length", profile=codec) as url:
        got = asyncio.run(go(url))
    decoder = rsio.decoder(codec)
    with pytest.raises(ProtocolViolation) as refused:
        decoder.feed(got)
    assert decoder.salvaged == [ServerHello(version=0, extensions=())]
    assert refused.value.rule == "ERR-8" and str(2**32 - 1 if codec == "msgpack" else 2**64 - 1) in str(refused.value)


@pytest.mark.parametrize(("mode", "kind"), [("flood", OnNext), ("endless-split", OnNextPart),
                                            ("unknown-next-flood", OnNext)])
def test_rsio_floods_are_valid_frames_after_the_server_hello(mode: str, kind: type) -> None:
    rsio = get_binding("rsio")

    async def go(url: str) -> list[object]:
        reader, writer = await _tcp(url, rsio.encoder("varint").encode(ClientHello(version=0)))
        decoder = rsio.decoder("varint")
        frames: list[object] = []
        while len(frames) < 500:
            frames += decoder.feed(await asyncio.wait_for(reader.read(65536), WAIT))
        writer.close()
        return frames

    with HostileTarget("rsio", mode, profile="varint") as url:
        frames = asyncio.run(go(url))
    assert frames[0] == ServerHello(version=0, extensions=())
    assert all(type(f) is kind for f in frames[1:])
    ids = {f.subscriber for f in frames[1:]}  # type: ignore[attr-defined]
    assert ids == ({2**62 + 27} if mode == "unknown-next-flood" else {1})


def test_half_close_ends_the_write_side_and_keeps_the_socket() -> None:
    async def go(url: str) -> bool:
        reader, writer = await _tcp(url, _setup())
        assert await asyncio.wait_for(reader.read(100), WAIT) == b""  # the peer's FIN
        writer.write(b"still open?")
        await asyncio.wait_for(writer.drain(), WAIT)
        alive = not writer.is_closing()
        writer.close()
        return alive

    with HostileTarget("rsocket", "half-close") as url:
        assert asyncio.run(go(url))


def test_flood_writes_valid_frames() -> None:
    async def go(url: str) -> list[object]:
        reader, writer = await _tcp(url, _setup())
        decoder = get_binding("rsocket").decoder("rsocket-1.0")
        frames: list[object] = []
        while len(frames) < 1000:
            frames += decoder.feed(await asyncio.wait_for(reader.read(65536), WAIT))
        writer.close()
        return frames

    with HostileTarget("rsocket", "flood") as url:
        frames = asyncio.run(go(url))
    assert all(isinstance(f, Payload) and f.stream_id == 1 and f.next for f in frames)


async def _websocket(url: str, opening: bytes, frames_wanted: int, *, text: bool = False) -> list[Frame]:
    """Upgrade, send ``opening`` as one message, collect ``frames_wanted`` frames the server sends."""
    target = Target.parse(url)
    client = ClientProtocol(parse_uri(target.websocket_uri), max_size=None)
    reader, writer = await asyncio.wait_for(asyncio.open_connection(target.host, target.port), WAIT)
    client.send_request(client.connect())
    for chunk in client.data_to_send():
        writer.write(chunk)
    frames: list[Frame] = []
    sent = False
    try:
        while len(frames) < frames_wanted:
            data = await asyncio.wait_for(reader.read(65536), WAIT)
            if not data:
                break
            client.receive_data(data)
            for event in client.events_received():
                if isinstance(event, Frame):
                    frames.append(event)
            if not sent and client.handshake_exc is None and client.state.name == "OPEN":
                if text:
                    client.send_text(opening)
                else:
                    client.send_binary(opening)
                for chunk in client.data_to_send():
                    if chunk:
                        writer.write(chunk)
                sent = True
    finally:
        writer.close()
    return frames


def test_websocket_modes_upgrade_then_send_their_frames() -> None:
    setup = _setup()[3:]  # over WebSocket a frame carries no length prefix
    with HostileTarget("rsocket", "ws-ping-flood", "ws") as url:
        pings = asyncio.run(_websocket(url, setup, 100))
    assert len(pings) >= 100 and all(f.opcode is Opcode.PING for f in pings)
    with HostileTarget("rsocket", "ws-close-then-data", "ws") as url:
        after = asyncio.run(_websocket(url, setup, 3))
    assert after and after[0].opcode is Opcode.CLOSE  # websockets drops what follows a close: it saw the close
    with HostileTarget("rsocket", "flood", "ws") as url:
        messages = asyncio.run(_websocket(url, setup, 50))
    decoded = [get_binding("rsocket").decoder("rsocket-1.0", length_prefix=False).feed(f.data)  # type: ignore[call-arg]
               for f in messages]
    assert all(f.opcode is Opcode.BINARY and f.fin for f in messages)
    assert all(isinstance(d[0], Payload) for d in decoded)
    with HostileTarget("ditto", "endless-line", "ws") as url:
        subscribe = b'{"topic":"tck/range/things/twin/streaming/subscribeForPersistedEvents","path":"/","value":{}}'
        endless = asyncio.run(_websocket(url, subscribe, 20, text=True))
    assert endless[0].opcode is Opcode.TEXT and not any(f.fin for f in endless)
    assert all(f.opcode is Opcode.CONT for f in endless[1:])


def test_rsio_over_websocket_is_a_byte_stream_in_binary_messages() -> None:
    """RS-IO's framing (StreamFraming): the serverHello and the flood's frames arrive in binary messages
    whose concatenation decodes as the TCP stream would."""
    rsio = get_binding("rsio")
    hello = rsio.encoder("msgpack").encode(ClientHello(version=0))
    with HostileTarget("rsio", "flood", "ws") as url:
        messages = asyncio.run(_websocket(url, hello, 20))
    assert messages and all(f.opcode is Opcode.BINARY and f.fin for f in messages)
    frames = rsio.decoder("msgpack").feed(b"".join(f.data for f in messages))
    assert frames[0] == ServerHello(version=0, extensions=())
    assert all(isinstance(f, OnNext) and f.subscriber == 1 for f in frames[1:]) and len(frames) > 1


def test_rsio_huge_length_over_websocket_announces_in_the_stream() -> None:
    """RS-IO keeps its lengths inside its byte stream, not in the WebSocket header: over ws:// huge-length
    sends the onNext's longest header in a message of its own, then the trickle one message a byte."""
    rsio = get_binding("rsio")
    hello = rsio.encoder("msgpack").encode(ClientHello(version=0))
    with HostileTarget("rsio", "huge-length", "ws") as url:
        messages = asyncio.run(_websocket(url, hello, 4))
    assert all(f.opcode is Opcode.BINARY and f.fin for f in messages)
    assert messages[1].data == bytes([0x08, 0x01, 0xC6]) + b"\xff" * 4 and messages[2].data == b"\x2a"


# -- the client role (``--connect URL --hostile MODE``): listen mode's and the proxy's hostile client -----------

async def _serve_once(url: str, wanted: int, *, websocket: bool = False, framing: object = None,
                      ) -> tuple[bytes, str | None]:
    """Accept one hostile client, read ``wanted`` bytes of its stream (over ws:// through a server link, which
    refuses an unmasked frame); the stream and the link's failure, if any."""
    from rsio_tck.errors import Side
    from rsio_tck.websocket.link import WebSocketLink

    got = bytearray()
    failure: list[str] = []
    done = asyncio.Event()

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = WebSocketLink(Side.SERVER, framing) if websocket else None  # type: ignore[arg-type]
        try:
            while len(got) < wanted:
                data = await asyncio.wait_for(reader.read(65536), WAIT)
                if not data:
                    break
                if link is None:
                    got.extend(data)
                    continue
                got.extend(link.receive_data(data))
                for out in link.data_to_send():
                    writer.write(out)
                if link.failure is not None:
                    failure.append(str(link.failure))
                    break
        finally:
            writer.close()
            done.set()

    target = Target.parse(url)
    server = await asyncio.start_server(one, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = await asyncio.create_subprocess_exec(
        *PEER, "--binding", "ditto" if target.websocket else "rsocket", "--connect",
        f"{target.scheme}://127.0.0.1:{port}{target.path if target.websocket else ''}", "--hostile", "garbage"
        if not target.websocket else "flood", "--hostile-max-bytes", str(4 * wanted), "--hostile-max-seconds", "20",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        await asyncio.wait_for(done.wait(), 3 * WAIT)
        out, err = await asyncio.wait_for(client.communicate(), 3 * WAIT)
    finally:
        server.close()
        if client.returncode is None:
            client.kill()
    assert client.returncode == 1 and b"Traceback" not in err, err  # a hostile client never passes a case
    assert out.decode().startswith("hostile client (")
    return bytes(got), failure[0] if failure else None


def test_a_hostile_client_opens_with_a_valid_setup_then_misbehaves() -> None:
    from rsio_tck.bindings.rsocket.frames import Setup as SetupFrame

    stream, _ = asyncio.run(_serve_once("tcp://x:0", 200_000))
    decoder = get_binding("rsocket").decoder("rsocket-1.0")
    first = decoder.feed(stream[:3 + int.from_bytes(stream[:3], "big")])
    assert len(first) == 1 and isinstance(first[0], SetupFrame)  # then random bytes, up to its budget
    assert len(stream) >= 200_000


def test_a_hostile_websocket_client_masks_its_frames_and_opens_with_a_subscribe() -> None:
    framing = get_binding("ditto").websocket_framing("streaming")  # type: ignore[attr-defined]
    stream, failure = asyncio.run(_serve_once("ws://x:0/ws/2", 20_000, websocket=True, framing=framing))
    assert failure is None  # an unmasked frame from a client fails the server's link (RFC 6455 5.1)
    lines = stream.split(b"\n")
    assert b'"topic":"tck/range/things/twin/streaming/subscribeForPersistedEvents"' in lines[0]
    assert len(lines) > 10 and all(b"/streaming/created" in line for line in lines[1:-1])


def test_a_hostile_client_that_cannot_connect_is_one_line_and_exit_2() -> None:
    done = subprocess.run([*PEER, "--binding", "rsocket", "--connect", "tcp://127.0.0.1:9", "--hostile", "flood"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2, done.stderr
    assert "cannot connect" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
