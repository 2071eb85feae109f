"""A target that stops answering is said once (issue 25, part 3).

The reference peer's ``--stop-on TEXT`` blocks its event loop for good once TEXT arrives, as
rsocket-js 0.0.27's did when a request-stream handler emitted synchronously inside request(n):
no connection, old or new, is read or answered again.  The scenarios below put TEXT in the
publisher name of STR-902 only, so the target stops during STR-902, on every binding (RSocket's onSubscribe
is the kit's own, so STR-902 waits for an element too: what a target owes on any binding).

The kit must then probe once (the binding's liveness probe, on a fresh connection), say once that
the target stopped answering during STR-902, keep STR-902's verdict (its time-out was real), mark
every scenario after it ``error`` (not run, nothing charged to a rule), exit 3, and show it in the
run directory and the HTML report.  Against a live target a time-out stays a plain fail.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rsio_tck.binding import BINDING_NAMES, get_binding
from rsio_tck.cli import app
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.gate import ExitCode, suite_outcome, target_stopped
from rsio_tck.report.schema import check_run_dir
from rsio_tck.scenarios import RunConfig, Verdict, load_file, run_suite
from rsio_tck.scenarios.liveness import PACE_FACTOR, TargetWatch, probe

pytest_plugins = ["pytester"]

MARKER = "stop-here"
SIGNAL_TIMEOUT = "1"


def _range(number: int, rule: str, count: int) -> str:
    return f"""
- id: STR-{number}
  title: a range of {count}, on a target that may have stopped
  rules: [{rule}]
  level: MUST
  binding: contract
  steps:
    - send: {{subscribe: {{publisher: "tck/range?count={count}", subscriber: 1, initialDemand: {count}}}}}
    - expect: {{onSubscribe: {{subscriber: 1}}}}
    - expect_elements: {{subscriber: 1, count: {count}, then: onComplete}}
"""


STOPPING = f"""
- id: STR-902
  title: the subscribe that stops the target (rsio-peer --stop-on {MARKER})
  rules: [STR-1]
  level: MUST
  binding: contract
  steps:
    - send: {{subscribe: {{publisher: "tck/{MARKER}", subscriber: 1, initialDemand: 1}}}}
    - expect: {{onSubscribe: {{subscriber: 1}}}}
    - expect_elements: {{subscriber: 1, count: 1, then: onComplete}}
"""

# A time-out on a live target: a subscription without demand gets no element (legally), so the expectation
# of one waits in vain.
MISSED = """
- id: STR-906
  title: an element without demand (none may come; the kit waits in vain)
  rules: [DEM-1]
  level: MUST
  binding: contract
  steps:
    - send: {subscribe: {publisher: "tck/range?count=2", subscriber: 1, initialDemand: 0}}
    - expect: {onSubscribe: {subscriber: 1}}
    - expect: {onNext: {subscriber: 1}}
"""


def _scenarios(directory: Path, *parts: str) -> Path:
    path = directory / "stop.yaml"
    path.write_text("".join(parts))
    return path


def _suite(directory: Path, after: int = 2) -> Path:
    """STR-901 (passes), STR-902 (stops the target), then ``after`` ranges: STR-903 ..."""
    rules = ["STR-4", "STR-3", "STR-1", "STR-4"]
    return _scenarios(directory, _range(901, "STR-1", 2), STOPPING,
                      *(_range(903 + i, rules[i % len(rules)], 1 + i % 2) for i in range(after)))


@pytest.fixture(params=BINDING_NAMES)
def stopping_peer(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(binding, URL) of a reference peer that stops answering once it reads the marker."""
    with EmbeddedPeer(binding=request.param, extra=("--stop-on", MARKER)) as url:
        yield request.param, url


def _run(url: str, binding: str, scenarios: Path, reports: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["run", "--target", url, "--binding", binding, "--scenarios", str(scenarios),
                                    "--signal-timeout", SIGNAL_TIMEOUT, "--report-dir", str(reports), "--quiet",
                                    *args])


def _run_dir(reports: Path) -> Path:
    (run_dir,) = reports.iterdir()
    return run_dir


def _results(run_dir: Path) -> dict[str, dict[str, Any]]:
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    return {entry["id"]: entry for entry in map(json.loads, lines)}


def _said(result: Any) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if "stopped answering" in line]


def test_a_target_that_stops_is_said_once_and_the_scenarios_after_it_are_errors(
        stopping_peer: tuple[str, str], tmp_path: Path) -> None:
    binding, url = stopping_peer
    result = _run(url, binding, _suite(tmp_path), tmp_path / "reports", "--jobs", "1")
    assert result.exit_code == int(ExitCode.UNRUNNABLE), result.output + result.stderr
    said = _said(result)
    assert len(said) == 1, said
    assert said[0].startswith("error: the target stopped answering during STR-902: after its time-out, a fresh "
                              "connection got no answer to "), said
    assert said[0].endswith("; 2 scenario(s) after it not judged (error)"), said
    assert "[fail]" in result.stderr and "STR-902" in result.stderr  # the failing scenario itself is explained

    run_dir = _run_dir(tmp_path / "reports")
    results = _results(run_dir)
    assert [results[i]["verdict"] for i in ("STR-901", "STR-902", "STR-903", "STR-904")] == \
        ["pass", "fail", "error", "error"], results
    assert results["STR-902"]["target_stopped"]["during"] == "STR-902"
    assert "got nothing within 1 s" in results["STR-902"]["violations"][0]["message"]
    for later in ("STR-903", "STR-904"):
        assert results[later]["violations"] == [], results[later]  # nothing charged to a rule
        assert results[later]["reason"] == "not run: the target went silent during STR-902"
        assert results[later]["target_stopped"]["during"] == "STR-902"
    assert "target_stopped" not in results["STR-901"]

    run = json.loads((run_dir / "run.json").read_text())
    assert run["target_stopped"]["during"] == "STR-902"
    report = json.loads((run_dir / "report" / "report.json").read_text())
    assert report["stopped"]["during"] == "STR-902" and report["stopped"]["not_judged"] == 2
    index = (run_dir / "report" / "index.html").read_text()
    assert 'id="stopped"' in index and "The target stopped answering during" in index
    assert 'class="stopped-here"' in index
    assert check_run_dir(run_dir) == []


