"""Golden vectors (tests/data/golden_<codec>.txt), checked in both directions.

Each file is one stream: its lines are fed in order to one decoder and encoded
in order with one encoder (see the header of the files for the format).
"""

from __future__ import annotations

import ast
import operator
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from rsio_tck.bindings.rsio.wire import FRAME_BY_NAME, Frame, get_codec
from rsio_tck.bindings.rsio.wire.frames import OnNext, Request, Subscribe

DATA = Path(__file__).parent / "data"
CODECS = ("msgpack", "varint")
LINE = re.compile(r"^(?P<hex>[0-9a-fA-F]+(?: [0-9a-fA-F]+)*) {2,}(?P<frame>\S.*)$")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow}


def _value(node: ast.expr) -> Any:
    """A literal, a tuple, or + - * ** over them: nothing else is evaluated."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, str, bytes)):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_value(item) for item in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_value(node.left), _value(node.right))
    raise ValueError(f"not allowed in a golden frame: {ast.dump(node)}")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def parse_frame(text: str) -> Frame:
    call = ast.parse(text, mode="eval").body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.args:
        raise ValueError(f"expected name(field=value, ...), got {text!r}")
    cls = FRAME_BY_NAME[call.func.id]
    kwargs = {_snake(kw.arg or ""): _value(kw.value) for kw in call.keywords}
    known = {spec.name for spec in fields(cls)}
    if set(kwargs) != known:
        raise ValueError(f"{call.func.id} needs exactly the fields {sorted(known)}, got {sorted(kwargs)}")
    return cls(**kwargs)


def load(codec: str) -> list[tuple[int, bytes, Frame]]:
    """(line number, bytes, frame) of every vector in the golden file of ``codec``."""
    vectors = []
    for number, line in enumerate((DATA / f"golden_{codec}.txt").read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = LINE.match(line)
        if match is None:
            raise ValueError(f"golden_{codec}.txt:{number}: not '<hex>  <frame>'")
        vectors.append((number, bytes.fromhex(match["hex"]), parse_frame(match["frame"])))
    return vectors


def test_parser_reads_the_dsl() -> None:
    frame = parse_frame('subscribe(publisher="p" + "q", subscriber=2**63-1, initialDemand=-1)  # comment')
    assert frame == Subscribe(publisher="pq", subscriber=2**63 - 1, initial_demand=-1)
    assert parse_frame('onNext(subscriber=1, element=b"\\xab" * 3)').element == b"\xab\xab\xab"  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        parse_frame('onNext(subscriber=__import__("os"), element=b"")')
    with pytest.raises(ValueError):
        parse_frame("onNext(subscriber=1)")  # a field missing


def test_spec_examples_are_in_the_msgpack_file() -> None:
    vectors = {data.hex(): frame for _, data, frame in load("msgpack")}
    assert vectors["0801c4026869"] == OnNext(subscriber=1, element=b"hi")
    assert vectors["05010a"] == Request(subscriber=1, demand=10)


@pytest.mark.parametrize("codec", CODECS)
def test_golden_files_cover_every_message_type(codec: str) -> None:
    vectors = load(codec)
    assert len(vectors) >= 12
    assert {type(frame).wire_name for _, _, frame in vectors} == set(FRAME_BY_NAME)


@pytest.mark.parametrize("codec", CODECS)
def test_golden_decode(codec: str) -> None:
    decoder = get_codec(codec).decoder()
    for number, data, frame in load(codec):
        assert decoder.feed(data) == [frame], f"golden_{codec}.txt:{number}"
    decoder.eof()


@pytest.mark.parametrize("codec", CODECS)
def test_golden_decode_as_one_stream_byte_by_byte(codec: str) -> None:
    vectors = load(codec)
    stream = b"".join(data for _, data, _ in vectors)
    decoder = get_codec(codec).decoder()
    got: list[Frame] = []
    for i in range(len(stream)):
        got += decoder.feed(stream[i : i + 1])
    assert got == [frame for _, _, frame in vectors]
    assert decoder.offset == len(stream)


@pytest.mark.parametrize("codec", CODECS)
def test_golden_encode(codec: str) -> None:
    encoder = get_codec(codec).encoder()
    for number, data, frame in load(codec):
        assert encoder.encode(frame).hex(" ") == data.hex(" "), f"golden_{codec}.txt:{number}"
