"""WebSocket transport (issue 17 item 1): the framing hooks, the sans-IO link, the kit against the
reference peer over ws://, listen mode and the proxy over ws://, and bad WebSocket input as one line."""

from __future__ import annotations

import asyncio
import json
import random
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from rsio_tck.binding import get_binding
from rsio_tck.bindings.ditto.framing import LineDecoder
from rsio_tck.bindings.ditto.websocket import DittoFraming
from rsio_tck.errors import Side
from rsio_tck.listen.cases import client_tests
from rsio_tck.listen.cli import serving_peer_factory
from rsio_tck.listen.runner import run_client_tests
from rsio_tck.proxy.relay import run_proxy
from rsio_tck.reference_peer.api import Peer
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite
from rsio_tck.transport import Target, TargetError, open_target
from rsio_tck.websocket import framing_for
from rsio_tck.websocket.framing import StreamFraming, WebSocketError
from rsio_tck.websocket.link import MAX_CONTROL_IN_A_ROW, MAX_MESSAGE_FRAMES, Observer, WebSocketLink, _Messages
from rsio_tck.websocket.shells import CarryOverWebSocket

TIMEOUT = 10.0
GOLDEN = Path(__file__).parent / "data" / "ditto" / "golden.jsonl"
RSIO_IDS = ("HS-001", "DEM-001", "DEM-002", "STR-001", "PACK-001", "SPLIT-001", "TCK-001")
RSOCKET_IDS = ("RSERR-001", "DEM-001", "DEM-002", "STR-001", "RSFLOW-001", "RSFRAG-001", "RSID-001")


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60.0))


@asynccontextmanager
async def serving(binding: str, profile: str | None = None, path: str = "/tck") -> AsyncIterator[str]:
    peer = Peer(binding=binding, profile=profile)
    server = await peer.listen(f"ws://127.0.0.1:0{path}")
    try:
        yield server.url
    finally:
        await peer.shutdown(timeout=2.0)


# -- URLs and framing hooks ---------------------------------------------------------------------


def test_ws_urls_parse_with_path_port_and_insecure() -> None:
    target = Target.parse("wss://example.test:8443/ws/2?insecure=1&x=1")
    assert (target.scheme, target.host, target.port, target.resource) == ("wss", "example.test", 8443, "/ws/2?x=1")
    assert target.insecure and target.websocket and target.websocket_uri == "wss://example.test:8443/ws/2?x=1"
    assert Target.parse("ws://127.0.0.1/").port == 80
    with pytest.raises(TargetError, match="port is not a number"):
        Target.parse("ws://127.0.0.1:99999/x")


def test_rsocket_framing_strips_and_restores_the_length_prefix_under_any_chunking() -> None:
    binding = get_binding("rsocket")
    for profile in binding.profiles:
        adapter = binding.scenario_adapter(profile, {})  # type: ignore[attr-defined]
        frames = adapter.opening() + adapter.frames("subscribe", {"publisher": "tck/range?count=3", "subscriber": 1,
                                                                  "initialDemand": 3})
        encoder = binding.encoder(profile)
        stream = b"".join(encoder.encode(f) for f in frames)
        bare = binding.encoder(profile, length_prefix=False)  # type: ignore[call-arg]
        want = [bare.encode(f) for f in frames]
        rng = random.Random(17)
        for _ in range(20):
            framing = framing_for(binding, profile)
            got: list[Any] = []
            at = 0
            while at < len(stream):
                step = rng.randint(1, 9)
                got += framing.outgoing(stream[at : at + step])
                at += step
            assert got == want
            assert b"".join(framing.incoming(m) for m in got) == stream


