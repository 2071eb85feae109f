"""Listen mode: the kit serves real clients and judges every frame they send."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from rsio_tck.binding import BINDING_NAMES, get_binding
from rsio_tck.catalogue import RULES
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.listen import client_tests, run_client_tests
from rsio_tck.listen.runner import run_client_case
from rsio_tck.scenarios.result import Verdict

HERE = Path(__file__).resolve().parent
REFERENCE_CLIENT = f"{sys.executable} -m rsio_tck.reference_peer.rsio.client"


def _run(cases: list, command: str, timeout: float = 15.0) -> list:  # type: ignore[type-arg]
    return asyncio.run(run_client_tests(cases, command, "tcp://127.0.0.1:0", get_binding("rsio"), "msgpack",
                                        lambda case: EmbeddedPeer(), timeout=timeout))


def test_the_reference_client_passes_every_rsio_client_test_case() -> None:
    results = _run(client_tests("rsio"), REFERENCE_CLIENT)
    assert [(r.id, r.verdict) for r in results] == [(f"CLIENT-rsio-{c.name}", Verdict.PASS) for c in client_tests("rsio")]
    assert all(r.trace for r in results)  # both directions recorded: the run dir gets traces and pcaps


@pytest.mark.parametrize(("mode", "verdict", "rule"), [
    ("unsupported", Verdict.SKIP, None),
    ("wrong", Verdict.FAIL, "HS-1"),  # the case's first rule carries the client's own "it went wrong"
    ("garbage", Verdict.FAIL, "ERR-7"),  # 0xc1 is no type code
])
def test_listen_mode_judges_the_client(mode: str, verdict: Verdict, rule: str | None) -> None:
    case = client_tests("rsio", ["stream-range"])[0]
    (result,) = _run([case], f"{sys.executable} {HERE / 'listen_clients.py'} {mode}")
    assert result.verdict is verdict, result.explain()
    if rule is not None:
        assert rule in {f.rule for f in result.failures} | {v["rule"] for v in result.violations}, result.explain()
        assert all(v.get("side", "client") == "client" for v in result.violations)


def test_a_client_that_never_finishes_fails_within_the_timeout() -> None:
    case = client_tests("rsio", ["stream-range"])[0]

    async def one() -> object:
        with EmbeddedPeer() as serving:
            return await run_client_case(case, f"{sys.executable} {HERE / 'listen_clients.py'} hang",
                                         "tcp://127.0.0.1:0", serving, get_binding("rsio"), "msgpack", timeout=1.0)

    result = asyncio.run(one())
    assert result.verdict is Verdict.FAIL  # type: ignore[attr-defined]
    assert "did not" in result.failures[-1].got  # type: ignore[attr-defined]


@pytest.mark.parametrize("binding", BINDING_NAMES)
def test_every_client_test_case_cites_catalogue_rules(binding: str) -> None:
    for case in client_tests(binding):
        assert case.binding == binding and case.rules and all(rule in RULES for rule in case.rules), case


def test_the_interop_fixtures_know_the_rsocket_client_test_cases() -> None:
    listed = json.loads((HERE.parent / "interop" / "testcases.json").read_text())["testcases"]
    assert [t["name"] for t in listed] == [c.name for c in client_tests("rsocket")]


def test_an_unknown_client_test_case_is_one_line() -> None:
    with pytest.raises(ValueError, match="unknown client test case 'nope' for binding rsio"):
        client_tests("rsio", ["nope"])


def test_the_command_line_runs_listen_mode_and_writes_a_run_directory(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "rsio_tck.cli", "run", "--listen", "tcp://127.0.0.1:0", "--client-command",
         REFERENCE_CLIENT, "--client-test", "stream-range", "--client-test", "error",
         "--report-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = tmp_path.iterdir()
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert [(r["id"], r["verdict"]) for r in results] == [("CLIENT-rsio-stream-range", "pass"),
                                                          ("CLIENT-rsio-error", "pass")]
    assert (run_dir / "report" / "index.html").exists() and list((run_dir / "pcaps").glob("*.pcap"))
    checked = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "report", str(run_dir)], capture_output=True,
                             text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # the run directory meets its schemas


@pytest.mark.parametrize(("args", "message"), [
    (["--listen", "tcp://127.0.0.1:0"], "needs both --listen URL and --client-command CMD"),
    (["--listen", "tcp://127.0.0.1:0", "--client-command", "x", "--target", "tcp://127.0.0.1:9"],
     "exclude each other"),
    (["--listen", "tcp://127.0.0.1:0", "--client-command", "x", "--client-test", "nope"],
     "unknown client test case 'nope'"),
    (["--listen", "unix:/tmp/x", "--client-command", "x"], "listens on tcp://"),
])
def test_listen_mode_refuses_bad_input_in_one_line(args: list[str], message: str) -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "run", *args], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_list_client_tests_names_each_case_and_its_rules() -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "rsio_tck.cli", "list-client-tests", "--binding", "rsocket"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for case in client_tests("rsocket"):
        assert case.name in done.stdout and case.rules[0] in done.stdout


def test_listen_mode_on_rsocket_writes_an_rsocket_run_directory(tmp_path: Path) -> None:
    """The RSocket binding in listen mode, through the command line, with a client that supports no case:
    every case is a skip, and the run directory is an RSocket one."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "rsio_tck.cli", "run", "--binding", "rsocket", "--listen", "tcp://127.0.0.1:0",
         "--client-command", f"{sys.executable} {HERE / 'listen_clients.py'} unsupported", "--client-test", "fnf",
         "--min-run", "0", "--report-dir", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = tmp_path.iterdir()
    assert json.loads((run_dir / "run.json").read_text())["binding"] == "rsocket"
    results = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert [(r["id"], r["verdict"]) for r in results] == [("CLIENT-rsocket-fnf", "skip")]


