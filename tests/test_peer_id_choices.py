"""The reference peers' id choices (``--ids``), one by one: each gives a legal id no live one shares.

The whole matrix of choices, a suite run apiece (``tests/test_kit_violations.py``), is in the slow tier;
these hold each choice's own rule in ``make test``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rsio_tck.reference_peer.ditto.connection import DittoConnection
from rsio_tck.reference_peer.ditto.freedoms import Freedoms as DittoFreedoms
from rsio_tck.reference_peer.rsocket.freedoms import DRAFT
from rsio_tck.reference_peer.rsocket.freedoms import Freedoms as RSocketFreedoms

TOP = 2**31 - 3


@pytest.mark.parametrize(("choice", "used", "remote_highest", "expected"), [
    ("fresh", {2, 4}, 7, 6),  # the sequential one, whatever else was used
    ("lowest", {1, 2, 3}, 9, 4),
    ("highest", {TOP, TOP - 1}, 9, TOP - 2),
    ("mirror", {2}, 9, 11),  # the very id the remote would take next
    ("mirror", {11, 1}, 9, 2),  # taken: the lowest unused instead
    ("mirror", {1}, TOP - 1, 2),  # past the top: likewise
])
def test_the_rsocket_draft_peer_chooses_its_stream_ids_as_told(choice: str, used: set[int], remote_highest: int,
                                                                expected: int) -> None:
    freedoms = RSocketFreedoms(False, 0, 0, profile=DRAFT, ids=choice)
    assert freedoms.stream_id(used, lambda: 6, remote_highest) == expected


def test_the_rsocket_draft_peers_random_ids_are_unused_and_in_range() -> None:
    freedoms = RSocketFreedoms(False, 0, 0, profile=DRAFT, ids="random")
    used: set[int] = set()
    for _ in range(200):
        sid = freedoms.stream_id(used, lambda: 0, 1)
        assert 1 <= sid <= TOP and sid not in used
        used.add(sid)


def test_rsocket_1_0_refuses_any_choice_but_fresh() -> None:
    with pytest.raises(ValueError, match="RS-STREAMID-2"):
        RSocketFreedoms(False, 0, 0, profile="rsocket-1.0", ids="lowest")


def _ditto(choice: str, live: set[str]) -> SimpleNamespace:
    return SimpleNamespace(freedoms=DittoFreedoms(False, 0, 0, ids=choice), subscriptions=dict.fromkeys(live),
                           announced=set(live))


@pytest.mark.parametrize(("choice", "live", "correlation_id", "expected"), [
    ("lowest", {"0", "1", "3"}, "c-1", "2"),
    ("mirror", {"0"}, "c-1", "c-1"),  # the kit's own correlation id, back as the subscription id
    ("mirror", {"c-1", "0"}, "c-1", "1"),  # live already: the lowest free number instead
    ("mirror", set(), None, "0"),  # no correlation id to mirror
])
def test_the_ditto_peer_chooses_its_subscription_ids_as_told(choice: str, live: set[str], correlation_id: str | None,
                                                              expected: str) -> None:
    connection = _ditto(choice, live)
    sub = SimpleNamespace(correlation_id=correlation_id)
    assert DittoConnection.fresh_id(connection, sub) == expected  # type: ignore[arg-type]


def test_the_ditto_peers_random_ids_are_never_live() -> None:
    connection = _ditto("random", set())
    for _ in range(200):
        sid = DittoConnection.fresh_id(connection)  # type: ignore[arg-type]
        assert len(sid) == 12 and sid not in connection.subscriptions
        connection.subscriptions[sid] = None
