"""Test publishers' elements judged in bulk (``contract_runs.run_fits``) find what judging them one by one finds.

The decoder hands long stretches of element frames to the judge as one run; on a test publisher's stream
the judge compares the whole run with the elements its contract expects next and advances it at once.
Any difference from the expected elements (a wrong value, a wider integer, one element too many) must
send the run down the frame-by-frame path, so the findings, their frame numbers and the contract's
position never depend on how the bytes were grouped.
"""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    ClientHello,
    OnComplete,
    OnNext,
    OnNextPacked,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from rsio_tck.bindings.rsio.wire.runs import StridedRun, VariableRun
from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor
from rsio_tck.testpubs import Fixed, element, fixed_elements, parse

CODECS = ("msgpack", "varint")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PUBLISHERS = ("tck/range?start=5&count=300", "tck/infinite?start=250", "tck/error?after=120",
              "tck/fixed?size=2&count=400", "tck/fixed?size=3&count=300", "tck/fixed?size=1&count=600")


@st.composite
def contract_traces(draw: st.DrawFn, codec: str) -> list[tuple[Side, bytes]]:
    """One test publisher's stream: bursts of its elements, right or with one thing wrong somewhere."""
    enc = {side: get_codec(codec).encoder() for side in Side}
    name = draw(st.sampled_from(PUBLISHERS))
    spec = parse(name)
    size = getattr(spec, "size", 0)
    steps = [
        (Side.CLIENT, enc[Side.CLIENT].encode(ClientHello(version=0))),
        (Side.SERVER, enc[Side.SERVER].encode(ServerHello(version=0))),
        (Side.CLIENT, enc[Side.CLIENT].encode(Subscribe(publisher=name, subscriber=1,
                                                        initial_demand=draw(st.integers(0, 700))))),
        (Side.SERVER, enc[Side.SERVER].encode(OnSubscribe(subscriber=1, element_size=size))),
    ]
    index = 0
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.integers(0, 4)) == 0:
            steps.append((Side.CLIENT, enc[Side.CLIENT].encode(Request(subscriber=1, demand=draw(st.integers(1, 300))))))
            continue
        count = draw(st.integers(1, 200))
        elements = [element(spec, i) for i in range(index, index + count)]  # type: ignore[arg-type]
        fault = draw(st.sampled_from(["none"] * 6 + ["value", "wider", "short"]))
        at = draw(st.integers(0, count - 1))
        if fault == "value":
            elements[at] = bytes(len(elements[at])) if elements[at] != bytes(len(elements[at])) else b"\x01" * len(elements[at])
        elif fault == "wider" and not size:
            elements[at] = b"\xcf" + msgpack.unpackb(elements[at]).to_bytes(8, "big")  # legal, not shortest (TCK-9)
        elif fault == "short" and size:
            elements[at] = elements[at][:-1]
        per_frame = draw(st.sampled_from([0, 0, 4, 64])) if size else 0
        if per_frame and all(len(e) == size for e in elements):
            frames = [OnNextPacked(subscriber=1, count=len(chunk), data=b"".join(chunk))
                      for chunk in (elements[i:i + per_frame] for i in range(0, count, per_frame))]
        else:
            frames = [OnNext(subscriber=1, element=e) for e in elements]
        steps.append((Side.SERVER, b"".join(enc[Side.SERVER].encode(f) for f in frames)))
        index += count
    if draw(st.booleans()):
        steps.append((Side.SERVER, enc[Side.SERVER].encode(OnComplete(subscriber=1))))
    return steps


def _judged(codec: str, steps: list[tuple[Side, bytes]], runs: bool) -> list[object]:
    monitor = Monitor(codec)
    if not runs:
        # The monitor binds each decoder's feed when it is made: the frame-by-frame path is chosen there.
        monitor._feed = {side: decoder.feed for side, decoder in monitor._decoders.items()}
    for side, data in steps:
        monitor.observe(side, data)
    contract = monitor.session.contract  # type: ignore[attr-defined]
    positions = {key: (c.index, c.finished, c.widened) for key, c in contract.contracts.items()}
    return [[f.to_json() for f in monitor.findings], monitor.frame_count, positions]


@pytest.mark.parametrize("codec", CODECS)
@SETTINGS
@given(data=st.data())
def test_test_publisher_runs_are_judged_as_their_frames_are(codec: str, data: st.DataObject) -> None:
    steps = data.draw(contract_traces(codec))
    assert _judged(codec, steps, runs=True) == _judged(codec, steps, runs=False)


@pytest.mark.parametrize(("name", "run_type"), [("tck/infinite", VariableRun), ("tck/fixed?size=2&count=5000", StridedRun)])
def test_a_right_run_advances_its_contract_in_bulk(name: str, run_type: type) -> None:
    # The bulk path is taken (not only equivalent): the judge never expands the run into frames.
    enc = get_codec("msgpack").encoder()
    spec = parse(name)
    size = getattr(spec, "size", 0)
    body = ([OnNextPacked(subscriber=1, count=50, data=fixed_elements(2, i, 50)) for i in range(0, 5000, 50)] if size
            else [OnNext(subscriber=1, element=element(spec, i)) for i in range(3000)])  # type: ignore[arg-type]
    opening = enc.encode(ServerHello(version=0)) + enc.encode(OnSubscribe(subscriber=1, element_size=size))
    burst = b"".join(enc.encode(f) for f in body)
    assert any(isinstance(item, run_type) for item in get_codec("msgpack").decoder().feed_runs(opening + burst))
    monitor = Monitor("msgpack")
    client = get_codec("msgpack").encoder()
    monitor.observe(Side.CLIENT, client.encode(ClientHello(version=0)))
    monitor.observe(Side.CLIENT, client.encode(Subscribe(publisher=name, subscriber=1, initial_demand=10_000)))
    monitor.observe(Side.SERVER, opening)
    expanded = []
    original = VariableRun.to_frames, StridedRun.to_frames
    try:
        VariableRun.to_frames = lambda self: expanded.append(self) or original[0](self)  # type: ignore[method-assign]
        StridedRun.to_frames = lambda self: expanded.append(self) or original[1](self)  # type: ignore[method-assign]
        monitor.observe(Side.SERVER, burst)
    finally:
        VariableRun.to_frames, StridedRun.to_frames = original  # type: ignore[method-assign]
    assert not monitor.findings and not expanded
    contract = next(iter(monitor.session.contract.contracts.values()))  # type: ignore[attr-defined]
    assert contract.index == (5000 if size else 3000)


@given(size=st.integers(1, 2048), index=st.integers(0, 2**70))
def test_a_fixed_element_is_its_index_modulo_256_to_its_size(size: int, index: int) -> None:
    """tck/fixed's definition, which ``element`` computes without the power once the index fits."""
    assert element(Fixed(size=size), index) == (index % 256**size).to_bytes(size, "big")
    if size <= 8:
        assert fixed_elements(size, index, 3) == b"".join(element(Fixed(size=size), i) for i in range(index, index + 3))
