"""Golden vectors from Ditto's own code: the kit's codec reads each one and writes it back JSON-equal.

``tests/data/ditto/golden.jsonl`` is the output of ``interop/ditto-protocol/build.sh``: Ditto's signal
classes (ditto-protocol 3.8.0 from Maven Central) turned into Ditto Protocol envelopes by
``DittoProtocolAdapter``, one per line.  When the generator has been built (its jar is cached under
``target/``), the last test reruns it and checks that the committed file is still what Ditto writes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rsio_tck.bindings.ditto import (
    MESSAGE_CLASSES,
    SEARCH_PROTOCOL_ERROR,
    STREAMING_PROTOCOL_ERROR,
    LineDecoder,
    SearchFailed,
    StreamingFailed,
    decode_message,
    encode_line,
    encode_message,
)

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "ditto" / "golden.jsonl"
GENERATOR = ROOT / "interop" / "ditto-protocol"
LINES = GOLDEN.read_text("utf-8").splitlines()


@pytest.mark.parametrize("line", LINES, ids=[f"{i}-{json.loads(t)['topic']}" for i, t in enumerate(LINES)])
def test_each_golden_vector_reads_and_writes_back_json_equal(line: str) -> None:
    message = decode_message(line)
    assert type(message) in MESSAGE_CLASSES.values()
    assert json.loads(encode_message(message)) == json.loads(line)
    assert decode_message(encode_message(message)) == message


def test_the_vectors_cover_every_message_kind_of_both_profiles() -> None:
    kinds = {type(decode_message(line)) for line in LINES}
    assert kinds == set(MESSAGE_CLASSES.values())


def test_the_golden_file_is_a_valid_line_stream() -> None:
    decoder = LineDecoder()
    messages = decoder.feed(GOLDEN.read_bytes())
    decoder.eof()
    assert len(messages) == len(LINES)
    again = LineDecoder()
    assert again.feed(b"".join(encode_line(m) for m in messages)) == messages


def test_the_kits_protocol_error_codes_are_the_ones_ditto_writes() -> None:
    codes = {type(m): m.error.error for m in map(decode_message, LINES) if isinstance(m, StreamingFailed | SearchFailed)}
    assert codes == {StreamingFailed: STREAMING_PROTOCOL_ERROR, SearchFailed: SEARCH_PROTOCOL_ERROR}


@pytest.mark.timeout(60)
def test_the_committed_vectors_are_what_the_built_generator_writes(tmp_path: Path) -> None:
    jar = GENERATOR / "target" / "ditto-protocol-golden-1.0.0.jar"
    classpath = GENERATOR / "target" / "classpath.txt"
    if not (jar.exists() and classpath.exists() and shutil.which("java")):
        pytest.skip("interop/ditto-protocol is not built (run interop/ditto-protocol/build.sh; needs a JDK and Maven)")
    out = tmp_path / "golden.jsonl"
    cp = f"{jar}:{classpath.read_text().strip()}"
    run = subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-XX:ActiveProcessorCount=1", "-cp", cp, "tck.Golden",
                          str(out)], capture_output=True, text=True, timeout=50)
    assert run.returncode == 0, run.stderr
    assert out.read_text("utf-8") == GOLDEN.read_text("utf-8")