def test_ditto_framing_one_envelope_per_text_message() -> None:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()[:20]
    envelopes = [json.dumps(json.loads(line)) for line in lines]
    framing = DittoFraming()
    stream = "".join(e + "\n" for e in envelopes).encode()
    out: list[Any] = []
    for at in range(0, len(stream), 7):
        out += framing.outgoing(stream[at : at + 7])
    assert [m.decode() if isinstance(m, bytes) else m for m in out] == envelopes
    # A raw LF inside a message (legal JSON whitespace) becomes CR: still one line, still the same JSON.
    assert framing.incoming('{"a":\n1}') == b'{"a":\r1}\n'
    # The binding's TCP line decoder reads each message as one envelope.
    decoder = LineDecoder()
    pretty = [json.dumps(json.loads(e), indent=2) for e in envelopes]  # raw LFs between tokens
    decoded = [m for e in pretty for m in decoder.feed(framing.incoming(e))]
    assert len(decoded) == len(envelopes)
    assert framing.message_type == "text" and framing.rule == "DITTO-WS-1"


def test_stream_framing_keeps_bytes_and_bounds_messages() -> None:
    framing = StreamFraming()
    data = bytes(range(256)) * 700
    messages = framing.outgoing(data)
    assert all(isinstance(m, bytes) and len(m) <= 64 * 1024 for m in messages)
    assert b"".join(framing.incoming(m) for m in messages) == data


def _opened_client(framing: Any) -> WebSocketLink:
    """A client link whose opening handshake a server link answered (both sans-IO, no socket)."""
    client = WebSocketLink(Side.CLIENT, framing, uri="ws://127.0.0.1:1/tck")
    server = WebSocketLink(Side.SERVER, framing, path="/tck")
    server.receive_data(b"".join(client.data_to_send()))
    client.receive_data(b"".join(server.data_to_send()))
    assert client.opened and client.failure is None
    return client


def test_a_stream_framing_reads_a_fragmented_message_as_its_frames_arrive() -> None:
    """RS-IO's messages mean nothing: the bytes of each continuation are the stream's at once, so a message
    in endless one-byte frames is judged at its first byte (it was joined first: 10^6 frames per scenario)."""
    client = _opened_client(StreamFraming(max_message=10))
    first = Frame(Opcode.BINARY, b"\x01\x00", fin=False).serialize(mask=False)
    more = Frame(Opcode.CONT, b"\x90", fin=False).serialize(mask=False)
    assert client.receive_data(first) == b"\x01\x00" and client.receive_data(more * 3) == b"\x90" * 3
    last = Frame(Opcode.CONT, b"!", fin=True).serialize(mask=False)
    assert client.receive_data(last) == b"!" and client.failure is None
    # The message is still bounded as a whole: 11 bytes in continuations of a 10-byte framing is close 1009.
    client.receive_data(first + more * 8 + last)
    assert client.failure is not None and client.failure.close_code == 1009


def test_a_message_framing_still_joins_its_fragments() -> None:
    client = _opened_client(framing_for("rsocket"))
    assert client.receive_data(Frame(Opcode.BINARY, b"\x00\x00", fin=False).serialize(mask=False)) == b""
    assert client.receive_data(Frame(Opcode.CONT, b"\x00\x01", fin=True).serialize(mask=False)) != b""


def test_a_link_pair_carries_the_stream_under_any_chunking() -> None:
    rng = random.Random(5)
    for _ in range(10):
        client = WebSocketLink(Side.CLIENT, StreamFraming(), uri="ws://127.0.0.1:1/tck")
        server = WebSocketLink(Side.SERVER, StreamFraming(), path="/tck")
        client.send(b"hello from the client")
        got = {Side.CLIENT: bytearray(), Side.SERVER: bytearray()}
        wire = {Side.CLIENT: bytearray(), Side.SERVER: bytearray()}
        answered = False
        for _ in range(200):
            for me, link, peer in ((Side.CLIENT, client, server), (Side.SERVER, server, client)):
                wire[me] += b"".join(link.data_to_send())
                if wire[me]:
                    cut = rng.randint(1, len(wire[me]))
                    got[Side.SERVER if me is Side.CLIENT else Side.CLIENT] += peer.receive_data(bytes(wire[me][:cut]))
                    del wire[me][:cut]
            if server.opened and not answered:
                server.send(b"and the server answers")
                answered = True
            if got[Side.CLIENT] and got[Side.SERVER] and not any(wire.values()):
                break
        assert bytes(got[Side.SERVER]) == b"hello from the client"
        assert bytes(got[Side.CLIENT]) == b"and the server answers"
        assert client.failure is None and server.failure is None and server.request_path == "/tck"


