"""Integer elements are MessagePack values: any legal width passes, a non-shortest one warns (TCK-9).

rsio-v0 section 8 defines the elements of tck/range, tck/infinite and tck/error as
MessagePack-encoded values, and the MessagePack specification only recommends the
shortest format.  A target whose encoder always writes fixed-width integers is
therefore correct: the kit must judge it with warnings, never failures.
"""

from __future__ import annotations

import asyncio

import msgpack
from hypothesis import given
from hypothesis import strategies as st
from traces import S, done, err, hello, judge, last, nxt, onsub, part, sub

from rsio_tck.bindings.rsio.wire.msgpack_ints import INT_MIN, UINT_MAX, forms, read_int
from rsio_tck.catalogue import RULES, Level
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.reference_peer.rsio.freedoms import Freedoms
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite

WIDE = {v: forms(v)[-1] for v in range(-4, 300)}


@given(st.integers(INT_MIN, UINT_MAX))
def test_every_form_decodes_to_its_value_and_the_first_is_the_shortest(value: int) -> None:
    encodings = forms(value)
    assert encodings[0] == msgpack.packb(value)
    assert [read_int(e) for e in encodings] == [value] * len(encodings)
    assert len(set(encodings)) == len(encodings)


def test_read_int_refuses_what_is_not_one_integer() -> None:
    assert read_int(msgpack.packb(True)) is None
    assert read_int(msgpack.packb(1.0)) is None
    assert read_int(b"\x01\x02") is None  # two objects
    assert read_int(b"\xcd\x00") is None  # cut short
    assert read_int(b"") is None


def test_tck9_is_a_should_rule() -> None:
    assert RULES["TCK-9"].level is Level.SHOULD


def test_wide_integers_warn_once_per_stream_and_never_fail() -> None:
    findings = judge([*hello(), sub(1, 5, "tck/range?start=1&count=3"), onsub(1),
                      nxt(1, WIDE[1]), nxt(1, WIDE[2]), nxt(1, msgpack.packb(3)), done(1),
                      sub(3, 5, "tck/error?after=2&message=x"), onsub(3), nxt(3, WIDE[0]), nxt(3, WIDE[1]),
                      err(3, "x")])
    assert [(f.rule, f.level, f.side) for f in findings] == [("TCK-9", Level.SHOULD, S)] * 2


def test_a_split_wide_integer_is_joined_and_judged_as_its_value() -> None:
    wide = WIDE[5]
    good = judge([*hello(), sub(1, 5, "tck/infinite?start=5"), onsub(1),
                  part(1, 0, wide[:3]), last(1, 0, wide[3:]), nxt(1, msgpack.packb(6))])
    assert [f.rule for f in good] == ["TCK-9"]
    wrong = judge([*hello(), sub(1, 5, "tck/infinite?start=5"), onsub(1), part(1, 0, WIDE[6][:3]),
                   last(1, 0, WIDE[6][3:])])
    assert [f.rule for f in wrong] == ["TCK-2"]
    too_long = judge([*hello(), sub(1, 5, "tck/infinite"), onsub(1), part(1, 0, bytes(9)), part(1, 0, b"\x00")])
    assert [f.rule for f in too_long] == ["TCK-2"]


def test_the_peer_widens_reproducibly_from_its_seed_and_not_without_freedoms() -> None:
    shortest = [msgpack.packb(i) for i in range(10, 42)]

    def widths(seed: int, enabled: bool = True) -> list[list[bytes]]:
        habit = Freedoms(enabled, seed, 1)
        return [habit.widen_ints(10, shortest) for _ in range(40)]

    seeds = [seed for seed in range(20) if Freedoms(True, seed, 1).int_width == "some"]
    assert seeds, "no seed of 20 widens integers"
    assert widths(seeds[0]) == widths(seeds[0])
    assert any(batch != shortest for batch in widths(seeds[0]))
    assert all(read_int(e) == 10 + i for batch in widths(seeds[0]) for i, e in enumerate(batch))
    assert all(batch == shortest for batch in widths(seeds[0], enabled=False))
    assert Freedoms(False, 0, 1, wide_ints=True).widen_ints(10, shortest) == [forms(v)[-1] for v in range(10, 42)]


def test_a_target_writing_every_integer_widest_passes_with_warnings_only() -> None:
    # The areas whose scenarios read tck/range, tck/infinite and tck/error elements.
    chosen = [s for s in load_directory() if s.id.split("-")[0] in ("TCK", "DEM", "STR")]
    with EmbeddedPeer(extra=("--wide-ints",)) as url:
        # A generous signal timeout: the point is the verdicts on integer widths, not speed on a busy machine.
        results = asyncio.run(run_suite(chosen, RunConfig(target=url, codec="msgpack", signal_timeout=5.0), jobs=4))
    failed = [r.explain() for r in results if r.verdict not in (Verdict.PASS, Verdict.WARN, Verdict.SKIP)]
    assert not failed, "\n\n".join(failed)
    warned = [r for r in results if r.verdict is Verdict.WARN]
    assert len(warned) >= 10
    assert all({f.rule for f in r.findings if f.side is S} == {"TCK-9"} for r in warned)
