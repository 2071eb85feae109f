"""The contract judge: test publishers served right and wrong, and tck/subscribe reports."""

from __future__ import annotations

import msgpack
import pytest
from traces import C, S, Step, cancel, done, err, hello, judge, last, nxt, onsub, packed, part, req, rules_of, sub

from rsio_tck.bindings.rsio.wire.frames import OnNextPacked
from rsio_tck.errors import Side
from rsio_tck.testpubs import Fixed, Large, Range, element, large_bytes, parse, report

MAX = 2**63 - 1
p = msgpack.packb


def fixed(i: int, size: int = 2) -> bytes:
    return element(Fixed(size=size), i)


INNER = "kit/seq"
OUTER = "tck/subscribe?to=kit%2Fseq&request="


def rep(signal: str, **kw: object) -> bytes:
    return report(signal, **kw)  # type: ignore[arg-type]


# (rule, side, conforming trace, violating trace)
CASES: list[tuple[str, Side, list[Step], list[Step]]] = [
    ("TCK-1", S,
     [*hello(), sub(1, 5, "tck/range?start=7&count=3"), onsub(1), nxt(1, p(7)), nxt(1, p(8)), nxt(1, p(9)), done(1)],
     [*hello(), sub(1, 5, "tck/range?start=7&count=3"), onsub(1), nxt(1, p(7)), nxt(1, p(9))]),
    ("TCK-1", S,
     [*hello(), sub(1, 0, "tck/range?count=0"), onsub(1), done(1)],
     [*hello(), sub(1, 5, "tck/range?count=2"), onsub(1), nxt(1, p(0)), done(1)]),
    ("TCK-2", S,
     [*hello(), sub(1, 3, "tck/infinite?start=-2"), onsub(1), nxt(1, p(-2)), nxt(1, p(-1)), nxt(1, p(0))],
     [*hello(), sub(1, 3, "tck/infinite"), onsub(1), nxt(1, p(0)), done(1)]),
    ("TCK-3", S,
     [*hello(), sub(1, 5, "tck/fixed?size=2&count=4"), onsub(1, 2), nxt(1, fixed(0)),
      (S, OnNextPacked(subscriber=1, count=3, data=fixed(1) + fixed(2) + fixed(3))), done(1)],
     [*hello(), sub(1, 5, "tck/fixed?size=2&count=4"), onsub(1, 2), nxt(1, fixed(0)), nxt(1, fixed(0))]),
    ("TCK-3", S,
     [*hello(), sub(1, 5, "tck/fixed?size=2&count=0"), onsub(1, 2), done(1)],
     [*hello(), sub(1, 5, "tck/fixed?size=2&count=1"), onsub(1, 4)]),
    ("TCK-4", S,
     [*hello(), sub(1, 5, "tck/large?size=10&count=2&part=4"), onsub(1),
      part(1, 0, large_bytes(0, 0, 4)), part(1, 0, large_bytes(0, 4, 4)), last(1, 0, large_bytes(0, 8, 2)),
      part(1, 9, large_bytes(1, 0, 3)), part(1, 9, large_bytes(1, 3, 4)), last(1, 9, large_bytes(1, 7, 3)), done(1)],
     [*hello(), sub(1, 5, "tck/large?size=10&count=2&part=4"), onsub(1), part(1, 0, large_bytes(0, 0, 5))]),
    # With part=P even an element of at most P bytes comes as parts: here one lone last part.
    ("TCK-4", S,
     [*hello(), sub(1, 5, "tck/large?size=3&count=2&part=3"), onsub(1), last(1, 4, large_bytes(0, 0, 3)),
      part(1, 4, large_bytes(1, 0, 2)), last(1, 4, large_bytes(1, 2, 1)), done(1)],
     [*hello(), sub(1, 5, "tck/large?size=3&count=2&part=3"), onsub(1), nxt(1, large_bytes(0, 0, 3))]),
    ("TCK-4", S,
     [*hello(), sub(1, 5, "tck/large?size=3&count=2"), onsub(1), nxt(1, large_bytes(0, 0, 3)),
      part(1, 1, large_bytes(1, 0, 1)), last(1, 1, large_bytes(1, 1, 2)), done(1)],
     [*hello(), sub(1, 5, "tck/large?size=3&count=2"), onsub(1), nxt(1, large_bytes(0, 0, 3)),
      part(1, 1, large_bytes(1, 0, 1)), last(1, 1, large_bytes(1, 1, 1))]),
    # A wider legal MessagePack integer is the right value: a TCK-9 warning, never a TCK-1 failure;
    # a wide encoding of the wrong value is still TCK-1.
    ("TCK-9", S,
     [*hello(), sub(1, 5, "tck/range?start=7&count=2"), onsub(1), nxt(1, p(7)), nxt(1, p(8)), done(1)],
     [*hello(), sub(1, 5, "tck/range?start=7&count=2"), onsub(1), nxt(1, b"\xd3" + (7).to_bytes(8, "big")),
      nxt(1, b"\xcd\x00\x08"), done(1)]),
    ("TCK-1", S,
     [*hello(), sub(1, 5, "tck/range?start=7&count=1"), onsub(1), nxt(1, p(7)), done(1)],
     [*hello(), sub(1, 5, "tck/range?start=7&count=1"), onsub(1), nxt(1, b"\xcc\x08"), done(1)]),
    ("TCK-5", S,
     [*hello(), sub(1, 5, "tck/error?after=2&message=no%20way"), onsub(1), nxt(1, p(0)), nxt(1, p(1)),
      err(1, "no way")],
     [*hello(), sub(1, 5, "tck/error?after=2&message=no%20way"), onsub(1), nxt(1, p(0)), err(1, "no way")]),
    ("TCK-7", S,
     [*hello(), sub(1, 5, "tck/range?count=banana"), onsub(1), err(1, "count is not an integer")],
     [*hello(), sub(1, 5, "tck/range?count=banana"), onsub(1), nxt(1, p(0))]),
    ("TCK-7", S,
     [*hello(), sub(1, 5, "tck/no-such-publisher"), onsub(1), err(1, "unknown")],
     [*hello(), sub(1, 5, "tck/no-such-publisher"), onsub(1), done(1)]),
    ("TCK-8", S,
     [*hello(), sub(1, 5, "tck/range?count=1"), onsub(1), nxt(1, p(0)), done(1)],
     [*hello(), sub(1, 5, "tck/range?count=1"), onsub(1), nxt(1, b"\xc1")]),
    ("STR-2", S,
     [*hello(), sub(1, 5, "unserved/x"), onsub(1), err(1, "no such publisher")],
     [*hello(), sub(1, 5, "unserved/x"), onsub(1), done(1)]),
    # tck/subscribe: the target subscribes back (server subscribes to the client's publisher).
    ("TCK-6", S,
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      nxt(4, b"a", by=C), done(4, by=C), nxt(1, rep("onNext", element=b"a")), nxt(1, rep("onComplete")), done(1)],
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      nxt(4, b"a", by=C), nxt(1, rep("onNext", element=b"b"))]),
    ("TCK-6", S,
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      err(4, "boom", by=C), nxt(1, rep("onError", error="boom")), done(1)],
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      nxt(4, b"a", by=C), done(1)]),
    ("SPLIT-1", S,
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      part(4, 2, b"ab", by=C), last(4, 2, b"c", by=C), nxt(1, rep("onNext", element=b"abc"))],
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      part(4, 2, b"ab", by=C), last(4, 2, b"c", by=C), nxt(1, rep("onNext", element=b"c"))]),
    ("PACK-4", S,
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, 1, by=C),
      nxt(4, b"x", by=C), packed(4, 2, 1, by=C), *[nxt(1, rep("onNext", element=e)) for e in (b"x", b"\0", b"\0")]],
     [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, 1, by=C),
      nxt(4, b"x", by=C), packed(4, 2, 1, by=C), nxt(1, rep("onNext", element=b"x")), nxt(1, rep("onComplete"))]),
    ("STR-5", S,
     [*hello(), sub(1, MAX, OUTER + "one"), onsub(1), sub(4, 1, INNER, by=S), onsub(4, by=C), nxt(4, b"a", by=C),
      done(4, by=C), nxt(1, rep("onNext", element=b"a")), nxt(1, rep("onComplete")), done(1)],
     [*hello(), sub(1, MAX, OUTER + "one"), onsub(1), sub(4, 1, INNER, by=S), onsub(4, by=C), nxt(4, b"a", by=C),
      err(4, "early", by=C), nxt(1, rep("onNext", element=b"a")), done(1)]),
    ("STR-8", S,
     [*hello(), sub(1, MAX, OUTER + "cancel:1"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      nxt(4, b"a", by=C), nxt(4, b"b", by=C), req(4, 1, by=S), nxt(1, rep("onNext", element=b"a"))],
     [*hello(), sub(1, MAX, OUTER + "cancel:1"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
      nxt(4, b"a", by=C), nxt(4, b"b", by=C), nxt(1, rep("onNext", element=b"a")), nxt(1, rep("onNext", element=b"b"))]),
    ("DEM-7", S,
     [*hello(), sub(1, MAX, OUTER + "one"), onsub(1), sub(4, 1, INNER, by=S), onsub(4, by=C), nxt(4, b"a", by=C),
      req(4, 1, by=S), nxt(4, b"b", by=C), req(4, 1, by=S)],
     [*hello(), sub(1, MAX, OUTER + "one"), onsub(1), sub(4, 1, INNER, by=S), onsub(4, by=C), req(4, 1, by=S)]),
    ("DEM-7", S,
     [*hello(), sub(1, MAX, OUTER + "batch:2"), onsub(1), sub(4, 2, INNER, by=S), onsub(4, by=C),
      nxt(4, b"a", by=C), nxt(4, b"b", by=C), req(4, 2, by=S)],
     [*hello(), sub(1, MAX, OUTER + "batch:2"), onsub(1), sub(4, 5, INNER, by=S)]),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_conforming_contract_trace_has_no_finding(case: tuple[str, Side, list[Step], list[Step]]) -> None:
    _, side, good, _ = case
    assert [f.message for f in judge(good) if f.side is side] == []


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_violating_contract_trace_is_judged_with_its_rule(case: tuple[str, Side, list[Step], list[Step]]) -> None:
    rule, side, _, bad = case
    found = [r for r in rules_of(judge(bad)) if r[1] is side]
    assert found and found[0] == (rule, side), found


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tck/range?start=5&count=3", Range(start=5, count=3)),
        ("tck/range", Range()),
        ("tck/large?size=10&part=3", Large(size=10, part=3)),
    ],
)
def test_test_publisher_names_parse(name: str, expected: object) -> None:
    assert parse(name) == expected


