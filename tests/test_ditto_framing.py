"""The Ditto TCP framing (one JSON envelope per line): any chunking, bounded lines, truncation, a dead decoder."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_ditto_codec import MESSAGES

from rsio_tck.bindings.ditto import DittoLimits, LineDecoder, encode_line
from rsio_tck.errors import ProtocolViolation

STREAM = b"".join(encode_line(m) for m in MESSAGES.values())
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def feed_chunks(data: bytes, cuts: list[int], decoder: LineDecoder | None = None) -> list[object]:
    decoder = decoder or LineDecoder()
    out: list[object] = []
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        out += decoder.feed(data[start:cut])
        start = cut
    decoder.eof()
    return out


@SETTINGS
@given(cuts=st.lists(st.integers(0, len(STREAM)), max_size=40))
def test_any_chunking_decodes_the_same_messages(cuts: list[int]) -> None:
    assert feed_chunks(STREAM, cuts) == list(MESSAGES.values())


@SETTINGS
@given(data=st.data())
def test_byte_at_a_time_and_whole_agree_on_any_selection(data: st.DataObject) -> None:
    chosen = data.draw(st.lists(st.sampled_from(list(MESSAGES.values())), max_size=6))
    raw = b"".join(encode_line(m) for m in chosen)
    assert feed_chunks(raw, list(range(len(raw)))) == chosen == feed_chunks(raw, [])


def test_crlf_and_spaces_around_the_json_are_allowed() -> None:
    line = encode_line(MESSAGES["search cancel"])
    assert LineDecoder().feed(b"  " + line[:-1] + b" \r\n") == [MESSAGES["search cancel"]]


def test_a_line_over_the_limit_fails_before_it_is_buffered() -> None:
    decoder = LineDecoder(DittoLimits(max_message=100))
    assert decoder.feed(b"x" * 100) == []  # at the limit, still waiting for the newline
    with pytest.raises(ProtocolViolation) as caught:
        decoder.feed(b"y")  # one byte more, still no newline: fails now, not at the newline
    assert caught.value.rule == "DITTO-LINE-1" and caught.value.offset == 0
    assert len(decoder._line) <= 100  # noqa: SLF001 - the bound is the point of the test


def test_a_huge_chunk_without_newline_is_refused_without_being_copied() -> None:
    decoder = LineDecoder(DittoLimits(max_message=1024))
    with pytest.raises(ProtocolViolation) as caught:
        decoder.feed(b"{" * 10_000_000)
    assert caught.value.rule == "DITTO-LINE-1"
    assert len(decoder._line) == 0  # noqa: SLF001


def test_the_stream_ending_inside_a_line_is_truncation() -> None:
    decoder = LineDecoder()
    line = encode_line(MESSAGES["search created"])
    assert decoder.feed(line + line[:10]) == [MESSAGES["search created"]]
    with pytest.raises(ProtocolViolation) as caught:
        decoder.eof()
    assert caught.value.rule == "DITTO-LINE-2" and caught.value.offset == len(line)


def test_after_a_violation_the_decoder_is_dead_and_keeps_what_came_before() -> None:
    good = encode_line(MESSAGES["streaming created"])
    decoder = LineDecoder()
    with pytest.raises(ProtocolViolation) as caught:
        decoder.feed(good + b"[1]\n" + good)
    assert caught.value.rule == "DITTO-ENV-2" and caught.value.offset == len(good)
    assert decoder.salvaged == [MESSAGES["streaming created"]]
    with pytest.raises(ProtocolViolation) as again:
        decoder.feed(good)
    # The same violation, as a fresh exception (``ProtocolViolation.again``: the dead decoder keeps none
    # that was raised, whose traceback would hold the decoder in a cycle).
    assert str(again.value) == str(caught.value) and again.value.rule == caught.value.rule


def test_an_empty_line_is_not_a_message() -> None:
    with pytest.raises(ProtocolViolation) as caught:
        LineDecoder().feed(b"\n")
    assert caught.value.rule == "DITTO-ENV-1"


@SETTINGS
@given(raw=st.binary(max_size=300), cuts=st.lists(st.integers(0, 300), max_size=10))
def test_arbitrary_bytes_decode_or_raise_only_protocol_violation(raw: bytes, cuts: list[int]) -> None:
    try:
        feed_chunks(raw, [c for c in cuts if c <= len(raw)], LineDecoder(DittoLimits(max_message=64)))
    except ProtocolViolation as exc:
        assert exc.rule.startswith("DITTO-") and exc.offset is not None