RSOCKET_CLIENT = f"{sys.executable} -m rsio_tck.reference_peer.rsocket.testcases"


@pytest.mark.parametrize("profile", ["rsocket-1.0", "reactivesocket-draft"])
def test_the_rsocket_reference_client_passes_every_rsocket_client_test_case(profile: str) -> None:
    from rsio_tck.listen.cli import serving_peer_factory

    cases = client_tests("rsocket")
    results = asyncio.run(run_client_tests(cases, f"{RSOCKET_CLIENT} --profile {profile}", "tcp://127.0.0.1:0",
                                           get_binding("rsocket"), profile, serving_peer_factory("rsocket", profile),
                                           timeout=20.0))
    # The draft has no REQUEST_CHANNEL: the client says so (exit 127), the case skips.
    expected = [(f"CLIENT-rsocket-{c.name}", Verdict.SKIP if profile == "reactivesocket-draft" and c.name == "channel-echo"
                 else Verdict.PASS) for c in cases]
    assert [(r.id, r.verdict) for r in results] == expected, "\n\n".join(r.explain() for r in results)
    assert not [f for r in results for f in r.findings]


def test_a_client_fault_of_the_rsocket_peer_fails_the_client_test_case_citing_its_rule() -> None:
    from rsio_tck.listen.cli import serving_peer_factory

    (case,) = client_tests("rsocket", ["request-response"])
    (result,) = asyncio.run(run_client_tests([case], f"{RSOCKET_CLIENT} --fault client-payload-on-request",
                                             "tcp://127.0.0.1:0", get_binding("rsocket"), "rsocket-1.0",
                                             serving_peer_factory("rsocket", "rsocket-1.0"), timeout=20.0))
    assert result.verdict is Verdict.FAIL
    assert "RS-STREAM-4" in case.rules and {f.rule for f in result.findings} == {"RS-STREAM-4"}


@pytest.mark.parametrize(("fault", "rule"), [
    ("client-keepalive-silent", "RS-KEEPALIVE-2"),  # idle past the max lifetime without a KEEPALIVE
    ("client-keepalive-without-r", "RS-KEEPALIVE-4"),  # a KEEPALIVE it initiates, without R
])
def test_the_keepalive_client_test_case_catches_a_client_keepalive_fault(fault: str, rule: str) -> None:
    from rsio_tck.listen.cli import serving_peer_factory

    (case,) = client_tests("rsocket", ["keepalive"])
    (result,) = asyncio.run(run_client_tests([case], f"{RSOCKET_CLIENT} --fault {fault}", "tcp://127.0.0.1:0",
                                             get_binding("rsocket"), "rsocket-1.0",
                                             serving_peer_factory("rsocket", "rsocket-1.0"), timeout=20.0))
    assert result.verdict is Verdict.FAIL, result.explain()
    assert rule in case.rules and {f.rule for f in result.findings} == {rule}, result.explain()
