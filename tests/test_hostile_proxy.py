"""The proxy between a hostile peer and a good one (issue 27): bounded, and saying what happened.

``rsio-tck proxy --max-connections 1`` between the binding's reference client and a hostile server
(``HostileTarget``), and between a hostile client (``rsio-peer --connect URL --hostile MODE``) and the
reference peer.  The proxy passes every byte on (it must not cut real traffic), so what bounds it is its
relay (one read per direction in flight) and its monitor (a partial frame or line, RSocket's reassembly,
within the binding's limits); each run ends by itself in under 60 s at under 200 MB, exit 0 or 1 (1 when
either side broke a MUST rule), no traceback, and one line for the connection that says frames and bytes
each way and how it ended.  The modes chosen are those that stress the relay and the monitor (random
bytes, floods of frames judged one by one, fragments or lines that never end, WebSocket continuations);
the slow ones cost the peers' time-outs, not the proxy's memory.  One connection a run, 10-30 s each.
"""

from __future__ import annotations

import re

import pytest
from hostile_roles import assert_role_bounded, run_proxy

LINE = re.compile(r"^connection 1: \d+ frames, client [\d.]+ [KM]?B, server [\d.]+ [KM]?B; .+; MUST violations "
                  r"client \d+, server \d+.*$", re.MULTILINE)
# (binding, transport, mode, hostile side, a rule the line must cite or None)
RUNS = [
    ("rsocket", "tcp", "garbage", "server", None),
    ("rsocket", "tcp", "endless-fragments", "server", None),  # 64 MiB of reassembly at most: the binding's own
    ("rsocket", "tcp", "lease-storm", "server", "RS-LEASE-2"),
    ("rsocket", "ws", "ws-continuations", "server", None),
    ("rsocket", "tcp", "garbage", "client", None),
    ("rsocket", "tcp", "endless-fragments", "client", None),
    ("ditto", "tcp", "endless-line", "server", None),
    ("ditto", "tcp", "deep-json", "server", "DITTO-ENV-2"),
    ("ditto", "ws", "ws-ping-flood", "server", None),
    ("ditto", "tcp", "unclosed-json", "client", "DITTO-ENV-1"),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("binding", "transport", "mode", "hostile", "rule"), RUNS,
                         ids=[f"{b}-{t}-{m}-hostile-{h}" for b, t, m, h, _ in RUNS])
def test_the_proxy_between_a_hostile_and_a_good_peer_is_bounded(binding: str, transport: str, mode: str,
                                                               hostile: str, rule: str | None) -> None:
    measured = run_proxy(binding, transport, mode, hostile, duration=30.0)
    assert_role_bounded(measured, f"proxy {binding} {transport} {mode} (hostile {hostile})", exits=(0, 1))
    lines = LINE.findall(measured.output)
    assert len(lines) == 1, measured.output[-2000:]
    assert rule is None or rule in lines[0], lines[0]
