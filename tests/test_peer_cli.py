"""The ``rsio-peer`` command line: signals, logs, port file, capabilities, the client role."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_peer_support import Probe, peer_process, run

from rsio_tck.bindings.rsio.wire.frames import OnComplete, Subscribe
from rsio_tck.capabilities import Capabilities
from rsio_tck.reference_peer.peer_binding import get_peer_binding
from rsio_tck.reference_peer.rsio import FAULTS

PEER = [sys.executable, "-m", "rsio_tck.reference_peer"]


def _cli(*args: str, timeout: float = 20.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PEER, *args], capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_says_goodbye_and_exits_0(signum: signal.Signals) -> None:
    with peer_process() as peer:
        async def go() -> Probe:
            p = await Probe.open(peer.url)
            p.send(Subscribe(publisher="tck/range?count=2", subscriber=1, initial_demand=2))
            await p.finish(1)
            peer.process.send_signal(signum)
            goodbye = await p.wait(p.goodbye, 5.0)
            assert "shutting down" in goodbye.reason
            await p.wait_eof(5.0)
            return p

        p = run(go())
        assert peer.process.wait(10) == 0
        assert p.findings() == []  # goodbye, our acknowledgement, then the close
        lines = [line for line in peer.output().splitlines() if "connection #" in line]
        assert len(lines) == 1 and "ended after" in lines[0] and "acknowledged" in lines[0]


def test_one_log_line_per_connection_with_the_reason() -> None:
    with peer_process() as peer:
        async def go() -> None:
            polite = await Probe.open(peer.url)
            await polite.close()
            rude = await Probe.open(peer.url)
            rude.send_raw(b"\x3f")
            await rude.wait_eof()

        run(go())
        peer.process.terminate()
        peer.process.wait(10)
        lines = [line for line in peer.output().splitlines() if "connection #" in line]
        assert len(lines) == 2
        assert any("goodbye from the peer: probe done" in line for line in lines)
        assert any("protocol error" in line and "ERR-7" in line for line in lines)


def test_list_faults_capabilities_and_bad_arguments() -> None:
    listed = _cli("--list-faults")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == len(FAULTS)
    shown = _cli("--capabilities")
    assert shown.returncode == 0 and json.loads(shown.stdout)["rsio_capabilities"] == 1
    claims = Capabilities.load(get_peer_binding("rsio").capabilities)
    assert claims.tokens == Capabilities.everything().tokens  # the reference peer claims all of rsio-v0 §8
    unknown = _cli("--listen", "tcp://127.0.0.1:0", "--fault", "no-such-fault")
    assert unknown.returncode == 2 and "unknown fault" in unknown.stderr
    assert _cli("--stdio", "--listen", "tcp://127.0.0.1:0").returncode == 2


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("rsio-peer")
    assert script.exists()
    result = subprocess.run([str(script), "--list-faults"], capture_output=True, text=True, timeout=20, check=False)
    assert result.returncode == 0 and "dem-beyond-demand" in result.stdout


def test_client_mode_subscribes_and_prints() -> None:
    with peer_process("--codec", "msgpack") as peer:
        result = _cli("--connect", peer.url, "--subscribe", "tck/range?start=40&count=3")
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["40", "41", "42"]
        failed = _cli("--connect", peer.url, "--subscribe", "tck/error?after=1&message=nope")
        assert failed.returncode == 1 and "nope" in failed.stderr


def test_tls_listener_without_a_certificate_makes_a_self_signed_one() -> None:
    with peer_process(listen="tls://127.0.0.1:0") as peer:
        assert "self-signed certificate" in peer.output()

        async def go() -> None:
            p = await Probe.open(f"{peer.url}?insecure=1")
            p.send(Subscribe(publisher="tck/range?count=1", subscriber=1, initial_demand=1))
            assert isinstance(await p.finish(1), OnComplete)
            await p.close()
            assert p.findings() == []

        run(go())