def test_with_jobs_the_probe_and_the_stop_are_decided_once(tmp_path: Path) -> None:
    with EmbeddedPeer(extra=("--stop-on", MARKER)) as url:
        result = _run(url, "rsio", _suite(tmp_path, after=10), tmp_path / "reports", "--jobs", "4")
    assert result.exit_code == int(ExitCode.UNRUNNABLE), result.output + result.stderr
    assert len(_said(result)) == 1, _said(result)
    results = _results(_run_dir(tmp_path / "reports"))
    assert len(results) == 12
    named = [entry for entry in results.values() if entry.get("target_stopped", {}).get("during") == entry["id"]]
    assert len(named) == 1, results  # one scenario is where the target stopped ...
    during = named[0]["id"]
    assert f"stopped answering during {during}" in _said(result)[0]
    for entry in results.values():  # ... and no other scenario is charged: each passed, or is an error
        if entry["id"] != during:
            assert entry["verdict"] in ("pass", "error"), entry
        if entry["verdict"] == "error":
            assert entry["violations"] == [] and entry["target_stopped"]["during"] == during, entry
    # Scenarios still queued behind the four running ones were not run at all.
    assert any(entry["reason"].startswith("not run: ") for entry in results.values()), results


def test_a_time_out_on_a_live_target_stays_a_fail(tmp_path: Path) -> None:
    scenarios = load_file(_scenarios(tmp_path, MISSED, _range(901, "STR-1", 2)))
    with EmbeddedPeer() as url:
        config = RunConfig(target=url, signal_timeout=float(SIGNAL_TIMEOUT), probe_timeout=5.0)
        watch = TargetWatch(url, "rsio", "msgpack", 5.0)
        missed, after = asyncio.run(run_suite(scenarios, config, jobs=1, watch=watch))
    assert watch.probes == 1 and watch.stop is None  # the time-out was followed by a probe, which was answered
    assert missed.verdict is Verdict.FAIL and missed.stopped is None and missed.timed_out
    assert [f.got for f in missed.failures] == ["nothing within 1 s (the target was silent for 1 s)"]
    assert after.verdict is Verdict.PASS and after.stopped is None
    assert target_stopped([missed, after]) is None
    assert suite_outcome([missed, after], 1).code is ExitCode.FAILED


@pytest.mark.parametrize(("binding", "profile", "listen", "extra"),
                         [(name, profile, "tcp://127.0.0.1:0", ()) for name in BINDING_NAMES
                          for profile in get_binding(name).profiles]
                         + [(name, get_binding(name).profiles[0], "ws://127.0.0.1:0/tck", ()) for name in BINDING_NAMES]
                         + [(name, get_binding(name).profiles[0], "tcp://127.0.0.1:0", ("--tiny-writes", "1"))
                            for name in BINDING_NAMES])
def test_each_binding_probe_is_answered_by_a_live_peer(binding: str, profile: str, listen: str,
                                                       extra: tuple[str, ...]) -> None:
    # Both probes: the liveness probe after a time-out, and the pace probe (its answer whole within its bound)
    # after a trickle; a peer writing one byte at a time passes both.
    with EmbeddedPeer(binding=binding, profile=profile, listen=listen, extra=extra) as url:
        assert asyncio.run(probe(url, binding, profile, 5.0)) is None
        assert asyncio.run(probe(url, binding, profile, 5.0 * PACE_FACTOR, pace=True)) is None


def test_a_probe_says_why_a_target_does_not_answer() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    why = asyncio.run(probe(closed, "rsocket", "rsocket-1.0", 2.0))
    assert why is not None and why.startswith("a fresh connection could not be opened (cannot reach"), why

    with socket.socket() as listener:  # accepts (the kernel's backlog) and never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        silent = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        why = asyncio.run(probe(silent, "rsocket", "rsocket-1.0", 0.5))
    assert why == "a fresh connection got no answer to SETUP, then KEEPALIVE with R within 0.5 s"


def test_the_pytest_plugin_says_it_once_and_errors_the_scenarios_after(pytester: pytest.Pytester,
                                                                       tmp_path: Path) -> None:
    scenarios = _suite(tmp_path)
    with EmbeddedPeer(extra=("--stop-on", MARKER)) as url:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--rsio-target", url,
                                               "--rsio-scenarios", str(scenarios), "--rsio-signal-timeout",
                                               SIGNAL_TIMEOUT, str(scenarios), timeout=120)
    result.assert_outcomes(passed=1, failed=1, errors=2)
    assert result.ret == int(ExitCode.UNRUNNABLE)
    said = [line for line in result.outlines if "stopped answering" in line]
    assert len(said) == 1 and said[0].startswith("rsio: the target stopped answering during STR-902"), said
    assert said[0].endswith("; 2 scenario(s) after it not judged (error)"), said
    assert sum("not run: the target went silent during STR-902" in line for line in result.outlines) >= 2
