"""TLS, Unix sockets and a child process over stdin/stdout carry RS-IO like TCP does."""

from __future__ import annotations

import ssl
import sys
from pathlib import Path

import msgpack
import pytest
from test_peer_support import MAX, Probe, codecs, run, serving

from rsio_tck.bindings.rsio.wire.frames import OnComplete, Subscribe
from rsio_tck.reference_peer import Peer
from rsio_tck.reference_peer.rsio import PeerConfig
from rsio_tck.reference_peer.tlscert import self_signed, server_context

STDIO = f"exec:{sys.executable} -m reference_peer --stdio"


async def _range_over(url: str, codec: str) -> None:
    """tck/range and packed tck/fixed through the kit's probe, judged clean."""
    p = await Probe.open(url, codec)
    p.send(Subscribe(publisher="tck/range?count=300", subscriber=1, initial_demand=MAX))
    p.send(Subscribe(publisher="tck/fixed?size=8&count=5000", subscriber=2, initial_demand=MAX))
    assert isinstance(await p.finish(1, 10.0), OnComplete)
    assert isinstance(await p.finish(2, 10.0), OnComplete)
    # Values, not bytes: the peer may write an integer in a wider legal form (TCK-9).
    assert [msgpack.unpackb(e) for e in p.elements(1)] == list(range(300)) and len(p.elements(2)) == 5000
    await p.close(5.0)
    assert p.findings(None) == []


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    return self_signed(tmp_path)


@pytest.mark.parametrize("codec", codecs())
def test_tls(certificate: tuple[Path, Path], codec: str) -> None:
    cert, key = certificate

    async def go() -> None:
        peer = Peer(PeerConfig(codec=codec))
        server = await peer.listen("tls://127.0.0.1:0", ssl_context=server_context(cert, key))
        try:
            await _range_over(f"tls://127.0.0.1:{server.port}?insecure=1", codec)
            client = Peer(PeerConfig(codec=codec))
            verified = ssl.create_default_context(cafile=str(cert))  # the certificate really checks out
            async with await client.connect(server.url, ssl_context=verified) as connection:
                async with connection.subscribe("tck/range?count=3") as elements:
                    assert [msgpack.unpackb(e) async for e in elements] == [0, 1, 2]
        finally:
            await peer.shutdown()

    run(go())


@pytest.mark.parametrize("codec", codecs())
def test_unix_socket(tmp_path: Path, codec: str) -> None:
    url = f"unix:{tmp_path / 'rsio.sock'}"

    async def go() -> None:
        async with serving(PeerConfig(codec=codec), url=url):
            await _range_over(url, codec)
            async with await Peer(PeerConfig(codec=codec)).connect(url) as connection:
                async with connection.subscribe("tck/range?count=2") as elements:
                    assert len([e async for e in elements]) == 2

    run(go())


@pytest.mark.parametrize("codec", codecs())
def test_child_process_over_stdio_as_the_kit_opens_it(codec: str) -> None:
    run(_range_over(f"{STDIO} --codec {codec}", codec), timeout=30)


@pytest.mark.parametrize("codec", codecs())
def test_exec_from_the_peer_as_client(codec: str) -> None:
    async def go() -> None:
        client = Peer(PeerConfig(codec=codec))
        connection = await client.connect(f"{STDIO} --codec {codec}")
        async with connection.subscribe("tck/error?after=4&message=done") as elements:
            got = []
            with pytest.raises(Exception, match="done"):
                async for element in elements:
                    got.append(msgpack.unpackb(element))
            assert got == [0, 1, 2, 3]
        reason = await connection.close()
        assert "acknowledged" in reason
        transport = connection.session.transport
        assert transport.process.get_returncode() == 0  # the child said goodbye and exited cleanly

    run(go(), timeout=30)
