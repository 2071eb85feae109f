"""Malformed input: each codec rejects it with the right rule, an offset, and no big allocation."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from rsio_tck.bindings.rsio.wire import Limits, get_codec
from rsio_tck.bindings.rsio.wire.frames import Cancel, OnSubscribe
from rsio_tck.errors import ProtocolViolation

CODECS = ("msgpack", "varint")
SMALL = {"max_string": 4, "max_element": 4, "max_array": 2, "max_element_size": 16, "max_frame": 100}

V63 = "80 80 80 80 80 80 80 80 80 01"  # varint 2^63
V64M1 = "ff ff ff ff ff ff ff ff ff 01"  # varint 2^64-1

# (codec, hex, rule, eof): with eof the input is complete only at the end of the
# transport (a truncated frame); otherwise the feed itself must raise.
CASES: list[tuple[str, str, str, bool]] = [
    # -- truncated frames (ERR-6) -----------------------------------------------------
    ("msgpack", "08 01 c4 02 68", "ERR-6", True),
    ("msgpack", "05", "ERR-6", True),
    ("msgpack", "05 01 cd 01", "ERR-6", True),
    ("msgpack", "04 a2 70", "ERR-6", True),
    ("msgpack", "01 00 92 01", "ERR-6", True),
    ("msgpack", "07 01 04 08 01 00 00", "ERR-6", True),  # fixed-size raw element cut short
    ("msgpack", "07 01 04 0b 01 02 00 00 00 00 00", "ERR-6", True),
    ("varint", "08 01 02 68", "ERR-6", True),
    ("varint", "80", "ERR-6", True),  # a type code varint cut short
    ("varint", "05 01 ff", "ERR-6", True),
    ("varint", "05 01 ff ff ff ff ff ff ff ff ff", "ERR-6", True),  # 9 bytes of a 10-byte varint
    ("varint", "01 00 02 01", "ERR-6", True),
    ("varint", "04", "ERR-6", True),
    ("varint", "07 01 04 08 01 00 00", "ERR-6", True),
    ("varint", "07 01 04 0b 01 02 00 00 00 00 00", "ERR-6", True),
    # -- wrong field types (ERR-4); varint has none: every byte string is a varint --
    ("msgpack", "08 01 a2 68 69", "ERR-4", False),  # str where bin
    ("msgpack", "0c 01 07 a1 61", "ERR-4", False),  # str where bin (parts)
    ("msgpack", "03 c4 01 61", "ERR-4", False),  # bin where str
    ("msgpack", "05 01 c3", "ERR-4", False),  # bool where Long
    ("msgpack", "05 01 c0", "ERR-4", False),  # nil where Long
    ("msgpack", "05 01 cb 3f f0 00 00 00 00 00 00", "ERR-4", False),  # float64 where Long
    ("msgpack", "05 01 ca 3f 80 00 00", "ERR-4", False),  # float32
    ("msgpack", "05 01 80", "ERR-4", False),  # map where Long
    ("msgpack", "08 01 81 81 01 01 01", "ERR-4", False),  # a map keyed by a map (msgpack: unhashable)
    ("msgpack", "05 01 81 91 01 01", "ERR-4", False),  # a map keyed by an array, where Long
    ("msgpack", "05 01 d4 01 00", "ERR-4", False),  # fixext1 where Long
    ("msgpack", "06 a1 31", "ERR-4", False),  # str where Id
    ("msgpack", "08 c0 c4 00", "ERR-4", False),  # nil where Id (the onNext fast path)
    ("msgpack", "0b c2", "ERR-4", False),  # bool where Id (onNextPacked)
    ("msgpack", "07 01 04 0b 01 c0", "ERR-4", False),  # nil where count
    ("msgpack", "01 c0 90", "ERR-4", False),  # nil where version
    ("msgpack", "01 00 00", "ERR-4", False),  # int where Array[Id]
    ("msgpack", "01 00 91 a1 78", "ERR-4", False),  # array item not int
    ("msgpack", "01 00 91 c0", "ERR-4", False),  # array item nil
    ("msgpack", "04 01 01 00", "ERR-4", False),  # int where String
    # -- invalid UTF-8 (ERR-5) --------------------------------------------------------
    ("msgpack", "03 a1 ff", "ERR-5", False),
    ("msgpack", "04 a2 c3 28 01 00", "ERR-5", False),
    ("msgpack", "0a 01 a1 80", "ERR-5", False),
    ("msgpack", "03 a2 c0 80", "ERR-5", False),  # overlong NUL
    ("varint", "03 01 ff", "ERR-5", False),
    ("varint", "04 02 c3 28 01 00", "ERR-5", False),
    ("varint", "0a 01 01 80", "ERR-5", False),
    ("varint", "03 02 c0 80", "ERR-5", False),  # overlong NUL
    ("varint", "03 03 ed a0 80", "ERR-5", False),  # a surrogate
    # -- type codes (ERR-7; the extension range is EXT-2, see type_code_violation) --
    ("msgpack", "00", "ERR-7", False),
    ("msgpack", "0e", "ERR-7", False),
    ("msgpack", "3f", "ERR-7", False),
    ("msgpack", "40", "EXT-2", False),
    ("msgpack", "7f", "EXT-2", False),
    ("msgpack", "80", "ERR-7", False),
    ("msgpack", "ff", "ERR-7", False),
    ("msgpack", "05 01 0a 0e", "ERR-7", False),  # after a good frame
    ("varint", "00", "ERR-7", False),
    ("varint", "0e", "ERR-7", False),
    ("varint", "3f", "ERR-7", False),
    ("varint", "40", "EXT-2", False),
    ("varint", "7f", "EXT-2", False),
    ("varint", "80 01", "ERR-7", False),  # 0x80
    ("varint", "ff 7f", "ERR-7", False),
    ("varint", "05 01 0a 0e", "ERR-7", False),
    # -- Ids out of range, counts below 1 (ERR-9) --------------------------------------
    ("msgpack", "06 cf 80 00 00 00 00 00 00 00", "ERR-9", False),  # 2^63
    ("msgpack", "06 ff", "ERR-9", False),  # -1
    ("msgpack", "06 d3 80 00 00 00 00 00 00 00", "ERR-9", False),  # -2^63
    ("msgpack", "08 ff c4 00", "ERR-9", False),  # the onNext fast path
    ("msgpack", "08 cf 80 00 00 00 00 00 00 00 c4 00", "ERR-9", False),
    ("msgpack", "05 cf ff ff ff ff ff ff ff ff 01", "ERR-9", False),
    ("msgpack", "04 a1 70 ff 00", "ERR-9", False),
    ("msgpack", "0c 01 ff c4 00", "ERR-9", False),  # element Id of a part
    ("msgpack", "01 00 91 cf 80 00 00 00 00 00 00 00", "ERR-9", False),  # extension Id
    ("msgpack", "01 ff 90", "ERR-9", False),  # negative version
    ("msgpack", "07 01 ff", "ERR-9", False),  # negative elementSize
    ("msgpack", "07 01 04 0b 01 00", "ERR-9", False),  # count 0
    ("msgpack", "07 01 04 0b 01 ff", "ERR-9", False),  # count -1
    ("varint", f"06 {V63}", "ERR-9", False),
    ("varint", f"06 {V64M1}", "ERR-9", False),
    ("varint", f"08 {V63} 00", "ERR-9", False),  # the onNext fast path
    ("varint", f"05 {V63} 01", "ERR-9", False),
    ("varint", f"04 01 70 {V63} 00", "ERR-9", False),
    ("varint", f"0c 01 {V63} 00", "ERR-9", False),
    ("varint", f"01 00 02 01 {V63}", "ERR-9", False),
    ("varint", "07 01 04 0b 01 00", "ERR-9", False),  # count 0
    # -- varints longer than 10 bytes or 2^64 and above (ERR-10) -----------------------
    ("varint", "05 01 80 80 80 80 80 80 80 80 80 80", "ERR-10", False),  # known at the 10th byte
    ("varint", "05 01 80 80 80 80 80 80 80 80 80 80 01", "ERR-10", False),
    ("varint", "05 01 ff ff ff ff ff ff ff ff ff 02", "ERR-10", False),  # 2^64
    ("varint", "05 01 ff ff ff ff ff ff ff ff ff 7f", "ERR-10", False),
    ("varint", "80 80 80 80 80 80 80 80 80 80", "ERR-10", False),  # the type code
    ("varint", "06 80 80 80 80 80 80 80 80 80 80", "ERR-10", False),
    ("varint", "03 80 80 80 80 80 80 80 80 80 80", "ERR-10", False),  # a string length
    ("varint", "01 00 ff ff ff ff ff ff ff ff ff 03", "ERR-10", False),  # an array count
    ("varint", "01 00 01 80 80 80 80 80 80 80 80 80 80", "ERR-10", False),  # an array item
    ("varint", "07 01 04 0b 01 80 80 80 80 80 80 80 80 80 80", "ERR-10", False),  # a packed count
    # -- onNextPacked on a variable-size stream (PACK-2) -------------------------------
    ("msgpack", "0b 01 02", "PACK-2", False),
    ("msgpack", "07 01 04 09 01 0b 01 01 00 00 00 00", "PACK-2", False),  # size forgotten on onComplete
    ("varint", "0b 01 02", "PACK-2", False),
    ("varint", "07 01 04 07 01 00 0b 01 01 00 00 00 00", "PACK-2", False),  # reset by elementSize 0
]

# With Limits(**SMALL): lengths over a limit (ERR-8), judged from the header alone.
LIMIT_CASES: list[tuple[str, str, str]] = [
    ("msgpack", "03 a5", "string over max_string"),
    ("msgpack", "03 d9 05", "str8 over max_string"),
    ("msgpack", "03 a5 61 61 61 61 61", "complete string over max_string"),
    ("msgpack", "08 01 c4 05", "bin over max_element"),
    ("msgpack", "08 01 c5 01 00", "bin16 over max_element"),
    ("msgpack", "08 01 c4 05 61 61 61 61 61", "complete bin over max_element"),
    ("msgpack", "0d 01 01 c4 05", "part over max_element"),
    ("msgpack", "01 00 93", "array over max_array"),
    ("msgpack", "01 00 dc 00 03", "array16 over max_array"),
    ("msgpack", "07 01 11", "elementSize over max_element_size"),
    ("msgpack", "07 01 10 0b 01 07", "packed 7 x 16 over max_frame"),
    ("varint", "03 05", "string over max_string"),
    ("varint", "03 05 61 61 61 61 61", "complete string over max_string"),
    ("varint", "08 01 05", "bytes over max_element"),
    ("varint", "08 01 05 61 61 61 61 61", "complete bytes over max_element (the fast path)"),
    ("varint", "07 01 10 0b 01 07" + " 00" * 112, "complete packed over max_frame (the fast path)"),
    ("varint", "0c 01 01 05", "part over max_element"),
    ("varint", "01 00 03", "array over max_array"),
    ("varint", "07 01 11", "elementSize over max_element_size"),
    ("varint", "07 01 10 0b 01 07", "packed 7 x 16 over max_frame"),
]

# The headers announcing 4 GiB (bin32 ff ff ff ff; varint 2^32 = 80 80 80 80 10).
HUGE: dict[str, list[str]] = {
    "msgpack": ["08 01 c6 ff ff ff ff", "0c 01 01 c6 ff ff ff ff", "03 db ff ff ff ff", "01 00 dd ff ff ff ff"],
    "varint": ["08 01 80 80 80 80 10", "0c 01 01 80 80 80 80 10", "03 80 80 80 80 10", "01 00 80 80 80 80 10"],
}


def _ids(case: tuple[Any, ...]) -> str:
    return f"{case[0]}:{case[1].replace(' ', '')}:{case[2]}".replace(" ", "_")


def violation_of(codec: str, data: bytes, *, eof: bool, limits: Limits | None = None, chunk: int = 0) -> ProtocolViolation:
    """Feed ``data`` (whole, or in ``chunk``-byte pieces) and return the violation raised.

    With ``eof`` no feed may raise and ``eof()`` must; without, some feed must
    raise (as soon as the offending unit is complete, maybe before the last byte).
    """
    decoder = get_codec(codec).decoder(limits)
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)] if chunk else [data]
    fed = 0
    for piece in pieces:
        try:
            decoder.feed(piece)
        except ProtocolViolation as violation:
            if eof:
                pytest.fail(f"a feed raised for a merely truncated input (after {fed} bytes): {violation}")
            return violation
        fed += len(piece)
    if not eof:
        pytest.fail(f"no feed raised for {data.hex(' ')}")
    with pytest.raises(ProtocolViolation) as caught:
        decoder.eof()
    return caught.value


@pytest.mark.parametrize("codec, hexdata, rule, eof", CASES, ids=[_ids(c) for c in CASES])
def test_malformed_input(codec: str, hexdata: str, rule: str, eof: bool) -> None:
    data = bytes.fromhex(hexdata)
    for chunk in (0, 1):  # whole, and one byte at a time
        violation = violation_of(codec, data, eof=eof, chunk=chunk)
        assert violation.rule == rule, f"chunk={chunk}: {violation}"
        assert violation.offset is not None and 0 <= violation.offset < len(data)
        assert violation.message


@pytest.mark.parametrize("codec, hexdata, what", LIMIT_CASES, ids=[_ids(c) for c in LIMIT_CASES])
def test_length_over_limit(codec: str, hexdata: str, what: str) -> None:
    data = bytes.fromhex(hexdata)
    for chunk in (0, 1):
        violation = violation_of(codec, data, eof=False, limits=Limits(**SMALL), chunk=chunk)
        assert violation.rule == "ERR-8", f"{what}, chunk={chunk}: {violation}"
        assert violation.offset is not None


@pytest.mark.parametrize("codec, hexdata, what", LIMIT_CASES, ids=[_ids(c) for c in LIMIT_CASES])
def test_same_input_passes_default_limits(codec: str, hexdata: str, what: str) -> None:
    """Under default limits the same bytes do not raise: the cases above fail only for the limit."""
    decoder = get_codec(codec).decoder()
    decoder.feed(bytes.fromhex(hexdata))


@pytest.mark.parametrize("codec", CODECS)
def test_too_many_fixed_size_streams(codec: str) -> None:
    encoder = get_codec(codec).encoder()
    data = encoder.encode(OnSubscribe(subscriber=1, element_size=4)) + encoder.encode(
        OnSubscribe(subscriber=2, element_size=4)
    )
    violation = violation_of(codec, data, eof=False, limits=Limits(max_streams=1))
    assert violation.rule == "STR-4"  # not a length over a limit (SPEC.md Decision s)
    assert violation.offset == 3


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("index", range(4))
def test_4gib_header_is_rejected_by_the_feed_that_completes_it(codec: str, index: int) -> None:
    data = bytes.fromhex(HUGE[codec][index])
    # Whole: the one feed raises.
    assert violation_of(codec, data, eof=False).rule == "ERR-8"
    # One byte at a time: nothing before the last header byte raises, the last one does.
    decoder = get_codec(codec).decoder()
    for i in range(len(data) - 1):
        assert decoder.feed(data[i : i + 1]) == []
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        with pytest.raises(ProtocolViolation) as caught:
            decoder.feed(data[-1:])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.rule == "ERR-8"
    assert caught.value.offset == 0
    assert peak - before < 1 << 20, f"allocated {peak - before} bytes while judging the header"


@pytest.mark.parametrize("codec", CODECS)
def test_4gib_header_after_good_frames_in_one_feed_uses_little_memory(codec: str) -> None:
    encoder = get_codec(codec).encoder()
    prelude = b"".join(encoder.encode(Cancel(subscriber=i)) for i in range(100))
    data = prelude + bytes.fromhex(HUGE[codec][0]) + b"\x00" * 1000
    decoder = get_codec(codec).decoder()  # (msgpack's Unpacker allocates 1 MiB up front)
    tracemalloc.start()
    try:
        with pytest.raises(ProtocolViolation) as caught:
            decoder.feed(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.rule == "ERR-8"
    assert caught.value.offset == len(prelude)
    assert peak < 1 << 20


# A bad frame after good ones, per codec: (hex, rule).  Under Limits(**SMALL).
AFTER_GOOD: dict[str, list[tuple[str, str]]] = {
    "msgpack": [
        ("0b 01 02", "PACK-2"),
        ("08 01 c4 05 61 61 61 61 61", "ERR-8"),  # complete, over max_element (the onNext fast path)
        ("08 01 a1 78", "ERR-4"),
        ("08 ff c4 00", "ERR-9"),
        ("03 a1 ff", "ERR-5"),
        ("0e", "ERR-7"),
    ],
    "varint": [
        ("0b 01 02", "PACK-2"),
        ("08 01 05 61 61 61 61 61", "ERR-8"),
        (f"08 {V63} 00", "ERR-9"),
        ("03 01 ff", "ERR-5"),
        ("05 01 ff ff ff ff ff ff ff ff ff 02", "ERR-10"),
        ("80 80 80 80 80 80 80 80 80 80", "ERR-10"),  # the type code itself
        ("0e", "ERR-7"),
    ],
}


@pytest.mark.parametrize("codec", CODECS)
def test_offset_is_the_start_of_the_bad_frame(codec: str) -> None:
    encoder = get_codec(codec).encoder()
    prelude = b"".join(
        encoder.encode(frame)
        for frame in (Cancel(subscriber=300), OnSubscribe(subscriber=1, element_size=0), Cancel(subscriber=2))
    )
    for hexdata, rule in AFTER_GOOD[codec]:
        bad = bytes.fromhex(hexdata)
        for chunk in (0, 1, 4):
            violation = violation_of(codec, prelude + bad, eof=False, limits=Limits(**SMALL), chunk=chunk)
            assert (violation.rule, violation.offset) == (rule, len(prelude)), f"{hexdata}, chunk={chunk}"
        if rule != "ERR-7":  # a bad type code is bad on its own; any other first byte is a truncated frame
            truncated = violation_of(codec, prelude + bad[:1], eof=True, limits=Limits(**SMALL))
            assert (truncated.rule, truncated.offset) == ("ERR-6", len(prelude))


@pytest.mark.parametrize("codec", CODECS)
def test_dead_decoder_reraises(codec: str) -> None:
    decoder = get_codec(codec).decoder()
    with pytest.raises(ProtocolViolation) as first:
        decoder.feed(b"\x00")
    good = get_codec(codec).encoder().encode(Cancel(subscriber=1))
    for later in (good, b""):
        with pytest.raises(ProtocolViolation) as again:
            decoder.feed(later)
        # The same violation, raised afresh from a copy (``ProtocolViolation.again``): keeping the raised one would
        # keep its traceback, and through it the decoder's buffered bytes, until a full collection.
        assert (again.value.rule, str(again.value), again.value.offset) == \
            (first.value.rule, str(first.value), first.value.offset)
        assert again.value.__traceback__ is not first.value.__traceback__


# (codec, hex, rule, words the message must contain: the frame and the field)
MESSAGES: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("msgpack", "06 a1 31", "ERR-4", ("cancel", "subscriber")),
    ("msgpack", "05 01 c3", "ERR-4", ("request", "demand")),
    ("msgpack", "04 a2 c3 28 01 00", "ERR-5", ("subscribe", "publisher")),
    ("msgpack", "0a 01 a1 80", "ERR-5", ("onError", "error")),
    ("msgpack", "06 cf 80 00 00 00 00 00 00 00", "ERR-9", ("cancel", "subscriber")),
    ("msgpack", "01 00 91 cf 80 00 00 00 00 00 00 00", "ERR-9", ("clientHello", "extensions")),
    ("msgpack", "08 01 c6 ff ff ff ff", "ERR-8", ("onNext", "element")),
    ("msgpack", "03 db ff ff ff ff", "ERR-8", ("goodbye", "reason")),
    ("msgpack", "0b 01 02", "PACK-2", ("onNextPacked", "subscriber=1")),
    ("varint", "04 02 c3 28 01 00", "ERR-5", ("subscribe", "publisher")),
    ("varint", "0a 01 01 80", "ERR-5", ("onError", "error")),
    ("varint", f"06 {V63}", "ERR-9", ("cancel", "subscriber")),
    ("varint", f"01 00 01 {V63}", "ERR-9", ("clientHello", "extensions")),
    ("varint", "05 01 ff ff ff ff ff ff ff ff ff 02", "ERR-10", ("request", "demand")),
    ("varint", "08 01 80 80 80 80 10", "ERR-8", ("onNext", "element")),
    ("varint", "03 80 80 80 80 10", "ERR-8", ("goodbye", "reason")),
    ("varint", "07 01 04 0b 01 00", "ERR-9", ("onNextPacked", "count")),
    ("varint", "0b 01 02", "PACK-2", ("onNextPacked", "subscriber=1")),
]


@pytest.mark.parametrize("codec, hexdata, rule, words", MESSAGES, ids=[_ids(c) for c in MESSAGES])
def test_message_names_frame_and_field(codec: str, hexdata: str, rule: str, words: tuple[str, ...]) -> None:
    for chunk in (0, 1):
        violation = violation_of(codec, bytes.fromhex(hexdata), eof=False, chunk=chunk)
        assert violation.rule == rule
        for word in words:
            assert word in violation.message, f"chunk={chunk}: {violation.message!r} does not name {word!r}"


def test_varint_accepts_non_minimal_varints() -> None:
    """rsio-v0 bounds a varint's length and value only; `81 00` is 1, as in protobuf."""
    decoder = get_codec("varint").decoder()
    assert decoder.feed(bytes.fromhex("86 00 81 80 00")) == [Cancel(subscriber=1)]
    assert decoder.feed(bytes.fromhex("06 ff ff ff ff ff ff ff ff ff 00")) == [Cancel(subscriber=2**63 - 1)]


@pytest.mark.parametrize("codec", CODECS)
def test_encoder_refuses_what_the_wire_cannot_carry(codec: str) -> None:
    encoder = get_codec(codec).encoder()
    with pytest.raises(ValueError):
        encoder.encode(Cancel(subscriber=2**64))
    if codec == "varint":
        with pytest.raises(ValueError):
            encoder.encode(Cancel(subscriber=-1))
