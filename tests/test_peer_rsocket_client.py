"""The RSocket peer's client role, its command line and its entry points for the peer's shell.

The client (``client.run_client``) against the peer as server, over loopback;
``python -m rsio_tck.reference_peer.rsocket`` for bad flags and an unreachable
target (one line, exit 2); ``make_config`` as the shell calls it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
from typing import Any

import pytest
from test_peer_rsocket import running_peer

from rsio_tck.bindings.rsocket.endpoint import Endpoint
from rsio_tck.bindings.rsocket.frames import Keepalive, Payload, RequestN, RequestStream, Setup
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor
from rsio_tck.reference_peer import rsocket as peer
from rsio_tck.reference_peer.rsocket import PeerConfig
from rsio_tck.reference_peer.rsocket.client import connect as client_connect
from rsio_tck.reference_peer.rsocket.client import run_client, run_interaction

WAIT = 10.0


@pytest.mark.parametrize("profile", ["rsocket-1.0", "reactivesocket-draft"])
def test_client_runs_every_interaction(profile: str) -> None:
    async def main() -> None:
        config = PeerConfig(profile=profile)
        async with running_peer(config) as port:
            url = f"tcp://127.0.0.1:{port}"
            stream = await run_client(url, config, "stream", "tck/range?count=7", n=3, timeout=WAIT)
            assert stream.completed and stream.elements == [str(i).encode() for i in range(7)]
            response = await run_client(url, config, "response", "tck/infinite?start=41", timeout=WAIT)
            assert response.completed and response.elements == [b"41"]
            failed = await run_client(url, config, "stream", "tck/error?after=1&message=no", timeout=WAIT)
            assert failed.elements == [b"0"] and failed.error == "no"
            session, task = await client_connect(url, config)
            await run_interaction(session, "fnf", "tck/fnf?key=c", 1)
            counted = await run_interaction(session, "response", "tck/fnf-count?key=c", 1, timeout=WAIT)
            assert counted.elements == [b"1"]
            if profile == "rsocket-1.0":  # the draft has no request-channel
                echoed = await run_interaction(session, "channel", "tck/echo", 2, echo=[b"a", b"b", b"c"],
                                               timeout=WAIT)
                assert echoed.completed and echoed.elements == [b"a", b"b", b"c"]
            session.close("done")
            assert "done" in await asyncio.wait_for(task, WAIT)
    asyncio.run(main())


def test_client_with_lease_waits_for_it() -> None:
    async def main() -> None:
        config = PeerConfig(lease=True)
        async with running_peer(config) as port:
            outcome = await run_client(f"tcp://127.0.0.1:{port}", config, "response", "tck/range?count=1",
                                       timeout=WAIT)
            assert outcome.elements == [b"0"]
    asyncio.run(main())


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rsio_tck.reference_peer.rsocket", *args],
                          capture_output=True, text=True, timeout=60)


def test_cli_lists_every_fault_with_its_rule() -> None:
    done = _cli("--list-faults")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert len(lines) == len(peer.FAULTS)
    assert all(line.split()[1].startswith("RS-") for line in lines)


@pytest.mark.parametrize("args, needle", [
    (["--listen", "tcp://127.0.0.1:0", "--mtu", "10"], "--mtu 10"),
    (["--listen", "tcp://127.0.0.1:0", "--fault", "no-such-fault"], "no-such-fault"),
    (["--connect", "tcp://127.0.0.1:1", "--name", "tck/range"], "rsocket-peer:"),
    (["--listen", "unix:/tmp/x.sock"], "tcp:// only"),
])
def test_cli_bad_input_is_one_line(args: list[str], needle: str) -> None:
    done = _cli(*args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and needle in done.stderr


def test_make_config_takes_the_shells_flags_and_its_own() -> None:
    assert peer.make_config(argparse.Namespace()) == PeerConfig()
    parser = argparse.ArgumentParser()
    peer.add_arguments(parser)
    args = parser.parse_args(["--profile", "reactivesocket-draft", "--mtu", "128", "--lease-requests", "5"])
    args.fault, args.seed, args.no_freedoms = ["flow-beyond-demand"], 3, True
    config = peer.make_config(args)
    assert (config.profile, config.mtu, config.lease_requests, config.faults, config.seed, config.freedoms) == (
        "reactivesocket-draft", 128, 5, ("flow-beyond-demand",), 3, False)
    with pytest.raises(ValueError, match="no such RSocket fault"):
        peer.make_config(argparse.Namespace(fault=["nope"]))


def test_capabilities_claim_what_is_served() -> None:
    claimed = json.loads(peer.CAPABILITIES.read_text(encoding="utf-8"))
    assert claimed["rsocket_capabilities"] == 1
    assert set(claimed["profiles"]) == {"rsocket-1.0", "reactivesocket-draft"}
    assert {"requester", "lease", "fragmentation", "keepalive"} <= set(claimed["features"])


def test_client_keeps_alive_and_serves_the_servers_requests() -> None:
    """The peer as client against a server built from the endpoint: KEEPALIVE at its interval, and a
    REQUEST_STREAM the server sends (even id) answered under its demand."""
    async def main() -> list[Any]:
        seen: list[Any] = []
        done = asyncio.get_running_loop().create_future()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            endpoint = Endpoint(Side.SERVER)
            while not done.done():
                data = await reader.read(65536)
                if not data:
                    break
                for event in endpoint.receive_data(data):
                    seen.append(event)
                    if isinstance(event, Setup):
                        endpoint.send(RequestStream(stream_id=endpoint.new_stream_id(), initial_request_n=2,
                                                    data=b"tck/range?count=3"))
                    elif isinstance(event, Payload) and len([e for e in seen if isinstance(e, Payload)]) == 2:
                        endpoint.send(RequestN(stream_id=2, request_n=1))
                completed = any(isinstance(e, Payload) and e.complete for e in seen)
                if completed and any(isinstance(e, Keepalive) for e in seen) and not done.done():
                    done.set_result(None)
                writer.write(endpoint.data_to_send())
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        async with server:
            port = server.sockets[0].getsockname()[1]
            session, task = await client_connect(f"tcp://127.0.0.1:{port}", PeerConfig(keepalive_ms=50))
            await asyncio.wait_for(done, WAIT)
            session.close("done")
            await asyncio.wait_for(task, WAIT)
        return seen
    seen = asyncio.run(main())
    assert [e.data for e in seen if isinstance(e, Payload) and e.next] == [b"0", b"1", b"2"]
    assert any(isinstance(e, Keepalive) and e.respond for e in seen)


async def _logging_proxy(target_port: int, log: list[tuple[Side, bytes, float]]) -> asyncio.Server:
    """A TCP relay to ``target_port`` that logs every byte each way, in the order it relays them."""
    loop = asyncio.get_running_loop()

    async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, side: Side) -> None:
        try:
            while data := await reader.read(65536):
                log.append((side, data, loop.time()))
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(ConnectionError, OSError, RuntimeError):
                writer.write_eof()

    async def relay(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        await asyncio.gather(pump(client_reader, server_writer, Side.CLIENT),
                             pump(server_reader, client_writer, Side.SERVER))
        client_writer.close()
        server_writer.close()

    return await asyncio.start_server(relay, "127.0.0.1", 0)


def client_rules(config: PeerConfig) -> set[str]:
    """The rules the monitor finds the peer as client breaking in one request-response through a logging relay."""
    async def main() -> list[tuple[Side, bytes, float]]:
        log: list[tuple[Side, bytes, float]] = []
        async with running_peer(PeerConfig(profile=config.profile)) as port:
            proxy = await _logging_proxy(port, log)
            async with proxy:
                url = f"tcp://127.0.0.1:{proxy.sockets[0].getsockname()[1]}"
                session, task = await client_connect(url, config)
                with contextlib.suppress(asyncio.TimeoutError, ConnectionError):
                    await run_interaction(session, "response", "tck/range?count=1", 1, timeout=WAIT)
                session.close("done")
                await asyncio.wait_for(task, WAIT)
        return log
    log = asyncio.run(main())
    monitor = Monitor(config.profile, binding="rsocket")
    start = log[0][2] if log else 0.0
    for side, data, t in log:
        monitor.observe(side, data, t - start)
    assert any(side is Side.SERVER for side, _, _ in log)  # the server answered: the exchange took place
    return {f.rule for f in monitor.findings if f.side is Side.CLIENT}


@pytest.mark.parametrize("profile, name", [
    (profile, name) for profile in ("rsocket-1.0", "reactivesocket-draft")
    for name in sorted(n for n in peer.FAULTS if n.startswith("client-"))
    if (profile == "rsocket-1.0" or name != "client-keepalive-without-r")  # (the draft's KEEPALIVE has no R)
    and name != "client-keepalive-silent"])  # shows only when idle: tests/test_listen.py's keepalive case
def test_client_fault_breaks_exactly_its_rule(profile: str, name: str) -> None:
    assert client_rules(PeerConfig(profile=profile, faults=(name,))) == {peer.FAULTS[name].rule}


@pytest.mark.parametrize("profile", ["rsocket-1.0", "reactivesocket-draft"])
def test_fault_free_client_draws_no_finding(profile: str) -> None:
    assert client_rules(PeerConfig(profile=profile)) == set()
    assert client_rules(PeerConfig(profile=profile, lease=True)) == set()
