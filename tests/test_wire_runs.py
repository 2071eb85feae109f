"""Element runs: ``feed_runs`` decodes exactly what ``feed`` decodes, and judging runs judges the frames.

The run finders only ever take bytes they have proved to be plain element
frames, so the property here is differential: for any byte stream, valid or
not, cut anywhere, ``feed_runs`` with its runs expanded returns the frames
``feed`` returns, raises the same violation at the same offset, and leaves the
decoder at the same offset.  The streams are bursty (runs are what the finders
look for) and sprinkled with legal-but-unusual encodings (wider Ids, wider
``bin`` headers) and illegal ones (a wide type code, a float Id), which must
each end a run rather than slip into one.
"""

from __future__ import annotations

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    OnComplete,
    OnNext,
    OnNextPacked,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from rsio_tck.bindings.rsio.wire.runs import ElementRun, StridedRun, VariableRun, expand
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.monitor import Monitor
from rsio_tck.monitor.monitor import MAX_FINDINGS_PER_RULE

CODECS = ("msgpack", "varint")
SETTINGS = settings(max_examples=int(__import__("os").environ.get("RUNS_EXAMPLES", "120")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
IDS = (0, 1, 127, 128, 300, 70000, 2**40)


def _msgpack_onnext(sid: int, element: bytes, variant: str) -> bytes:
    """A variable-size onNext in the msgpack profile, optionally encoded unusually."""
    if variant == "wide-id":  # legal: an Id may use a wider int encoding
        head = b"\x08\xcf" + sid.to_bytes(8, "big")
    elif variant == "wide-bin":  # legal: a bin16 header for a short element
        return b"\x08" + msgpack.packb(sid) + b"\xc5" + len(element).to_bytes(2, "big") + element
    elif variant == "wide-code":  # illegal: type code 0xcc is no message
        head = b"\xcc\x08" + msgpack.packb(sid)
    elif variant == "float-id":  # illegal: an Id must be an int
        head = b"\x08" + msgpack.packb(float(sid))
    elif variant == "str-element":  # illegal: an element is bin
        return b"\x08" + msgpack.packb(sid) + msgpack.packb(element.decode("latin-1"))
    else:
        head = b"\x08" + msgpack.packb(sid)
    return head + msgpack.packb(element, use_bin_type=True)


VARIANTS = ("plain",) * 80 + ("wide-id", "wide-bin", "wide-code", "float-id", "str-element")


@st.composite
def bursty_streams(draw: st.DrawFn, codec: str) -> bytes:
    """Server-to-client bytes: onSubscribes, bursts of element frames, terminals, the odd unusual frame."""
    encoder = get_codec(codec).encoder()
    sizes: dict[int, int] = {}
    out = [encoder.encode(ServerHello(version=0))]
    for _ in range(draw(st.integers(1, 8))):
        sid = draw(st.sampled_from(IDS))
        action = draw(st.sampled_from(["subscribe", "burst", "burst", "burst", "complete", "interleave"]))
        if action == "interleave":  # variable-size elements dealt round-robin to several Ids
            others = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3))
            for i in range(draw(st.integers(1, 40))):
                target = ([sid, *others])[i % (1 + len(others))]
                if sizes.get(target):
                    out.append(encoder.encode(OnNext(subscriber=target, element=bytes(sizes[target]))))
                else:
                    out.append(encoder.encode(OnNext(subscriber=target, element=bytes([i % 256]) * (i % 9))))
            continue
        if action == "subscribe" or (action == "burst" and sid not in sizes and draw(st.booleans())):
            size = draw(st.sampled_from([0, 1, 8, 200]))
            out.append(encoder.encode(OnSubscribe(subscriber=sid, element_size=size)))
            sizes[sid] = size
        elif action == "complete":
            out.append(encoder.encode(OnComplete(subscriber=sid)))
            sizes.pop(sid, None)
        if action != "burst":
            continue
        size = sizes.get(sid, 0)
        count = draw(st.integers(1, 40))
        if size:
            per_frame = draw(st.sampled_from([0, 0, 1, 3, 16]))  # 0: onNext, else onNextPacked of that count
            for i in range(count):
                if per_frame:
                    frame = OnNextPacked(subscriber=sid, count=per_frame, data=bytes([i % 256]) * (size * per_frame))
                    out.append(encoder.encode(frame))
                else:
                    out.append(encoder.encode(OnNext(subscriber=sid, element=bytes([i % 256]) * size)))
        else:
            length = draw(st.sampled_from([None, 0, 5, 300]))  # None: lengths vary element by element
            for i in range(count):
                element = bytes([i % 256]) * (i % 7 if length is None else length)
                variant = draw(st.sampled_from(VARIANTS)) if codec == "msgpack" else "plain"
                if variant == "plain":
                    out.append(encoder.encode(OnNext(subscriber=sid, element=element)))
                else:
                    out.append(_msgpack_onnext(sid, element, variant))
                    if variant not in ("wide-id", "wide-bin"):
                        break  # the stream is broken from here on; stop drawing
    return b"".join(out)