# -- the kit against the reference peer -----------------------------------------------------------


@pytest.mark.parametrize(("binding", "profile", "ids"), [
    ("rsio", "msgpack", RSIO_IDS), ("rsocket", "rsocket-1.0", RSOCKET_IDS),
    ("rsocket", "reactivesocket-draft", RSOCKET_IDS)])
def test_scenarios_pass_against_the_reference_peer_over_websocket(binding: str, profile: str,
                                                                   ids: tuple[str, ...]) -> None:
    scenarios = [s for s in load_directory(binding=binding) if s.id in ids]
    assert len(scenarios) >= 5

    async def go() -> list[Any]:
        async with serving(binding, profile) as url:
            return await run_suite(scenarios, RunConfig(target=url, codec=profile, binding=binding, keep_trace=True),
                                   jobs=3)

    results = run(go())
    ran = [r for r in results if r.verdict is not Verdict.SKIP]
    assert len(ran) >= 4
    # The peer's seeded freedoms (TCK-9: an integer not in its shortest form) are its only warnings.
    assert all(r.verdict is Verdict.PASS or r.verdict is Verdict.WARN and {f.rule for f in r.findings} == {"TCK-9"}
               for r in ran), "\n\n".join(r.explain() for r in ran)
    for r in ran:  # the pcap's bytes: the HTTP upgrade first, the binding's stream in the trace
        first = next(rec for rec in r.wire_trace if rec.data)
        assert first.sender is Side.CLIENT and first.data.startswith(b"GET /tck HTTP/1.1\r\n")
        assert not any(rec.data and rec.data.startswith(b"GET ") for rec in r.trace)


def test_a_wrong_path_is_refused_in_one_line() -> None:
    async def go() -> str:
        async with serving("rsio") as url:
            with pytest.raises(TargetError) as failed:
                await open_target(url.replace("/tck", "/elsewhere"), TIMEOUT)
            return str(failed.value)

    message = run(go())
    assert "cannot reach" in message and "404" in message and "\n" not in message


# -- bad WebSocket input: one line, the RFC 6455 close code ------------------------------------------


class _Writes(asyncio.Protocol):
    """A served protocol that writes ``data`` as soon as the connection opens (through the framing)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.data)  # type: ignore[attr-defined]


class _Raw(asyncio.Protocol):
    """A WebSocket server that answers the handshake, then writes raw bytes (a malformed frame)."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.link = WebSocketLink(Side.SERVER, StreamFraming())

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.link.receive_data(data)
        for chunk in self.link.data_to_send():
            self.transport.write(chunk)  # type: ignore[attr-defined]
        if self.link.opened and self.raw:
            self.transport.write(self.raw)  # type: ignore[attr-defined]
            self.raw = b""


async def _kit_session(factory: Any, binding: str = "rsio", limits: Any = None, **options: Any) -> Any:
    """A kit session over WebSocket to the server ``factory`` makes, read to its end (``options``: ``KitSession``'s)."""
    from rsio_tck.scenarios.kit_session import KitSession

    server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        reader, writer = await open_target(f"ws://127.0.0.1:{port}/", TIMEOUT, binding=binding, limits=limits)
        session = KitSession(reader, writer, binding=binding, **options)
        session.start()
        await asyncio.wait_for(session.reading_done.wait(), TIMEOUT)
        await session.shutdown()
        return session
    finally:
        server.close()


async def _kit_error(factory: Any, binding: str = "rsocket") -> str:
    session = await _kit_session(factory, binding)
    assert session.error is not None
    return str(session.error)


def test_a_text_message_to_the_rsocket_kit_is_one_line_with_close_1003() -> None:
    error = run(_kit_error(lambda: CarryOverWebSocket(lambda: _Writes(b"hello\n"), DittoFraming())))
    assert error.startswith("WebSocket: the server sent a text message") and "(close 1003)" in error
    assert "binary messages only" in error and "\n" not in error


