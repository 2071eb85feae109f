"""Both codecs: encode frame sequences, decode them under any chunking, get the same frames back.

The sequences are what an encoder can frame: a fixed-size onNext or an
onNextPacked follows an onSubscribe with that elementSize, with no terminal
signal or elementSize=0 onSubscribe for the Id in between.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsio.wire import ID_MAX, Frame, get_codec
from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)
from rsio_tck.errors import ProtocolViolation

CODECS = ("msgpack", "varint")
U64_MAX = 2**64 - 1

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ids = st.one_of(st.sampled_from([0, 1, 127, 128, 255, 256, 300, 2**32, ID_MAX]), st.integers(0, ID_MAX))
uints = st.one_of(st.sampled_from([0, 1, 127, 128, 2**32, 2**63, U64_MAX]), st.integers(0, U64_MAX))
texts = st.one_of(
    st.sampled_from(["", "é", "tck/range?start=0&count=3", "日本語", "\U0001f600", "x" * 40]),
    st.text(st.characters(codec="utf-8"), max_size=40),
)


def longs(codec: str) -> st.SearchStrategy[int]:
    """Long: may be negative in msgpack only; up to 2^64-1 (saturated demand) in both."""
    low = -(2**63) if codec == "msgpack" else 0
    edges = [0, 1, ID_MAX, 2**63, U64_MAX] + ([-1, -200, -(2**63)] if codec == "msgpack" else [])
    return st.one_of(st.sampled_from(edges), st.integers(low, U64_MAX))


def binaries(large: bool) -> st.SearchStrategy[bytes]:
    small = st.binary(max_size=40)
    if not large:
        return small
    # Large-ish: past the bin8/bin16 headers (and a multi-byte varint length), cheap to draw.
    big = st.builds(lambda n, b: bytes([b]) * n, st.sampled_from([255, 256, 65535, 65536, 70000]), st.integers(0, 255))
    return st.one_of(small, small, big)


KINDS = (
    "clientHello", "serverHello", "goodbye", "subscribe", "request", "cancel", "onSubscribe",
    "onSubscribeFixed", "onNext", "onNextFixed", "onNextPacked", "onComplete", "onError",
    "onNextPart", "onNextLastPart",
)


@st.composite
def frame_sequences(
    draw: st.DrawFn, codec: str, *, min_size: int = 1, max_size: int = 12, large: bool = True
) -> list[Frame]:
    """An encodable sequence of frames, tracking fixed-size streams the way ElementSizes does."""
    fixed: dict[int, int] = {}
    frames: list[Frame] = []
    blobs = binaries(large)
    for _ in range(draw(st.integers(min_size, max_size))):
        kind = draw(st.sampled_from(KINDS))
        if kind in ("onNextFixed", "onNextPacked") and not fixed:
            kind = "onSubscribeFixed"
        # Stream Ids: often one of the fixed-size streams, to exercise forgetting them.
        sid_or_fixed = st.one_of(ids, st.sampled_from(sorted(fixed))) if fixed else ids
        frame: Frame
        if kind == "clientHello":
            frame = ClientHello(version=draw(uints), extensions=tuple(draw(st.lists(ids, max_size=5))))
        elif kind == "serverHello":
            frame = ServerHello(version=draw(uints), extensions=tuple(draw(st.lists(ids, max_size=5))))
        elif kind == "goodbye":
            frame = Goodbye(reason=draw(texts))
        elif kind == "subscribe":
            frame = Subscribe(publisher=draw(texts), subscriber=draw(ids), initial_demand=draw(longs(codec)))
        elif kind == "request":
            frame = Request(subscriber=draw(ids), demand=draw(longs(codec)))
        elif kind == "cancel":
            frame = Cancel(subscriber=draw(ids))
        elif kind == "onSubscribe":
            frame = OnSubscribe(subscriber=draw(sid_or_fixed), element_size=0)
        elif kind == "onSubscribeFixed":
            size = draw(st.one_of(st.integers(1, 16), st.sampled_from([127, 128, 300, 2000])))
            frame = OnSubscribe(subscriber=draw(sid_or_fixed), element_size=size)
        elif kind == "onNext":
            frame = OnNext(subscriber=draw(ids.filter(lambda s: s not in fixed)), element=draw(blobs))
        elif kind == "onNextFixed":
            sid = draw(st.sampled_from(sorted(fixed)))
            frame = OnNext(subscriber=sid, element=draw(st.binary(min_size=fixed[sid], max_size=fixed[sid])))
        elif kind == "onNextPacked":
            sid = draw(st.sampled_from(sorted(fixed)))
            count = draw(st.integers(1, 5 if fixed[sid] <= 300 else 1))
            data = draw(st.binary(min_size=count * fixed[sid], max_size=count * fixed[sid]))
            frame = OnNextPacked(subscriber=sid, count=count, data=data)
        elif kind == "onComplete":
            frame = OnComplete(subscriber=draw(sid_or_fixed))
        elif kind == "onError":
            frame = OnError(subscriber=draw(sid_or_fixed), error=draw(texts))
        elif kind == "onNextPart":
            frame = OnNextPart(subscriber=draw(ids), element=draw(ids), data=draw(blobs))
        else:
            frame = OnNextLastPart(subscriber=draw(ids), element=draw(ids), data=draw(blobs))
        if isinstance(frame, OnSubscribe):
            if frame.element_size:
                fixed[frame.subscriber] = frame.element_size
            else:
                fixed.pop(frame.subscriber, None)
        elif isinstance(frame, (OnComplete, OnError)):
            fixed.pop(frame.subscriber, None)
        frames.append(frame)
    return frames


def encode_each(codec: str, frames: Iterable[Frame]) -> list[bytes]:
    encoder = get_codec(codec).encoder()
    return [encoder.encode(frame) for frame in frames]


def split(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = [0, *sorted(set(cuts)), len(data)]
    return [data[a:b] for a, b in zip(points, points[1:], strict=False)]


def decode_checked(codec: str, pieces: list[bytes], frames: list[Frame]) -> None:
    """Feed ``pieces``; after every feed the frames so far and ``offset`` match the frame boundaries."""
    encoded = encode_each(codec, frames)
    boundaries = [0]
    for item in encoded:
        boundaries.append(boundaries[-1] + len(item))
    decoder = get_codec(codec).decoder()
    got: list[Frame] = []
    fed = 0
    for piece in pieces:
        got += decoder.feed(piece)
        fed += len(piece)
        done = sum(1 for b in boundaries[1:] if b <= fed)
        assert got == frames[:done], f"after {fed} bytes"
        assert decoder.offset == boundaries[done], f"offset after {fed} bytes"
    assert got == frames
    assert decoder.offset == boundaries[-1] == sum(map(len, pieces))
    decoder.eof()


@pytest.mark.parametrize("codec", CODECS)
@SETTINGS
@given(data=st.data())
def test_roundtrip_random_chunking(codec: str, data: st.DataObject) -> None:
    frames = data.draw(frame_sequences(codec))
    encoded = b"".join(encode_each(codec, frames))
    cuts = data.draw(st.lists(st.integers(0, len(encoded)), max_size=25), label="cuts")
    decode_checked(codec, split(encoded, cuts), frames)


@pytest.mark.parametrize("codec", CODECS)
@SETTINGS
@given(data=st.data())
def test_roundtrip_whole_stream_in_one_feed(codec: str, data: st.DataObject) -> None:
    frames = data.draw(frame_sequences(codec, max_size=30))
    decode_checked(codec, [b"".join(encode_each(codec, frames))], frames)


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_roundtrip_one_byte_at_a_time(codec: str, data: st.DataObject) -> None:
    frames = data.draw(frame_sequences(codec, large=False))
    encoded = b"".join(encode_each(codec, frames))
    decode_checked(codec, [encoded[i : i + 1] for i in range(len(encoded))], frames)


@pytest.mark.parametrize("codec", CODECS)
def test_edge_values_roundtrip_byte_by_byte(codec: str) -> None:
    negative = codec == "msgpack"
    frames: list[Frame] = [
        ClientHello(version=0, extensions=(0, ID_MAX)),
        ServerHello(version=U64_MAX, extensions=()),
        Goodbye(reason=""),
        Goodbye(reason="é日本\U0001f600"),
        Subscribe(publisher="", subscriber=0, initial_demand=-(2**63) if negative else 0),
        Subscribe(publisher="p", subscriber=ID_MAX, initial_demand=ID_MAX),
        Request(subscriber=ID_MAX, demand=-1 if negative else U64_MAX),
        Request(subscriber=0, demand=U64_MAX),
        Cancel(subscriber=ID_MAX),
        OnSubscribe(subscriber=ID_MAX, element_size=3),
        OnNext(subscriber=ID_MAX, element=b"abc"),
        OnNextPacked(subscriber=ID_MAX, count=2, data=b"abcdef"),
        OnNext(subscriber=0, element=b""),
        OnNext(subscriber=1, element=bytes(range(256)) * 300),
        OnNextPart(subscriber=0, element=ID_MAX, data=b""),
        OnNextLastPart(subscriber=ID_MAX, element=0, data=b"\x00" * 70000),
        OnError(subscriber=ID_MAX, error="x"),
        OnNext(subscriber=ID_MAX, element=b"variable again"),
        OnComplete(subscriber=0),
    ]
    encoded = b"".join(encode_each(codec, frames))
    decode_checked(codec, [encoded[i : i + 1] for i in range(len(encoded))], frames)
    decode_checked(codec, [encoded], frames)


@pytest.mark.parametrize("codec", CODECS)
def test_encode_elements_equals_onnext_frames(codec: str) -> None:
    elements = [b"", b"a", b"\xff" * 200, b"x" * 70000]
    encoder = get_codec(codec).encoder()
    batch = encoder.encode_elements(300, elements)  # type: ignore[attr-defined]
    assert batch == b"".join(encoder.encode(OnNext(subscriber=300, element=e)) for e in elements)
    assert get_codec(codec).decoder().feed(batch) == [OnNext(subscriber=300, element=e) for e in elements]


@pytest.mark.parametrize("codec", CODECS)
def test_element_size_follows_onsubscribe_and_terminal_signals(codec: str) -> None:
    chosen = get_codec(codec)
    encoder, decoder = chosen.encoder(), chosen.decoder()
    steps: list[tuple[Frame, int]] = [
        (OnSubscribe(subscriber=4, element_size=8), 8),
        (OnComplete(subscriber=4), 0),
        (OnSubscribe(subscriber=4, element_size=2), 2),
        (OnSubscribe(subscriber=4, element_size=0), 0),
        (OnSubscribe(subscriber=4, element_size=5), 5),
        (OnError(subscriber=4, error="e"), 0),
    ]
    for frame, size in steps:
        assert decoder.feed(encoder.encode(frame)) == [frame]
        assert encoder.element_size(4) == decoder.element_size(4) == size


@pytest.mark.parametrize("codec", CODECS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_proper_prefix_of_a_frame_is_truncated(codec: str, data: st.DataObject) -> None:
    frames = data.draw(frame_sequences(codec, large=False, max_size=6))
    encoded = encode_each(codec, frames)
    index = data.draw(st.integers(0, len(frames) - 1), label="cut frame")
    prelude = b"".join(encoded[:index])
    frame = encoded[index]
    for k in range(1, len(frame)):
        decoder = get_codec(codec).decoder()
        assert decoder.feed(prelude + frame[:k]) == frames[:index]  # never raises for a prefix
        assert decoder.offset == len(prelude)
        with pytest.raises(ProtocolViolation) as caught:
            decoder.eof()
        assert caught.value.rule == "ERR-6"
        assert caught.value.offset == len(prelude)
    # The same cut, one byte at a time, for the longest prefix.
    decoder = get_codec(codec).decoder()
    cut = prelude + frame[:-1]
    got: list[Frame] = []
    for i in range(len(cut)):
        got += decoder.feed(cut[i : i + 1])
    assert got == frames[:index]
    with pytest.raises(ProtocolViolation) as caught:
        decoder.eof()
    assert caught.value.rule == "ERR-6"


@pytest.mark.parametrize("codec", CODECS)
def test_eof_between_frames_is_fine(codec: str) -> None:
    decoder = get_codec(codec).decoder()
    decoder.eof()
    decoder.feed(get_codec(codec).encoder().encode(Cancel(subscriber=1)))
    decoder.feed(b"")
    decoder.eof()