def _mutate(data: bytes, draw: st.DrawFn) -> bytes:
    """Flip, drop or insert one byte: most such streams are malformed somewhere."""
    if not data:
        return data
    at = draw(st.integers(0, len(data) - 1))
    how = draw(st.sampled_from(["flip", "drop", "insert", "keep", "keep"]))
    if how == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    if how == "drop":
        return data[:at] + data[at + 1 :]
    if how == "insert":
        return data[:at] + bytes([draw(st.integers(0, 255))]) + data[at:]
    return data


def _pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in zip(points, points[1:])]


def _outcome(codec: str, pieces: list[bytes], runs: bool) -> list[object]:
    """Per feed: the frames (runs expanded) and the offset; or the violation; then eof's verdict."""
    decoder = get_codec(codec).decoder()
    seen: list[object] = []
    for piece in pieces:
        try:
            got = expand(decoder.feed_runs(piece)) if runs else decoder.feed(piece)
        except ProtocolViolation as violation:
            seen.append(("violation", violation.rule, violation.offset, str(violation)))
            return seen
        seen.append((got, decoder.offset))
    try:
        decoder.eof()
        seen.append("clean eof")
    except ProtocolViolation as violation:
        seen.append(("eof", violation.rule, violation.offset, str(violation)))
    return seen


@pytest.mark.parametrize("codec", CODECS)
@SETTINGS
@given(data=st.data())
def test_feed_runs_decodes_what_feed_decodes(codec: str, data: st.DataObject) -> None:
    stream = data.draw(bursty_streams(codec))
    stream = _mutate(stream, data.draw)
    cuts = data.draw(st.one_of(st.just([]), st.lists(st.integers(0, 1 << 16), max_size=6)))
    pieces = _pieces(stream, cuts)
    assert _outcome(codec, pieces, runs=True) == _outcome(codec, pieces, runs=False)


def _long_stream(codec: str, kind: str, frames: int = 500) -> bytes:
    encoder = get_codec(codec).encoder()
    size = 0 if kind == "variable" else 8
    out = [encoder.encode(OnSubscribe(subscriber=5, element_size=size))]
    for i in range(frames):
        if kind == "variable":
            out.append(encoder.encode(OnNext(subscriber=5, element=msgpack.packb(i))))
        elif kind == "fixed":
            out.append(encoder.encode(OnNext(subscriber=5, element=i.to_bytes(8, "big"))))
        else:
            out.append(encoder.encode(OnNextPacked(subscriber=5, count=4, data=bytes(32))))
    return b"".join(out)


