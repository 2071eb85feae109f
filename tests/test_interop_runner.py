"""``make interop``'s own logic (interop/run.py, grid.py, baselines.py): what runs where, and how results
are held to the baselines.  The runs themselves are ``make interop``; here only the pure parts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "interop"))  # run.py imports its siblings by name, as when run as a script

import baselines  # noqa: E402
import grid  # noqa: E402
import processes  # noqa: E402
import run  # noqa: E402

from rsio_tck.scenarios import load_directory  # noqa: E402
from rsio_tck.selection import select  # noqa: E402


@pytest.mark.parametrize("name", run.IMPLEMENTATIONS)
def test_every_scenario_runs_exactly_once_shared_or_alone(name: str) -> None:
    scenarios = load_directory(binding="rsocket")
    alone = run.isolated(name, scenarios)
    assert "RSFLOW-011" in alone  # the kit's own flood always runs alone
    shared, each = run.selections(list(alone), [s.id for s in scenarios])
    for scenario in scenarios:
        runs = [select(shared, scenario)] + [select(expression, scenario) for expression in each.values()]
        assert sum(runs) == 1, f"{name}: {scenario.id} runs {sum(runs)} times"


def test_isolate_files_parse_their_three_kinds_of_line() -> None:
    scenarios = load_directory(binding="rsocket")
    alone = run.isolated("rsocket-rust", scenarios)
    needing = {s.id for s in scenarios if "tck/infinite" in s.requires}
    assert needing and needing <= set(alone)  # requires:tck/infinite
    assert run.shared_jobs("rsocket-rust") == 1 and run.shared_jobs("rsocket-py") == 4  # jobs:1, the default


def test_baseline_pairs_split_steady_from_flaky_and_report_a_line_without_rule(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "baseline.txt"
    path.write_text("# comment\nA-001 R-1 R-2  # F1\nB-002 R-3 flaky # F2\nC-003  # no rule\n")
    steady, flaky = baselines.baseline_pairs(path)
    assert steady == {("A-001", "R-1"), ("A-001", "R-2")} and flaky == {("B-002", "R-3")}
    assert "C-003 names no rule" in capsys.readouterr().out


def _run_dir(path: Path, results: list[dict[str, object]]) -> Path:
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (path / "run.json").write_text(json.dumps({"finished": "t1", "counts": {}, "scenarios": len(results)}))
    return path


def test_compare_pairs_names_new_failures_and_xpasses_but_lets_flaky_pairs_go_either_way(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "baseline.txt"
    path.write_text("A-001 R-1  # F1\nB-002 R-3 flaky # F2\n")
    failing = {"verdict": "xfail", "violations": [{"rule": "R-1"}]}
    same = _run_dir(tmp_path / "same", [{"id": "A-001", **failing}, {"id": "B-002", "verdict": "pass"}])
    assert not baselines.compare_pairs(path, "impl", "server", same)
    changed = _run_dir(tmp_path / "changed", [{"id": "A-001", "verdict": "pass"},
                                              {"id": "D-004", "verdict": "fail", "violations": [{"rule": "R-9"}]}])
    assert baselines.compare_pairs(path, "impl", "server", changed)
    out = capsys.readouterr().out
    assert "NEW D-004 R-9" in out and "XPASS A-001 R-1" in out
    # ... and both are kept for the run's closing summary (CI shows only the output's tail).
    assert [line for line in processes.DIFFERENCES if "impl as server" in line][-2:] == [
        "impl as server: NEW D-004 R-9 (triage: FINDINGS.md, or fix the kit)",
        "impl as server: XPASS A-001 R-1 (remove its baseline line)"]
    # A client role sees only the CLIENT- lines, a server role none of them.
    assert not baselines.compare_pairs(path, "impl", "client", _run_dir(tmp_path / "client", []))


def test_merge_run_appends_results_moves_files_and_recounts(tmp_path: Path) -> None:
    shared = _run_dir(tmp_path / "shared", [{"id": "A", "verdict": "pass"}])
    part = _run_dir(tmp_path / "part", [{"id": "B", "verdict": "fail"}])
    (part / "transcripts").mkdir()
    (part / "transcripts" / "B.txt").write_text("B")
    run.merge_run(shared, part)
    meta = json.loads((shared / "run.json").read_text())
    assert meta["counts"] == {"pass": 1, "fail": 1} and meta["scenarios"] == 2
    assert (shared / "transcripts" / "B.txt").read_text() == "B"
    assert run.run_dir(tmp_path) is not None


def test_a_part_whose_kit_was_stopped_by_its_time_out_is_merged_without_a_traceback(tmp_path: Path) -> None:
    # The kit killed at interop's time-out has written results.jsonl but not yet run.json.
    shared = _run_dir(tmp_path / "shared", [{"id": "A", "verdict": "pass"}])
    before = json.loads((shared / "run.json").read_text())["finished"]
    part = _run_dir(tmp_path / "part", [{"id": "B", "verdict": "fail"}])
    (part / "run.json").unlink()
    run.merge_run(shared, part)
    meta = json.loads((shared / "run.json").read_text())
    assert meta["counts"] == {"pass": 1, "fail": 1} and meta["finished"] == before


def test_the_matrix_baseline_reads_known_and_flaky_cells() -> None:
    known, flaky = baselines.read_matrix_baseline(ROOT / "interop" / "matrix-baseline.txt")
    assert "rsocket-py rsocket-go channel-echo" in known and "rsocket-go rsocket-rust cancel-infinite" in flaky
    names = set(run.IMPLEMENTATIONS)
    cases = {c["name"] for c in json.loads((ROOT / "interop" / "testcases.json").read_text())["testcases"]}
    for cell in known | flaky:
        client, server, case = cell.split()
        assert {client, server} <= names and case in cases, cell


def test_a_side_is_unjudged_after_the_other_sides_undecodable_frame() -> None:
    findings = [{"side": "client", "frame": None, "level": "MUST", "rule": "RS-FRAME-1", "t": 1.5},
                {"side": "server", "frame": 3, "level": "MUST", "rule": "RS-STREAM-2", "t": 2.0},
                {"side": "client", "frame": None, "level": "MUST", "rule": "RS-FRAME-8", "t": 0.5}]
    # The client's undecodable frame blinds the judge to the server from then on; a transport that ended inside a
    # frame (RS-FRAME-8) hides nothing after it.
    assert grid.blind_from(findings) == {"server": 1.5}


def test_fresh_removes_only_what_the_coming_steps_write(tmp_path: Path) -> None:
    for part in ("server/rsocket-py", "client/rsocket-py", "isolated/rsocket-py", "server/rsocket-go", "logs"):
        (tmp_path / part).mkdir(parents=True)
    run.fresh(tmp_path, ["rsocket-py"], ["server", "client"])
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("*/*")) == ["server/rsocket-go"]


def test_the_grid_is_written_in_a_fixed_order_whatever_order_its_pairs_finished_in(tmp_path: Path) -> None:
    names = ["rsocket-py", "rsocket-rust"]
    assert grid.pairs_of(names)[0][1] == "rsocket-rust"  # the flooding server's pairs start first
    done = {pair: [{"client": pair[0], "server": pair[1], "verdict": "xfail" if pair[1] == "rsocket-rust" else "pass"}]
            for pair in reversed(grid.pairs_of(names))}
    assert grid.write_matrix(names, tmp_path, done) == 0  # an xfail is no difference
    cells = json.loads((tmp_path / "matrix.json").read_text())
    assert [(c["client"], c["server"]) for c in cells] == [
        ("rsocket-py", "rsocket-py"), ("rsocket-rust", "rsocket-py"), ("rsocket-py", "rsocket-rust"),
        ("rsocket-rust", "rsocket-rust")]


def test_the_closing_lines_say_where_the_time_went(monkeypatch: pytest.MonkeyPatch) -> None:
    import timing

    monkeypatch.setattr(timing, "STEPS", {})
    monkeypatch.setattr(timing, "PHASES", {})
    assert timing.timed("rsocket-rust server", lambda: 7) == 7  # the step's own value comes back
    timing.record("rsocket-rust server", 90.0)
    timing.record("rsocket-rust server isolated", 60.0)
    timing.record("rsocket-rust client", 20.0)
    timing.record("grid rsocket-py rsocket-rust", 18.0)
    timing.record("grid rsocket-rust rsocket-py", 4.0)
    timing.record("ditto", 12.0)
    timing.record("builds", 1.0, timing.PHASES)
    timing.record("steps (3 at a time)", 150.0, timing.PHASES)
    lines = timing.summary(["rsocket-rust", "rsocket-py"], 200.0)
    assert lines[0] == "time: builds 1 s; steps (3 at a time) 150 s; total 200 s"
    assert lines[1] == ("time rsocket-rust: server 90 s (its isolated scenarios 60 s), client 20 s, "
                        "grid as server 18 s, as client 4 s (2 pairs)")
    assert lines[2] == "time rsocket-py: grid as server 4 s, as client 18 s (2 pairs)"
    assert lines[3] == "time, other steps: ditto 12 s"
    assert lines[4] == "time: the longest step was rsocket-rust server (90 s); the steps' seconds add up to 144 s"


def test_a_site_is_offered_to_the_publisher_once_its_run_directories_are_written(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import types

    import publish

    for part in ("server/rsocket-py", "client/ditto-client"):
        (tmp_path / part).mkdir(parents=True)
    publishing = run.Publishing(tmp_path, ["rsocket-py", "rsocket-go"], grid_coming=True)
    sent = io.StringIO()
    publishing.process = types.SimpleNamespace(stdin=sent)  # type: ignore[assignment]
    for site in ("server", "client", "ditto"):
        publishing.offer(site)
    lines = [json.loads(line) for line in sent.getvalue().splitlines()]
    # The server site names only the run directories written and the grid to come; no client run, no client site.
    assert lines == [
        {"name": "server", "out": str(tmp_path / "site" / "server"), "runs": [str(tmp_path / "server" / "rsocket-py")],
         "grid": str(tmp_path / "matrix.json")},
        {"name": "ditto", "out": str(tmp_path / "site" / "ditto"), "runs": [str(tmp_path / "client" / "ditto-client")],
         "grid": None}]
    assert publishing.offered == ["server", "ditto"]
    # publish.py takes them until the pages' line, and not past it.
    monkeypatch.setattr(sys, "stdin", io.StringIO(sent.getvalue() + '{"pages": true}\n{"name": "late"}\n'))
    assert [site["name"] for site in publish.sites_from_stdin()] == ["server", "ditto"]