@pytest.mark.parametrize(
    "name", ["tck/fixed", "tck/fixed?size=0", "tck/range?count=-1", "tck/range?count=1&count=2", "tck/nope",
             "tck/subscribe?request=all", "tck/subscribe?to=x&request=batch:0", "tck/large?size=1&part=0"]
)
def test_malformed_test_publisher_names_are_rejected(name: str) -> None:
    assert type(parse(name)).__name__ == "Malformed"


def test_subscribe_back_name_is_percent_decoded() -> None:
    spec = parse("tck/subscribe?to=tck%2Frange%3Fstart%3D1%26count%3D2&request=batch:3")
    assert spec is not None and spec.to == "tck/range?start=1&count=2"
    assert str(spec.request) == "batch:3"


def test_large_elements_follow_the_byte_formula() -> None:
    data = large_bytes(3, 0, 600)
    assert all(data[j] == (3 + j) % 256 for j in range(600))
    assert large_bytes(3, 250, 10) == data[250:260]


def test_unknown_parameter_is_not_held_against_a_target() -> None:
    trace = [*hello(), sub(1, 5, "tck/range?count=1&colour=red"), onsub(1), nxt(1, p(0)), done(1)]
    assert judge(trace) == []


def test_client_side_is_not_judged_by_the_contract() -> None:
    trace = [*hello(), sub(1, 5, "tck/range?count=1", by=C), onsub(1), nxt(1, p(0)), done(1)]
    assert [r for r in rules_of(judge(trace)) if r[1] is C] == []