@pytest.mark.parametrize(("raw", "code", "words"), [
    (b"\xc2\x01x", 1002, "reserved bits"),  # FIN, RSV1, binary, 1 byte
    (b"\x8f\x00", 1002, "invalid opcode"),
    (Frame(Opcode.BINARY, b"xy").serialize(mask=True), 1002, "incorrect masking"),
], ids=["reserved-bits", "invalid-opcode", "masked-by-the-server"])  # a random mask: no bytes in ids
def test_a_malformed_frame_to_the_kit_is_one_line_with_its_close_code(raw: bytes, code: int, words: str) -> None:
    error = run(_kit_error(lambda: _Raw(raw), binding="rsio"))
    assert error.startswith("WebSocket: a malformed WebSocket frame from the server")
    assert f"(close {code})" in error and words in error and "\n" not in error


HUGE = b"\x82\x7f" + (2**40).to_bytes(8, "big")  # a binary frame announcing 2^40 bytes, as a server sends it


@pytest.mark.parametrize(("binding", "rule", "limit"), [
    ("rsocket", "RS-FRAME-2", 4 * 1024 * 1024),  # a frame over the receiver's configured maximum
    ("ditto", "DITTO-LINE-1", 4 * 1024 * 1024 + 1),  # a line over it (one byte over: the codec judges that one)
    ("rsio", None, 16 * 1024 * 1024),  # a message is no unit of RS-IO: the limit is the kit's, no rule is broken
])
def test_a_message_over_the_largest_is_closed_1009_citing_the_bindings_size_rule(binding: str, rule: str | None,
                                                                                  limit: int) -> None:
    # A scenario connection opens its WebSocket with the session's limits (the kit's configured maxima).
    from rsio_tck.scenarios.bounds import session_limits

    chosen = get_binding(binding)
    limits = session_limits(chosen, chosen.profiles[0], None, {})
    session = run(_kit_session(lambda: _Raw(HUGE), binding, limits, end_when_certain=True))
    assert session.error is not None and "(close 1009)" in session.error, session.error
    assert f"sent a message over {limit} bytes" in session.error, session.error
    cited = [f.rule for f in session.monitor.findings]
    if rule is None:
        assert session.kit_limit is not None and not cited, (session.kit_limit, cited)
    else:
        assert cited == [rule] and session.kit_limit is None, cited
        assert session.verdict_certain.is_set()  # the scenario ends at the rule broken, citing no other


def test_a_message_in_more_frames_than_the_kit_takes_is_closed_1009_and_one_within_them_is_whole() -> None:
    def feed(count: int) -> bytes | WebSocketError:
        messages = _Messages(framing_for("rsocket"), "server")
        outcome = messages.frame(Frame(Opcode.BINARY, b"\x00", fin=False))
        for i in range(1, count):
            outcome = messages.frame(Frame(Opcode.CONT, b"\x00", fin=i == count - 1))
            if isinstance(outcome, WebSocketError):
                return outcome
        return outcome

    whole = feed(MAX_MESSAGE_FRAMES)  # the binding's stream of one message of that many bytes
    assert isinstance(whole, bytes) and whole.endswith(b"\x00" * MAX_MESSAGE_FRAMES), whole
    error = feed(MAX_MESSAGE_FRAMES + 1)
    assert isinstance(error, WebSocketError) and error.close_code == 1009, error
    assert f"in more than {MAX_MESSAGE_FRAMES} frames" in str(error)


