"""A failing verdict cites the rule the target really broke, and no rule the kit's own reaction made look broken.

Once the target's bytes break a MUST rule where the kit reads them (a line over the kit's configured maximum:
DITTO-LINE-1, on TCP by the line decoder, over WebSocket on the message's frames), the verdict is certain: the
kit stops reading, and what the scenario's steps then miss (the ``created`` that could not come through a
connection the kit stopped reading), or what the target owed when the kit failed its WebSocket, is not charged
as a second rule broken (before: DITTO-TCK-2 "expected created; got nothing (the connection ended)" beside
DITTO-LINE-1, and over WebSocket DITTO-SUB-1 for the close the kit made).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_target import HostileTarget
from typer.testing import CliRunner

from rsio_tck.cli import app
from rsio_tck.gate import ExitCode


@pytest.mark.parametrize("transport", ["tcp", "ws"])
def test_a_line_over_the_kits_maximum_fails_citing_only_the_line_rule(transport: str, tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    with HostileTarget("ditto", "endless-line", transport, max_seconds=60) as url:
        result = CliRunner().invoke(app, ["run", "--binding", "ditto", "--target", url, "-k", "DITTO-014",
                                          "--report-dir", str(reports), "--quiet"])
    assert result.exit_code == int(ExitCode.FAILED), result.output
    (run_dir,) = reports.iterdir()
    (entry,) = map(json.loads, (run_dir / "results.jsonl").read_text().splitlines())
    assert entry["verdict"] == "fail", entry
    assert [v["rule"] for v in entry["violations"]] == ["DITTO-LINE-1"], entry["violations"]
    assert entry["truncated"]["steps"].endswith("the target broke DITTO-LINE-1, so the verdict was certain"), entry


def test_an_answer_to_an_ignored_frame_that_comes_after_the_barrier_is_still_that_rule() -> None:
    """RSERR-004: a target that answers the frame it must ignore (I flag, invalid metadata length) with an
    ERROR on its stream, but writes that ERROR after its answer to the kit's KEEPALIVE barrier (rsocket-go
    does, from its responder task: FINDINGS F33).  The silence step has ended by then, so the monitor judges
    the ERROR: RS-IGNORE-2 (the stream was never opened), and nothing else.  Before, the kit's next request
    reused stream 1, and the late ERROR was taken for that request's answer (RS-TCK-1, RS-STREAM-3)."""
    from rsio_tck.scenarios import Verdict, load_directory
    from rsio_tck.selfcheck import run_against_peer

    scenarios = [s for s in load_directory(binding="rsocket") if s.id == "RSERR-004"]
    (result,) = run_against_peer(scenarios, binding="rsocket", faults=("ignore-bad-metadata-answered-late",), jobs=1)
    assert result.verdict is Verdict.FAIL, result.explain()
    assert sorted({v["rule"] for v in result.violations}) == ["RS-IGNORE-2"], result.explain()
    (clean,) = run_against_peer(scenarios, binding="rsocket", jobs=1)
    assert clean.verdict is Verdict.PASS, clean.explain()