def test_reports_after_the_target_gives_up_on_its_own_are_not_matched() -> None:
    # Decision p: the target cancels its inner subscription outside cancel:N (its reassembly
    # limit, say); what it reports after that, and when it completes, is its own business.
    start = [*hello(), sub(1, MAX, OUTER + "all"), onsub(1), sub(4, MAX, INNER, by=S), onsub(4, by=C),
             nxt(4, b"a", by=C), part(4, 2, b"big", by=C)]
    given_up = [nxt(1, rep("onNext", element=b"a")), cancel(4, by=S), part(4, 2, b"ger", by=C), last(4, 2, b"!", by=C),
                done(4, by=C)]
    for tail in ([nxt(1, rep("onError", error="element over my limit")), done(1)], [done(1)],
                 [nxt(1, rep("onNext", element=b"bigger!")), nxt(1, rep("onComplete")), done(1)]):
        assert [f.message for f in judge(start + given_up + tail) if f.side is S] == []
    # Reports due before the cancel are still matched, and reports must still be MessagePack.
    wrong_before = [nxt(1, rep("onNext", element=b"b")), cancel(4, by=S), done(1)]
    assert ("TCK-6", S) in rules_of(judge(start + wrong_before))
    not_msgpack = [nxt(1, rep("onNext", element=b"a")), cancel(4, by=S), nxt(1, b"\xc1"), done(1)]
    assert ("TCK-8", S) in rules_of(judge(start + not_msgpack))
