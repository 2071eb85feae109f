"""Eclipse Ditto's Java client (interop/ditto-client, ditto-client 2.4.0) against a minimal /ws/2 endpoint.

The endpoint is test-only: the ``websockets`` library serves ``ws://127.0.0.1:PORT/ws/2``
and each text message goes through the Ditto reference peer's sans-IO session as
one line (and each line back as one text message), the way the binding's WebSocket
framing hook will carry it in the kit.  Every message the client sends is checked
against the subscriber's rules (DITTO-SUB-7, DITTO-SUB-8, DITTO-DEM-3) here, until
listen mode judges it over ws:// (issue 17, the WebSocket transport).  Skipped
without a JDK or without the fixture built (``interop/ditto-client/build.sh``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rsio_tck.bindings.ditto import ControlMessage, decode_websocket_text
from rsio_tck.reference_peer.ditto.faults import build_policy
from rsio_tck.reference_peer.ditto.freedoms import Freedoms
from rsio_tck.reference_peer.ditto.session import DittoSession

websockets = pytest.importorskip("websockets")
ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "interop" / "ditto-client"
CASE_TIMEOUT = 60.0
CASES = ("search-pages", "search-all", "search-stream", "search-cancel", "search-empty", "search-failed")


class SubscriberCheck:
    """The subscriber's rules on what the client sends (a test's judge, not the kit's)."""

    def __init__(self) -> None:
        self.announced: set[str] = set()
        # Cancelled by the client: anything after is its fault.  Ended by the endpoint: requests may still
        # cross the complete/failed in flight (ditto-client asks for pages as they are consumed, up to its
        # buffer ahead), and the endpoint cannot tell when the end arrived: not judged here.
        self.over: set[str] = set()
        self.broken: list[str] = []
        self.sent: list[str] = []

    def client_sent(self, text: str) -> None:
        self.sent.append(text)
        message = decode_websocket_text(text)
        if isinstance(message, ControlMessage):
            return
        action = message.topic.action
        sid = getattr(message, "subscription_id", None)
        if action in ("request", "cancel"):
            if sid not in self.announced:
                self.broken.append(f"DITTO-SUB-7: {action} for {sid!r}, never announced")
            elif sid in self.over:
                self.broken.append(f"DITTO-SUB-8: {action} for {sid} after its end or cancel")
            if action == "request" and getattr(message, "demand", 1) <= 0:
                self.broken.append(f"DITTO-DEM-3: demand {getattr(message, 'demand', None)}")
            if action == "cancel":
                self.over.add(str(sid))

    def endpoint_sent(self, text: str) -> None:
        message = decode_websocket_text(text)
        if isinstance(message, ControlMessage):
            return
        sid = getattr(message, "subscription_id", None)
        if message.topic.action == "created":
            self.announced.add(str(sid))
        # complete/failed: see ``over`` above.


@contextlib.asynccontextmanager
async def endpoint(check: SubscriberCheck) -> AsyncIterator[str]:
    """ws://127.0.0.1:PORT/ws/2 served by the reference peer's session, one connection at a time."""

    async def serve(ws: Any) -> None:
        session = DittoSession(policy=build_policy(()), freedoms=Freedoms(True, 0, 1))
        pending = b""

        async def flush() -> None:
            nonlocal pending
            pending += session.data_to_send()
            *lines, pending = pending.split(b"\n")
            for line in lines:
                text = line.decode("utf-8")
                check.endpoint_sent(text)
                await ws.send(text)

        async for text in ws:
            assert isinstance(text, str), "ditto-client sent a binary message (DITTO-WS-1)"
            check.client_sent(text)
            session.receive_data(text.replace("\n", "\r").encode("utf-8") + b"\n")
            await flush()
            while session.pump(256):
                await flush()
            await flush()

    async with websockets.serve(serve, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws/2"


async def run_case(case: str) -> tuple[int | None, str, SubscriberCheck]:
    check = SubscriberCheck()
    async with endpoint(check) as url:
        process = await asyncio.create_subprocess_exec(
            str(CLIENT / "client"), env={**os.environ, "RSIO_URL": url, "RSIO_TESTCASE": case},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            output, _ = await asyncio.wait_for(process.communicate(), CASE_TIMEOUT)
        except TimeoutError:
            process.kill()
            output, _ = await process.communicate()
        return process.returncode, output.decode(errors="replace"), check


def _built() -> None:
    if shutil.which("java") is None or not (CLIENT / "target" / "classpath.txt").exists():
        pytest.skip("interop/ditto-client is not built (interop/ditto-client/build.sh; needs a JDK and Maven)")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", CASES)
def test_ditto_client_runs_each_search_case_and_keeps_the_subscriber_rules(case: str) -> None:
    _built()
    code, output, check = asyncio.run(run_case(case))
    assert code == 0, output
    assert check.broken == [], (check.broken, check.sent)
    assert any('"search/subscribe"' in text or "/search/subscribe" in text for text in check.sent)


@pytest.mark.timeout(120)
def test_ditto_client_says_127_for_a_case_it_does_not_support() -> None:
    _built()
    code, output, _ = asyncio.run(run_case("stream-range"))
    assert code == 127, output


def test_the_fixture_knows_the_ditto_client_test_cases_of_listen_mode() -> None:
    from rsio_tck.listen import client_tests
    from rsio_tck.reference_peer.ditto.faults import known_rule

    cases = client_tests("ditto")
    assert tuple(case.name for case in cases) == CASES
    source = (CLIENT / "src" / "main" / "java" / "tck" / "SearchClient.java").read_text()
    assert all(f'"{name}"' in source for name in CASES)
    # Each case cites the subscriber's rules it exercises (the catalogue's once the Ditto binding is merged).
    assert all(case.rules and all(known_rule(rule) for rule in case.rules) for case in cases)
    assert {"DITTO-SUB-7", "DITTO-SUB-8", "DITTO-DEM-3"} <= {rule for case in cases for rule in case.rules}
