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

Then several hostile clients at once through one proxy (``run_proxy_many``: eight clients of 40 MiB each to a
server that reads everything): each connection is bounded by the binding's maxima, so before the proxy's budget
of bytes held across connections (``--max-held``) eight of them took it to 404-435 MB (RSocket) and 215 MB
(Ditto).  Now the connections whose bytes pass the budget are closed at the kit's limit, their line says so,
and neither side is charged for that close.
"""

from __future__ import annotations

import re

import pytest
from hostile_roles import assert_role_bounded, run_proxy, run_proxy_many

# Slow by nature (each waits out a hostile peer within a bound of tens of seconds): the tier `make interop`
# runs, not `make test` (issue 29).
pytestmark = pytest.mark.hostile

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


# (binding, transport, mode): each client's bytes grow what the proxy holds for it until the client stops
MANY = [
    ("rsocket", "tcp", "endless-fragments"),  # reassembly (64 MiB a direction at most)
    ("rsocket", "ws", "endless-fragments"),
    ("ditto", "tcp", "endless-line"),  # the line in progress (16 MiB at most)
    ("ditto", "ws", "endless-line"),  # the WebSocket message being joined from its continuations
]
CLIENTS = 8
CONNECTION = re.compile(r"^connection \d+: .*$", re.MULTILINE)
AT_THE_LIMIT = "the kit closed it at the kit's limit: 64 MiB held across connections (--max-held), not judged from there"
# What a judged end of stream inside a frame or line would cite: the kit's own close is judged against nobody.
CLOSE_RULES = ("RS-FRAME-8", "DITTO-LINE-2")


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("binding", "transport", "mode"), MANY, ids=[f"{b}-{t}-{m}" for b, t, m in MANY])
def test_several_hostile_clients_at_once_keep_the_proxy_within_its_budget(binding: str, transport: str,
                                                                          mode: str) -> None:
    measured = run_proxy_many(binding, transport, mode, CLIENTS)
    assert_role_bounded(measured, f"proxy {binding} {transport} {mode} x{CLIENTS}", exits=(0, 1))
    lines = CONNECTION.findall(measured.output)
    assert len(lines) == CLIENTS, measured.output[-3000:]
    limited = [line for line in lines if AT_THE_LIMIT in line]
    assert limited, "\n".join(lines)  # 8 x 40 MiB do not fit in 64 MiB: the budget closed some
    for line in limited:
        assert re.search(r"MUST violations client \d+, server 0", line), line
        assert not any(rule in line for rule in CLOSE_RULES), line