def test_a_ping_flood_to_the_kit_is_one_line_with_close_1008_and_pings_between_messages_are_fine() -> None:
    ping = b"\x89\x00"  # FIN, ping, no payload, unmasked: as a server sends it
    message = Frame(Opcode.BINARY, b"\x00\x00\x00").serialize(mask=False)
    error = run(_kit_error(lambda: _Raw(ping * (MAX_CONTROL_IN_A_ROW + 1)), binding="rsocket"))
    assert f"more than {MAX_CONTROL_IN_A_ROW} pings or pongs in a row" in error and "(close 1008)" in error
    assert "\n" not in error

    link = WebSocketLink(Side.SERVER, framing_for("rsocket"), path=None)
    link.ws = ServerProtocol(state=State.OPEN, max_size=None)  # frames only: the handshake is not what this checks
    link.opened = True
    ping, message = Frame(Opcode.PING, b"").serialize(mask=True), Frame(Opcode.BINARY, b"\0\0\0").serialize(mask=True)
    burst = (ping * (MAX_CONTROL_IN_A_ROW // 2) + message) * 4  # more pings than the limit, but messages between
    # The binding's stream: each message's 3 bytes behind RSocket's length prefix.
    assert link.receive_data(burst) == b"\x00\x00\x03\x00\x00\x00" * 4 and link.failure is None


def test_the_peer_answers_a_malformed_frame_with_close_1002() -> None:
    async def go() -> bytes:
        async with serving("rsocket") as url:
            target = Target.parse(url)
            link = WebSocketLink(Side.CLIENT, framing_for("rsocket"), uri=url)
            reader, writer = await asyncio.open_connection(target.host, target.port)
            writer.write(b"".join(link.data_to_send()))
            while not link.opened:
                link.receive_data(await asyncio.wait_for(reader.read(4096), TIMEOUT))
            writer.write(Frame(Opcode.BINARY, b"unmasked").serialize(mask=False))  # a client must mask
            answer = await asyncio.wait_for(reader.read(4096), TIMEOUT)
            writer.close()
            return answer

    answer = run(go())
    assert answer[:1] == b"\x88" and int.from_bytes(answer[2:4], "big") == 1002  # Close, protocol error


# -- the proxy and listen mode over ws:// ------------------------------------------------------------


def test_the_proxy_relays_websocket_bytes_unchanged_and_judges_the_messages() -> None:
    scenarios = [s for s in load_directory(binding="rsocket") if s.id in ("DEM-001", "RSFLOW-001")]

    async def go() -> tuple[Any, list[Any]]:
        async with serving("rsocket") as url:
            ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
            stop = asyncio.Event()
            relay = asyncio.ensure_future(run_proxy("ws://127.0.0.1:0/tck", url, get_binding("rsocket"),
                                                    max_connections=len(scenarios), duration=30.0,
                                                    on_ready=ready.set_result, stop=stop))
            proxy_url = await asyncio.wait_for(ready, TIMEOUT)
            results = await run_suite(scenarios, RunConfig(target=proxy_url, codec=None, binding="rsocket"), jobs=2)
            stop.set()
            return await asyncio.wait_for(relay, TIMEOUT), results

    relayed, results = run(go())
    assert all(r.verdict is Verdict.PASS for r in results), "\n".join(r.explain() for r in results)
    assert len(relayed.connections) == 2
    for conn in relayed.connections:
        assert conn.error is None and conn.frames >= 3 and not conn.findings
        assert conn.wire_trace[0].data.startswith(b"GET /tck HTTP/1.1")
        assert conn.trace[0].data[3:9] == b"\x00\x00\x00\x00\x04\x00"  # the binding's stream: SETUP, prefixed


def test_the_proxy_refuses_to_mix_websocket_and_tcp_in_one_line() -> None:
    with pytest.raises(TargetError, match="over WebSocket the proxy relays the bytes unchanged"):
        run(run_proxy("tcp://127.0.0.1:0", "ws://127.0.0.1:1/x", get_binding("rsio"), duration=1.0))


def test_listen_mode_over_websocket_judges_the_rsocket_reference_client() -> None:
    cases = client_tests("rsocket", ["stream-range", "request-response"])
    client = f"{sys.executable} -m rsio_tck.reference_peer.rsocket.testcases --profile rsocket-1.0"
    results = run(run_client_tests(cases, client, "ws://127.0.0.1:0/rsocket", get_binding("rsocket"), "rsocket-1.0",
                                   serving_peer_factory("rsocket", "rsocket-1.0", "ws://127.0.0.1:0/rsocket"),
                                   timeout=20.0))
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.PASS], "\n".join(r.explain() for r in results)
    assert all(r.wire_trace and r.wire_trace[0].data.startswith(b"GET /rsocket ") for r in results)


def test_the_observer_reads_both_directions_of_a_relayed_connection() -> None:
    client = WebSocketLink(Side.CLIENT, StreamFraming(), uri="ws://127.0.0.1:1/")
    server = WebSocketLink(Side.SERVER, StreamFraming())
    observer = Observer(StreamFraming())
    seen = {Side.CLIENT: bytearray(), Side.SERVER: bytearray()}
    client.send(b"abc")
    sent = False
    for _ in range(4):
        for me, link, peer in ((Side.CLIENT, client, server), (Side.SERVER, server, client)):
            for chunk in link.data_to_send():
                for byte in range(len(chunk)):  # byte by byte: any chunking
                    seen[me] += observer.feed(me, chunk[byte : byte + 1])
                peer.receive_data(chunk)
        if server.opened and not sent:
            server.send(b"xyz")
            sent = True
    assert (bytes(seen[Side.CLIENT]), bytes(seen[Side.SERVER])) == (b"abc", b"xyz")
    assert not observer.failure


def test_a_scenario_expecting_an_answer_after_the_kits_half_close_skips_over_websocket() -> None:
    from rsio_tck.scenarios.runner import skip_reason

    (err001,) = [s for s in load_directory() if s.id == "ERR-001"]  # truncated frame, close: write, expect_goodbye
    assert skip_reason(err001, RunConfig(target="tcp://127.0.0.1:1")) is None
    reason = skip_reason(err001, RunConfig(target="ws://127.0.0.1:1/x"))
    assert reason is not None and "no half-close" in reason
    (dem001,) = [s for s in load_directory() if s.id == "DEM-001"]
    assert skip_reason(dem001, RunConfig(target="ws://127.0.0.1:1/x")) is None


def test_wss_with_insecure_runs_scenarios_against_a_self_signed_peer(tmp_path: Path) -> None:
    from rsio_tck.reference_peer.tlscert import self_signed, server_context

    cert, key = self_signed(tmp_path, "127.0.0.1")
    scenarios = [s for s in load_directory(binding="rsocket") if s.id in ("DEM-001", "RSFLOW-001")]

    async def go() -> list[Any]:
        peer = Peer(binding="rsocket")
        server = await peer.listen("wss://127.0.0.1:0/tck", ssl_context=server_context(cert, key))
        try:
            with pytest.raises(TargetError, match="CERTIFICATE_VERIFY_FAILED"):
                await open_target(server.url, TIMEOUT, binding="rsocket")  # verified by default
            config = RunConfig(target=server.url + "?insecure=1", codec=None, binding="rsocket")
            return await run_suite(scenarios, config, jobs=2)
        finally:
            await peer.shutdown(timeout=2.0)

    results = run(go())
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.PASS], "\n".join(r.explain() for r in results)