@pytest.mark.parametrize(
    ("codec", "kind", "run_type"),
    [
        ("msgpack", "variable", VariableRun),
        ("msgpack", "fixed", StridedRun),
        ("msgpack", "packed", StridedRun),
        ("varint", "fixed", StridedRun),
        ("varint", "packed", StridedRun),
    ],
)
def test_a_long_burst_comes_back_as_one_run(codec: str, kind: str, run_type: type) -> None:
    items = get_codec(codec).decoder().feed_runs(_long_stream(codec, kind))
    assert isinstance(items[0], OnSubscribe)
    assert [type(item) for item in items[1:]] == [run_type]
    run = items[1]
    assert isinstance(run, ElementRun)
    assert run.subscriber == 5 and run.frames == 500
    assert run.elements == (2000 if kind == "packed" else 500)


def test_varint_variable_size_elements_are_gathered_after_decoding() -> None:
    # No C parser for varint-prefixed elements: each frame is decoded alone, then the stretch is folded.
    items = get_codec("varint").decoder().feed_runs(_long_stream("varint", "variable"))
    runs = [item for item in items if isinstance(item, VariableRun)]
    assert len(runs) == 1 and runs[0].frames == 500 and runs[0].ids is None
    assert expand(items) == get_codec("varint").decoder().feed(_long_stream("varint", "variable"))


def test_interleaved_subscriptions_come_back_as_one_run_with_each_frames_id() -> None:
    encoder = get_codec("msgpack").encoder()
    stream = b"".join(encoder.encode(OnNext(subscriber=i % 3 * 200, element=bytes([i]))) for i in range(90))
    items = get_codec("msgpack").decoder().feed_runs(stream)
    assert [type(item) for item in items] == [VariableRun]
    run = items[0]
    assert isinstance(run, VariableRun) and run.ids is not None
    assert run.ids[:4] == [0, 200, 400, 0] and run.frames == 90
    assert expand(items) == [OnNext(subscriber=i % 3 * 200, element=bytes([i])) for i in range(90)]


@pytest.mark.parametrize("variant", ["wide-id", "wide-bin"])
def test_a_legal_wider_encoding_ends_a_run_and_decodes_as_a_frame(variant: str) -> None:
    plain = b"".join(_msgpack_onnext(3, b"ab", "plain") for _ in range(40))
    odd = _msgpack_onnext(3, b"xy", variant)
    items = get_codec("msgpack").decoder().feed_runs(plain + odd + plain)
    assert [type(item) for item in items] == [VariableRun, OnNext, VariableRun]
    assert items[1] == OnNext(subscriber=3, element=b"xy")


@pytest.mark.parametrize(("variant", "rule"), [("wide-code", "ERR-7"), ("float-id", "ERR-4"), ("str-element", "ERR-4")])
def test_an_illegal_frame_after_a_run_raises_at_its_own_offset(variant: str, rule: str) -> None:
    plain = b"".join(_msgpack_onnext(3, b"ab", "plain") for _ in range(20))
    with pytest.raises(ProtocolViolation) as caught:
        get_codec("msgpack").decoder().feed_runs(plain + _msgpack_onnext(3, b"xy", variant))
    assert caught.value.rule == rule
    assert caught.value.offset == len(plain)


# -- judging runs -----------------------------------------------------------------------


