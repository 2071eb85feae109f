"""The interop fixtures (interop/): their layout, the client test cases, and the rsocket-py server smoke test.

The smoke test starts interop/rsocket-py/server with this interpreter (rsocket 0.4.20 is in the dev
extra) and talks to it with the kit's RSocket codec over a plain socket (interop/smoke.py).  The
other implementations need their toolchains and `make interop-build`; they are not run here.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

INTEROP = Path(__file__).resolve().parent.parent / "interop"
IMPLEMENTATIONS = {  # name -> its lock file
    "rsocket-py": "requirements.txt",
    "rsocket-js-0": "package-lock.json",
    "rsocket-java": "dependencies.lock",
    "rsocket-go": "go.sum",
    "rsocket-js-1": "package-lock.json",
    "rsocket-rust": "Cargo.lock",
}
SOURCES = {  # name -> (server source, client source)
    "rsocket-py": ("server.py", "client.py"),
    "rsocket-js-0": ("server.js", "client.js"),
    "rsocket-java": ("src/main/java/rsio/Server.java", "src/main/java/rsio/Client.java"),
    "rsocket-go": ("cmd/server/main.go", "cmd/client/main.go"),
    "rsocket-js-1": ("server.js", "client.js"),
    "rsocket-rust": ("src/bin/server.rs", "src/bin/client.rs"),
}
# What interop/smoke.py's probes show for rsocket-py 0.4.20 (FINDINGS.md): its StreamFromGenerator pulls
# the next element only on demand, so tck/error's onError waits for a request past the last element; and a
# zero-length element goes out as a PAYLOAD without the N flag (neither N nor C unless it is the last).
RSOCKET_PY_DEVIATIONS = {"error (tck/error?after=2, N=1, then 1)", "empty elements (tck/large?size=0&count=3, N=3)"}


def load_smoke():
    spec = importlib.util.spec_from_file_location("interop_smoke", INTEROP / "smoke.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is built
    spec.loader.exec_module(module)
    return module


def client_testcases() -> list[str]:
    return [case["name"] for case in json.loads((INTEROP / "testcases.json").read_text())["testcases"]]


def test_testcases_are_named_once_and_described():
    cases = json.loads((INTEROP / "testcases.json").read_text())["testcases"]
    names = [case["name"] for case in cases]
    assert len(names) == len(set(names)) >= 7
    for case in cases:
        assert case["description"] and case["exercises"], case["name"]


@pytest.mark.parametrize("name", sorted(IMPLEMENTATIONS))
def test_each_implementation_has_its_fixtures_and_a_lock_file(name):
    directory = INTEROP / name
    for script in ("server", "client", "build.sh"):
        assert (directory / script).stat().st_mode & 0o111, f"{name}/{script} is not executable"
    assert (directory / IMPLEMENTATIONS[name]).stat().st_size > 0
    for source in SOURCES[name]:
        lines = (directory / source).read_text().count("\n")
        assert lines < 200, f"{name}/{source} has {lines} lines; a fixture stays under 200"


@pytest.mark.parametrize("name", sorted(IMPLEMENTATIONS))
def test_each_client_names_every_testcase(name):
    """A client performs a test case or says in a comment why not (it then exits 127)."""
    client = (INTEROP / name / SOURCES[name][1]).read_text()
    missing = [case for case in client_testcases() if case not in client]
    assert not missing, f"{name}'s client never mentions {missing}"


def test_rsocket_py_server_smoke(monkeypatch, tmp_path):
    pytest.importorskip("rsocket", reason="rsocket (rsocket-py) is in the dev extra")
    monkeypatch.setenv("RSIO_PYTHON", sys.executable)
    smoke = load_smoke()
    probes = {probe.name: probe for probe in smoke.smoke("rsocket-py", tmp_path / "server.log")}
    failing = {name for name, probe in probes.items() if not probe.ok}
    assert failing == RSOCKET_PY_DEVIATIONS, {name: probes[name].detail for name in failing}
    assert probes["range-5 (N=5)"].detail == "elements ['0', '1', '2', '3', '4'], complete"
    # The deviation is the one recorded, and nothing worse: element 1 came on demand, the error did not.
    assert probes["error (tck/error?after=2, N=1, then 1)"].detail == "0, then ['1'], None"
    empty = probes["empty elements (tck/large?size=0&count=3, N=3)"]
    assert empty.frames == ["PAYLOAD[] b''", "PAYLOAD[] b''", "PAYLOAD[C] b''"], empty.frames
    # The raw bytes of the first one: frame type 0x0A (PAYLOAD) with no flag at all (0x28 0x00).
    assert empty.transcript[1] == ("<-", bytes.fromhex("000006 0000000d 2800")), smoke.render_transcript(empty.transcript)
