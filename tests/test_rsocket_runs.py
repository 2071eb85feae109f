"""``FrameDecoder.feed_runs``: runs of plain NEXT PAYLOAD frames stand for exactly what ``feed`` returns.

The property: for any frame sequence (run-heavy, with data that repeats the run's own
header bytes), any corruption of one byte, any frame limit and any chunking, the runs
expanded equal ``feed``'s frames, and a violation is the same rule at the same offset
with the same frames before it (``salvaged``).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rsocket_codec import GENERATED

from rsio_tck.bindings.rsocket import Decoded, RSocketLimits, get_profile
from rsio_tck.bindings.rsocket.frames import Error, Payload, RequestN
from rsio_tck.bindings.rsocket.runs import MIN_FRAMES, PayloadRun, expand
from rsio_tck.errors import ProtocolViolation

V1, DRAFT = "rsocket-1.0", "reactivesocket-draft"
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEADERS = {V1: [b"\x00\x00\x00\x01\x28\x20", b"\x00\x00\x07"], DRAFT: [b"\x00\x00\x00\x20" + bytes(7) + b"\x01"]}


def decode(profile: str, data: bytes, cuts: list[int], method: str, limits: RSocketLimits | None = None,
           ) -> tuple[list[object], tuple[str, int | None] | None]:
    """Everything the decoder returned (salvaged included) and the violation's (rule, offset), if any."""
    decoder = get_profile(profile).decoder(limits)
    feed = getattr(decoder, method)
    points = sorted(min(c, len(data)) for c in cuts)
    out: list[object] = []
    try:
        for a, b in zip([0, *points], [*points, len(data)], strict=True):
            out += feed(data[a:b])
        decoder.eof()
    except ProtocolViolation as exc:
        return out + list(decoder.salvaged), (exc.rule, exc.offset)
    return out, None


def data_blobs(profile: str) -> st.SearchStrategy[bytes]:
    """Element data, often built from the run header's own bytes (the finder's split must not be fooled)."""
    parts = st.sampled_from(HEADERS[profile]) | st.binary(max_size=6)
    return st.lists(parts, max_size=3).map(b"".join)


@st.composite
def streams(draw: st.DrawFn, profile: str) -> bytes:
    encoder = get_profile(profile).encoder()
    frames: list[Decoded] = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.integers(0, 3)):
            sid = draw(st.sampled_from([1, 3]))
            frames += [Payload(stream_id=sid, next=True, data=draw(data_blobs(profile)))
                       for _ in range(draw(st.integers(1, 2 * MIN_FRAMES + 3)))]
        else:
            frames.append(draw(GENERATED[profile]))
    data = bytearray(b"".join(encoder.encode(f) for f in frames))
    if draw(st.booleans()):  # one byte corrupted: a length, a header, a flag...
        at = draw(st.integers(0, len(data) - 1))
        data[at] = draw(st.integers(0, 255))
    if draw(st.integers(0, 4)) == 0:  # truncated
        del data[draw(st.integers(0, len(data))) :]
    return bytes(data)


@pytest.mark.no_cover
@SETTINGS
@given(data=st.data(), profile=st.sampled_from([V1, DRAFT]))
def test_feed_runs_expanded_equals_feed(data: st.DataObject, profile: str) -> None:
    stream = data.draw(streams(profile))
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=8))
    limits = data.draw(st.none() | st.builds(RSocketLimits, max_frame=st.integers(12, 40)))
    frames, error = decode(profile, stream, [], "feed", limits)
    runs, run_error = decode(profile, stream, cuts, "feed_runs", limits)
    assert expand(runs) == frames
    assert run_error == error
    for item in runs:
        if isinstance(item, PayloadRun):
            assert item.count == len(item.to_frames()) >= 2


def test_a_long_stream_of_elements_comes_back_as_runs() -> None:
    for profile in (V1, DRAFT):
        encoder = get_profile(profile).encoder()
        frames = [Payload(stream_id=5, next=True, data=str(i).encode()) for i in range(5000)]
        stream = b"".join(encoder.encode(f) for f in frames)
        items = get_profile(profile).decoder().feed_runs(stream)
        assert expand(items) == frames
        runs = [item for item in items if isinstance(item, PayloadRun)]
        assert sum(run.count for run in runs) >= 4990 and len(items) < 20, profile
        assert {run.stream_id for run in runs} == {5}


def test_a_run_ends_before_a_frame_of_another_kind_and_resumes_after_it() -> None:
    encoder = get_profile(V1).encoder()
    elements = [Payload(stream_id=1, next=True, data=b"%d" % i) for i in range(40)]
    frames: list[Decoded] = [*elements[:20], RequestN(stream_id=1, request_n=3),
                             Payload(stream_id=1, next=True, complete=True, data=b"x"), *elements[20:]]
    items = get_profile(V1).decoder().feed_runs(b"".join(encoder.encode(f) for f in frames))
    assert expand(items) == frames
    assert RequestN(stream_id=1, request_n=3) in items
    assert Payload(stream_id=1, next=True, complete=True, data=b"x") in items