@st.composite
def demand_traces(draw: st.DrawFn, codec: str) -> list[tuple[Side, bytes]]:
    """A subscription with bounded demand, bursts of elements that may overrun it, requests, a cancel."""
    enc = {side: get_codec(codec).encoder() for side in Side}
    size = draw(st.sampled_from([0, 8]))
    steps = [
        (Side.CLIENT, enc[Side.CLIENT].encode(ClientHello(version=0))),
        (Side.SERVER, enc[Side.SERVER].encode(ServerHello(version=0))),
        (Side.CLIENT, enc[Side.CLIENT].encode(Subscribe(publisher="p", subscriber=1, initial_demand=draw(st.integers(0, 60))))),
        (Side.SERVER, enc[Side.SERVER].encode(OnSubscribe(subscriber=1, element_size=size))),
        # A second subscription, variable-size, for interleaved bursts (not always answered).
        (Side.CLIENT, enc[Side.CLIENT].encode(Subscribe(publisher="p", subscriber=2, initial_demand=draw(st.integers(0, 60))))),
    ]
    if draw(st.booleans()):
        steps.append((Side.SERVER, enc[Side.SERVER].encode(OnSubscribe(subscriber=2, element_size=0))))
    for _ in range(draw(st.integers(1, 6))):
        step = draw(st.sampled_from(["burst", "burst", "request", "cancel", "packed", "interleave"]))
        sid = draw(st.sampled_from([1, 2]))
        if step == "request":
            demand = draw(st.integers(1, 40))
            steps.append((Side.CLIENT, enc[Side.CLIENT].encode(Request(subscriber=sid, demand=demand))))
        elif step == "cancel":
            steps.append((Side.CLIENT, enc[Side.CLIENT].encode(Cancel(subscriber=sid))))
        else:
            frames = []
            for i in range(draw(st.integers(1, 30))):
                if step == "interleave":
                    frames.append(OnNext(subscriber=2 - i % 2, element=bytes([i]) * (size if i % 2 else i % 5)))
                elif step == "packed" and size:
                    frames.append(OnNextPacked(subscriber=1, count=3, data=bytes(3 * size)))
                else:
                    frames.append(OnNext(subscriber=1, element=bytes([i]) * (size or i % 5)))
            steps.append((Side.SERVER, b"".join(enc[Side.SERVER].encode(f) for f in frames)))
    return steps


def _findings(codec: str, steps: list[tuple[Side, bytes]], runs: bool, keep: bool = False) -> list[object]:
    monitor = Monitor(codec, keep_frames=keep)
    if not runs:
        # The monitor binds each decoder's feed when it is made: the frame-by-frame path is chosen there.
        monitor._feed = {side: decoder.feed for side, decoder in monitor._decoders.items()}
    for side, data in steps:
        monitor.observe(side, data)
    judged = [finding.to_json() for finding in monitor.findings]
    kept = [(f.index, f.sender, f.frame) for f in monitor.frames]
    return [judged, monitor.frame_count, kept]


@pytest.mark.parametrize("codec", CODECS)
@SETTINGS
@given(data=st.data())
def test_judging_runs_finds_what_judging_frames_finds(codec: str, data: st.DataObject) -> None:
    steps = data.draw(demand_traces(codec))
    keep = data.draw(st.booleans())
    assert _findings(codec, steps, runs=True, keep=keep) == _findings(codec, steps, runs=False, keep=keep)


def test_a_run_overrunning_demand_is_reported_at_the_first_frame_past_it() -> None:
    enc = {side: get_codec("msgpack").encoder() for side in Side}
    steps = [
        (Side.CLIENT, enc[Side.CLIENT].encode(ClientHello(version=0))),
        (Side.SERVER, enc[Side.SERVER].encode(ServerHello(version=0))),
        (Side.CLIENT, enc[Side.CLIENT].encode(Subscribe(publisher="p", subscriber=1, initial_demand=20))),
        (Side.SERVER, enc[Side.SERVER].encode(OnSubscribe(subscriber=1, element_size=0))),
        (Side.SERVER, b"".join(enc[Side.SERVER].encode(OnNext(subscriber=1, element=b"e")) for _ in range(50))),
    ]
    monitor = Monitor("msgpack")
    for side, data in steps:
        monitor.observe(side, data)
    assert monitor.frame_count == 54
    first = monitor.violations(Side.SERVER)[0]
    assert first.rule == "DEM-5"  # over initialDemand, with no request yet
    assert first.frame_index == 4 + 20  # the 21st onNext, after hello, hello, subscribe, onSubscribe


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("burst", [3, 50])  # frame by frame, and a run
def test_frames_before_bad_bytes_in_the_same_read_are_judged(codec: str, burst: int) -> None:
    enc = {side: get_codec(codec).encoder() for side in Side}
    monitor = Monitor(codec)
    monitor.observe(Side.CLIENT, enc[Side.CLIENT].encode(ClientHello(version=0)))
    monitor.observe(Side.SERVER, enc[Side.SERVER].encode(ServerHello(version=0)))
    monitor.observe(Side.CLIENT, enc[Side.CLIENT].encode(Subscribe(publisher="p", subscriber=1, initial_demand=2)))
    elements = b"".join(enc[Side.SERVER].encode(OnNext(subscriber=1, element=b"e")) for _ in range(burst))
    found = monitor.observe(
        Side.SERVER, enc[Side.SERVER].encode(OnSubscribe(subscriber=1, element_size=0)) + elements + b"\x00"
    )
    # Every onNext over initialDemand 2 is a DEM-5; the monitor keeps MAX_FINDINGS_PER_RULE of them
    # and counts the rest (the flood bound), and the wire error is always kept.
    over = burst - 2
    kept = min(over, MAX_FINDINGS_PER_RULE)
    assert [f.rule for f in found] == ["DEM-5"] * kept + ["ERR-7"]
    assert monitor.findings_dropped["DEM-5"] == over - kept
    assert found[0].frame_index == 3 + 1 + 2
    assert found[-1].frame_index == 3 + 1 + burst  # the wire error comes after every frame before it
    assert monitor.direction_dead(Side.SERVER)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("split", [False, True])
