"""The decisions SPEC.md records where it had to reconcile its sources (Decisions s to w, m).

Each test pins what one decision says the kit does, so a change that drifts from
the recorded reading fails here.
"""

from __future__ import annotations

import msgpack
from test_connection_rules import wire
from traces import C, S, cancel, done, hello, judge, last, nxt, onsub, req, rules_of, sub

from rsio_tck.bindings.rsio.wire.frames import ClientHello, Goodbye, OnNext, OnSubscribe, ServerHello, Subscribe
from rsio_tck.errors import Side
from rsio_tck.protocol import Connection, ConnectionState
from rsio_tck.scenarios import load_directory
from rsio_tck.semantics.streams import StreamState
from rsio_tck.testpubs import large_bytes

OUTER = "tck/subscribe?to=kit%2Fseq&request="


def test_u_a_reused_ids_requests_are_judged_against_its_new_strategy() -> None:
    # The target's subscription 4 under strategy one ends; it re-subscribes 4 under batch:3.
    first = [*hello(), sub(1, 2**63 - 1, OUTER + "one"), onsub(1), sub(4, 1, "kit/seq", by=S), onsub(4, by=C),
             nxt(4, b"a", by=C), req(4, 1, by=S), done(4, by=C),
             sub(2, 2**63 - 1, OUTER + "batch:3"), onsub(2), sub(4, 3, "kit/seq", by=S), onsub(4, by=C)]
    new_strategy = [*first, nxt(4, b"b", by=C), nxt(4, b"c", by=C), nxt(4, b"d", by=C), req(4, 3, by=S)]
    old_strategy = [*first, nxt(4, b"b", by=C), req(4, 1, by=S)]
    assert [r for r in rules_of(judge(new_strategy)) if r[1] is S] == []
    assert ("DEM-7", S) in rules_of(judge(old_strategy))


def test_v_a_version_refusal_discards_the_clients_optimistic_subscriptions() -> None:
    for codec in ("msgpack", "varint"):
        client = Connection(Side.CLIENT, codec)
        client.send(ClientHello(version=0))
        client.send(Subscribe(publisher="p", subscriber=1, initial_demand=5))
        client.data_to_send()
        assert client.receive_data(wire(codec, Goodbye(reason="version 0 not supported"))) == [
            Goodbye(reason="version 0 not supported")]
        assert client.subscription_state(1, mine=True) is StreamState.CANCELLED
        assert client.state is ConnectionState.CLOSED
        # Whatever still arrives for the discarded subscription is not delivered.
        assert client.receive_data(wire(codec, OnSubscribe(subscriber=1, element_size=0),
                                        OnNext(subscriber=1, element=b"x"))) == []


def test_w_listing_extension_ids_changes_no_judgement() -> None:
    listed = [(C, ClientHello(version=0, extensions=(5, 9))), (S, ServerHello(version=0, extensions=(5,)))]
    body = [sub(1, 1, "p"), onsub(1), nxt(1), nxt(1), cancel(1)]
    assert rules_of(judge(listed + body)) == rules_of(judge(hello() + body)) == [("DEM-5", S)]


def test_t_no_scenario_requires_the_split_capability() -> None:
    requiring = [s.id for s in load_directory() if "split" in s.requires]
    assert requiring == []
    joining = [s.id for s in load_directory() if {"SPLIT-1", "SPLIT-5", "SPLIT-6"} & set(s.rules)]
    assert len(joining) >= 5


def test_m_part_p_wants_every_element_as_parts() -> None:
    name = "tck/large?size=4&count=2&part=8"
    as_parts = [*hello(), sub(1, 2, name), onsub(1), last(1, 0, large_bytes(0, 0, 4)), last(1, 0, large_bytes(1, 0, 4)),
                done(1)]
    whole = [*hello(), sub(1, 2, name), onsub(1), nxt(1, large_bytes(0, 0, 4))]
    assert judge(as_parts) == []
    assert rules_of(judge(whole)) == [("TCK-4", S)]


def test_m_integer_elements_are_values() -> None:
    wide = b"\xcd\x00\x07"
    findings = judge([*hello(), sub(1, 1, "tck/range?start=7&count=1"), onsub(1), nxt(1, wide), done(1)])
    assert [(f.rule, f.level.value) for f in findings] == [("TCK-9", "SHOULD")]
    assert msgpack.unpackb(wide) == 7
