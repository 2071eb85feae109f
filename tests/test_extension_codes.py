"""Decision f: an extension-range code is judged against the hellos, never forbidden outright.

rsio-v0 §3 lets a party send a type of the extension range once its peer's hello listed
that extension.  Version 0 maps no extension id to a code, so the kit can prove a code
undeclared only when the receiver's hello listed no extension id at all.
"""

from __future__ import annotations

import asyncio
import contextlib

from traces import C, S, hello, judge

from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import ClientHello, ServerHello
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_scenario


def test_an_extension_code_is_ext2_when_the_receivers_hello_listed_no_extension() -> None:
    findings = judge([*hello(), (S, b"\x40\x00")])
    assert [(f.rule, f.side) for f in findings] == [("EXT-2", S)]


def test_an_extension_code_after_the_receiver_listed_extensions_is_not_held_against_the_sender() -> None:
    findings = judge([(C, ClientHello(version=0, extensions=(64,))), (S, ServerHello(version=0)), (S, b"\x41\x01")])
    assert findings == []
    # The other direction is still judged: the kit listed 64, the target listed nothing.
    findings = judge([(C, ClientHello(version=0, extensions=(64,))), (S, ServerHello(version=0)), (C, b"\x41\x01")])
    assert [(f.rule, f.side) for f in findings] == [("EXT-2", C)]


async def _target_listing(extensions: tuple[int, ...]) -> tuple[asyncio.Server, str]:
    """A stand-in target that answers with a serverHello listing ``extensions``, then only reads."""
    encoded = get_codec("msgpack").encoder().encode(ServerHello(version=0, extensions=extensions))

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(encoded)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
            while await asyncio.wait_for(reader.read(4096), 5.0):
                pass
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"tcp://127.0.0.1:{port}"


def test_extension_scenarios_skip_a_target_whose_serverhello_lists_extensions() -> None:
    chosen = [s for s in load_directory() if s.id in ("EXT-002", "EXT-003", "EXT-004")]
    assert len(chosen) == 3

    async def go() -> list[object]:
        server, url = await _target_listing((64, 65))
        async with server:
            config = RunConfig(target=url, codec="msgpack", signal_timeout=1.0)
            return [await asyncio.wait_for(run_scenario(s, config), 10.0) for s in chosen]

    results = asyncio.run(go())
    assert [r.verdict for r in results] == [Verdict.SKIP] * 3, [r.explain() for r in results]  # type: ignore[attr-defined]
    assert all("extension ids [64, 65]" in r.reason for r in results)  # type: ignore[attr-defined]