def test_a_connection_takes_the_frames_before_bad_bytes_however_the_reads_fall(codec: str, split: bool) -> None:
    from rsio_tck.protocol import Connection
    from rsio_tck.protocol.events import ProtocolError

    enc = get_codec(codec).encoder()
    good = enc.encode(ClientHello(version=0)) + enc.encode(Subscribe(publisher="p", subscriber=4, initial_demand=1))
    server = Connection(Side.SERVER, codec)
    events = server.receive_data(good) + server.receive_data(b"\x00") if split else server.receive_data(good + b"\x00")
    kinds = [type(event).__name__ for event in events]
    assert kinds == ["ClientHello", "Subscribe", "ProtocolError"]
    assert isinstance(events[-1], ProtocolError) and events[-1].violation.rule == "ERR-7"


@pytest.mark.parametrize("width", ["shortest", "widest", "mixed"])
def test_wide_integer_elements_are_judged_alike_by_runs_and_frames(width: str) -> None:
    # Wider integer encodings inside elements are element bytes, not frame headers: a burst of
    # them still forms a run, and both paths judge them as values (TCK-9 warns, nothing fails).
    from rsio_tck.bindings.rsio.wire.msgpack_ints import forms

    enc = {side: get_codec("msgpack").encoder() for side in Side}
    elements = [forms(i)[0 if width == "shortest" or (width == "mixed" and i % 3) else -1] for i in range(40)]
    steps = [
        (Side.CLIENT, enc[Side.CLIENT].encode(ClientHello(version=0))),
        (Side.SERVER, enc[Side.SERVER].encode(ServerHello(version=0))),
        (Side.CLIENT, enc[Side.CLIENT].encode(Subscribe(publisher="tck/range?count=40", subscriber=1, initial_demand=50))),
        (Side.SERVER, enc[Side.SERVER].encode(OnSubscribe(subscriber=1, element_size=0))),
        (Side.SERVER, b"".join(enc[Side.SERVER].encode(OnNext(subscriber=1, element=e)) for e in elements)
         + enc[Side.SERVER].encode(OnComplete(subscriber=1))),
    ]
    burst = get_codec("msgpack").decoder().feed_runs(b"".join(data for side, data in steps if side is Side.SERVER))
    assert any(isinstance(item, VariableRun) for item in burst)
    with_runs = _findings("msgpack", steps, runs=True)
    assert with_runs == _findings("msgpack", steps, runs=False)
    assert [f["rule"] for f in with_runs[0]] == ([] if width == "shortest" else ["TCK-9"])  # type: ignore[index]