def test_a_tcp_close_without_a_close_frame_ends_the_stream_without_a_websocket_error() -> None:
    """An aborted target (no Close frame): the binding judges the end of stream, as on TCP."""

    class _Aborts(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            transport.write(b"\x02\x00\x90")  # RS-IO serverHello (msgpack), then the TCP connection ends
            transport.abort()  # type: ignore[attr-defined]

    session = run(_kit_session(lambda: CarryOverWebSocket(_Aborts, StreamFraming())))
    assert session.error is None and session.eof and writer_failure(session) is None
    assert session.monitor.frame_count == 1  # the serverHello was judged


def writer_failure(session: Any) -> Any:
    return session.writer.failure


def test_the_rsio_peer_as_client_over_websocket() -> None:
    """(The RSocket peer's client role is its own program: tested through listen mode above.)"""
    binding = "rsio"

    async def go() -> list[Any]:
        async with serving(binding) as url:
            client = Peer(binding=binding)
            connection = await client.connect(url, timeout=TIMEOUT)
            async with connection.subscribe("tck/range?count=3") as elements:
                got = [client.binding.show(e) async for e in elements]
            await connection.close("done")
            return got

    assert [str(x) for x in run(go())] in (["0", "1", "2"],)


def test_a_binary_message_to_a_ditto_endpoint_breaks_ditto_ws_1_with_close_1003() -> None:
    client = WebSocketLink(Side.CLIENT, StreamFraming(), uri="ws://127.0.0.1:1/ws/2")  # sends binary
    server = WebSocketLink(Side.SERVER, DittoFraming(), path="/ws/2")
    client.send(b'{"topic":"tck/range/things/twin/streaming/request"}')
    for _ in range(3):
        server.receive_data(b"".join(client.data_to_send()))
        client.receive_data(b"".join(server.data_to_send()))
    failure = server.failure
    assert failure is not None and failure.close_code == 1003
    assert failure.violation is not None and failure.violation.rule == "DITTO-WS-1"
    assert "the client sent a binary message; this binding carries text messages only" in str(failure)
    assert client.close_received  # the client got the Close frame


def test_check_pcap_judges_the_binding_stream_inside_a_websocket_capture(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rsio_tck.cli import app
    from rsio_tck.report.pcap import write_pcap

    (scenario,) = [s for s in load_directory(binding="rsocket") if s.id == "DEM-001"]

    async def go() -> Any:
        async with serving("rsocket") as url:
            (result,) = await run_suite([scenario], RunConfig(target=url, codec=None, binding="rsocket",
                                                              keep_trace=True))
            return result

    result = run(go())
    capture = tmp_path / "ws.pcap"
    write_pcap(capture, result.wire_trace, server_port=Target.parse(result.target).port)
    done = CliRunner().invoke(app, ["check-pcap", "--binding", "rsocket", str(capture)])
    assert done.exit_code == 0, done.output
    frames = int(done.output.split(": ", 1)[1].split(" frames")[0])
    binding = get_binding("rsocket")
    kit = 0
    for sender in Side:
        decoder = binding.decoder("rsocket-1.0")
        kit += sum(len(decoder.feed(r.data)) for r in result.trace if r.sender is sender and r.data)
    assert frames == kit >= 5
    assert "0 violations" in done.output and "inside the messages" in done.output


def test_listen_mode_over_websocket_judges_the_rsio_reference_client() -> None:
    cases = client_tests("rsio", ["stream-range", "large-split"])
    client = f"{sys.executable} -m rsio_tck.reference_peer.rsio.client"
    results = run(run_client_tests(cases, client, "ws://127.0.0.1:0/rsio", get_binding("rsio"), "msgpack",
                                   serving_peer_factory("rsio", "msgpack", "ws://127.0.0.1:0/rsio"), timeout=20.0))
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.PASS], "\n".join(r.explain() for r in results)
    assert not [f for r in results for f in r.findings if f.side is Side.CLIENT]  # (the peer's: its freedoms)


@pytest.mark.parametrize("profile", ["streaming", "search"])
def test_every_ditto_scenario_passes_against_the_reference_peer_over_websocket(profile: str) -> None:
    """Issue 17: Ditto on both profiles over ws:// (one envelope per text message, Ditto's /ws/2 path)."""
    scenarios = load_directory(binding="ditto")

    async def go() -> list[Any]:
        async with serving("ditto", profile, path="/ws/2") as url:
            return await run_suite(scenarios, RunConfig(target=url, codec=profile, binding="ditto", keep_trace=True),
                                   jobs=4)

    results = asyncio.run(asyncio.wait_for(go(), 240.0))
    ran = [r for r in results if r.verdict is not Verdict.SKIP]
    assert len(ran) >= (60 if profile == "streaming" else 20)
    assert all(r.verdict is Verdict.PASS for r in ran), "\n\n".join(r.explain() for r in ran if r.verdict is not Verdict.PASS)
    first = next(rec for rec in ran[0].wire_trace if rec.data)
    assert first.data.startswith(b"GET /ws/2 HTTP/1.1\r\n")


def test_listen_mode_over_websocket_judges_the_ditto_reference_client() -> None:
    cases = client_tests("ditto", ["search-pages", "search-cancel"])
    client = f"{sys.executable} -m rsio_tck.reference_peer.ditto.testcases"
    results = run(run_client_tests(cases, client, "ws://127.0.0.1:0/ws/2", get_binding("ditto"), "search",
                                   serving_peer_factory("ditto", "search", "ws://127.0.0.1:0/ws/2"), timeout=20.0))
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.PASS], "\n".join(r.explain() for r in results)
    assert all(r.wire_trace and r.wire_trace[0].data.startswith(b"GET /ws/2 ") for r in results)