def test_a_malformed_frame_inside_a_stretch_ends_the_run_and_raises_like_feed() -> None:
    encoder = get_profile(V1).encoder()
    good = b"".join(encoder.encode(Payload(stream_id=1, next=True, data=b"%d" % i)) for i in range(30))
    bad = (7).to_bytes(3, "big") + b"\x80\x00\x00\x01\x28\x20x"  # the reserved bit before the stream id
    stream = good + bad + good
    decoder = get_profile(V1).decoder()
    try:
        decoder.feed_runs(stream)
    except ProtocolViolation as exc:
        caught = exc
    else:
        raise AssertionError("no violation")
    reference = get_profile(V1).decoder()
    try:
        reference.feed(stream)
    except ProtocolViolation as exc:
        assert (exc.rule, exc.offset) == (caught.rule, caught.offset) == ("RS-FRAME-3", len(good))
    assert any(isinstance(item, PayloadRun) for item in decoder.salvaged)
    assert expand(decoder.salvaged) == reference.salvaged


def test_interleaved_streams_form_no_runs_and_cost_no_attempts() -> None:
    encoder = get_profile(V1).encoder()
    frames = [Payload(stream_id=1 + 2 * (i % 2), next=True, data=b"e") for i in range(200)]
    items = get_profile(V1).decoder().feed_runs(b"".join(encoder.encode(f) for f in frames))
    assert items == frames


def test_run_equality_and_datas_follow_the_frames() -> None:
    run = PayloadRun.of(7, [b"a", b"", b"bc"])
    assert run.count == 3 and run.datas == (b"a", b"", b"bc")
    assert run.to_frames() == [Payload(stream_id=7, next=True, data=d) for d in (b"a", b"", b"bc")]
    assert run == PayloadRun(7, 3, [b"a\x00\x00\x01", b"\x00\x00\x01", b"bc\x00\x00\x01"], 3)
    assert run == PayloadRun(7, 3, (b"a", b"", b"bc"))
    head, rest = PayloadRun(7, 3, [b"a\x00\x00\x01", b"\x00\x00\x01", b"bc\x00\x00\x01"], 3).split(1)
    assert (head.count, rest.count) == (1, 2) and head.to_frames() + rest.to_frames() == run.to_frames()
    assert run != Error(stream_id=7, error_code=0x201)


def test_a_length_shorter_than_the_header_ends_the_run_even_when_the_chain_matches() -> None:
    # ``\x00\x00\x05`` announces a frame ending inside its own header: the split still finds the
    # header two bytes later and the lengths chain, but feed rejects the frame (RS-FRAME-1).
    encoder = get_profile(V1).encoder()
    good = b"".join(encoder.encode(Payload(stream_id=1, next=True, data=b"%d" % i)) for i in range(20))
    head = good[3:9]
    stream = good + b"\x00\x00\x05" + head + b"\x00\x04" + head + b"x"
    items, error = decode(V1, stream, [], "feed_runs")
    assert (expand(items), error) == decode(V1, stream, [], "feed")
    assert decode(V1, stream, [], "feed")[1] == ("RS-FRAME-1", len(good))


def test_feed_and_feed_runs_may_alternate_on_one_decoder_and_messages_are_frames() -> None:
    encoder = get_profile(DRAFT).encoder()
    frames = [Payload(stream_id=9, next=True, data=b"%d" % i) for i in range(50)]
    stream = b"".join(encoder.encode(f) for f in frames)
    decoder = get_profile(DRAFT).decoder()
    out: list[object] = []
    for i, start in enumerate(range(0, len(stream), 37)):
        feed = decoder.feed_runs if i % 2 else decoder.feed
        out += feed(stream[start : start + 37])
    decoder.eof()
    assert expand(out) == frames
    message = get_profile(V1).encoder(length_prefix=False).encode(frames[0])
    assert get_profile(V1).decoder(length_prefix=False).feed_runs(message) == [frames[0]]


def test_a_large_frame_arriving_in_reads_is_kept_once_not_copied_per_read() -> None:
    # Issue 27: feed_runs copied the held bytes on every read, so an 8 MiB frame in reads of 64 KiB was 512 MB
    # of copies and three copies alive at once (a hostile server's 16 MiB frame under the proxy's monitor
    # peaked at 51 MB traced and took seconds).  A frame in progress is only kept until it is whole.
    import time
    import tracemalloc

    size, chunk = 8 * 1024 * 1024, 64 * 1024
    data = get_profile(V1).encoder().encode(Payload(stream_id=1, next=True, data=b"\x2a" * size))
    decoder = get_profile(V1).decoder(None)
    tracemalloc.start()
    try:
        last = len(data) - 1000  # the frame's last 1,000 bytes complete it
        started = time.process_time()
        for at in range(0, last, chunk):
            assert decoder.feed_runs(data[at : min(at + chunk, last)]) == []
        _, partial_peak = tracemalloc.get_traced_memory()
        spent = time.process_time() - started
        tracemalloc.reset_peak()
        (whole,) = decoder.feed_runs(data[last:])
        _, whole_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(whole, Payload) and len(whole.data) == size
    assert partial_peak < 1.3 * size, f"{partial_peak / 2**20:.1f} MiB held for a frame of {size / 2**20:.0f} MiB"
    assert whole_peak < 3.3 * size, f"{whole_peak / 2**20:.1f} MiB at the frame's end"
    assert spent < 2.0, f"{spent:.2f} s of CPU for the reads of one frame"
