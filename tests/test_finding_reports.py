"""``rsio-tck report --finding F<n>``: FINDINGS.md entries as bug reports ready to file upstream.

The expectations are read from the repository's own files independently of the package (FINDINGS.md's
sections and fenced transcripts, the interop baselines' first words and F-numbers), so a report that drops
or garbles a fact fails here.  The reproduction of a server finding is run for real: against the embedded
reference peer it passes, and with the peer's fault for the same deviation it fails the finding's rule.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rsio_tck.scenarios.loader import load_paths

from rsio_tck.cli import app  # isort: skip

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ROOT / "FINDINGS.md"
NOT_LIVE = ("Withdrawn", "Never a finding")


def _report(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["report", *args, "--findings", str(FINDINGS)])
    return result.exit_code, result.stdout, result.stderr


def _section(finding: str, text: str | None = None) -> str:
    """The finding's entry in FINDINGS.md, heading to the next heading."""
    text = FINDINGS.read_text(encoding="utf-8") if text is None else text
    match = re.search(rf"^### {finding}\. .*?(?=^#{{2,3}} )", text, re.M | re.S)
    assert match, finding
    return match.group(0)


def _transcript_lines(finding: str) -> list[str]:
    """Every non-blank line of the entry's fenced transcripts, without the bullet's indent."""
    blocks = re.findall(r"^  ```\n(.*?)^  ```", _section(finding), re.M | re.S)
    assert blocks, f"{finding} has no transcript in FINDINGS.md"
    return [line.removeprefix("  ").rstrip() for block in blocks for line in block.splitlines() if line.strip()]


def _cited_scenarios(finding: str) -> set[str]:
    """The first words of the interop baseline lines whose why cites ``finding``."""
    cited = set()
    for path in (ROOT / "interop").glob("*/baseline.txt"):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry, _, why = line.partition("#")
            if entry.split() and finding in re.findall(r"\bF\d+\b", why):
                cited.add(entry.split()[0])
    return cited


def _yaml_block(markdown: str) -> str:
    (block,) = re.findall(r"^```yaml\n(.*?)^```", markdown, re.M | re.S)
    return block


def test_a_server_finding_reads_as_an_issue_with_its_spec_frames_cause_and_a_reproduction(tmp_path: Path) -> None:
    code, report, _ = _report("--finding", "F3")
    assert code == 0
    assert report.startswith("# rsocket-py 0.4.20 sends a zero-length element without the N flag\n")
    for heading in ("## Expected Behavior", "## Actual Behavior", "## Steps to Reproduce", "## Possible Solution",
                    "## Your Environment"):  # the rsocket organisation's issue template
        assert f"\n{heading}\n" in report
    # The spec quote: the entry's **Spec**, Protocol.md lines in upstream's numbering, and SPEC.md's rule.
    assert "a PAYLOAD must carry N, C or both (line [660](" in report
    assert "/Protocol.md?plain=1#L660)" in report
    assert "- **RS-STREAM-1** (MUST, both): A PAYLOAD (once reassembled) has the N flag, the C flag or both." in report
    for line in _transcript_lines("F3"):
        assert line in report, line
    assert "`new_frame_fragment`\n(`rsocket/frame.py` lines 789-812)" not in report  # unwrapped for GitHub
    assert "`new_frame_fragment` (`rsocket/frame.py` lines 789-812) builds a fresh frame" in report
    assert "* RSocket version(s) used: rsocket-py 0.4.20, from PyPI: `rsocket`" in report
    assert "* Conformance kit: rsio-tck 0.1.0" in report
    assert "- `RSFRAG-012` fails RS-STREAM-1, RS-TCK-4" in report
    command = "rsio-tck run --binding rsocket --target tcp://127.0.0.1:7878 --scenarios F3-reproduction.yaml"
    assert command in report
    repro = tmp_path / "F3-reproduction.yaml"
    repro.write_text(_yaml_block(report), encoding="utf-8")
    loaded = load_paths([repro], "rsocket")
    assert {s.id for s in loaded} == _cited_scenarios("F3") == {"RSFRAG-012"}
    (suite,) = [s for s in load_paths([], "rsocket") if s.id == "RSFRAG-012"]
    assert (loaded[0].steps, loaded[0].rules, loaded[0].title) == (suite.steps, suite.rules, suite.title)


def test_the_reproduction_runs_with_rsio_tck_run_and_fails_the_findings_rule_where_the_fault_is(
        tmp_path: Path) -> None:
    _, report, _ = _report("--finding", "F3")
    repro = tmp_path / "F3-reproduction.yaml"
    repro.write_text(_yaml_block(report), encoding="utf-8")

    def run(*fault: str) -> tuple[int, list[dict[str, object]]]:
        out = tmp_path / ("faulty" if fault else "clean")
        result = CliRunner().invoke(app, ["run", "--binding", "rsocket", "--scenarios", str(repro), "--quiet",
                                          "--report-dir", str(out), *fault])
        (results,) = out.glob("*/results.jsonl")
        return result.exit_code, [json.loads(line) for line in results.read_text().splitlines()]

    code, results = run()
    assert code == 0 and [(r["id"], r["verdict"]) for r in results] == [("RSFRAG-012", "pass")]
    code, results = run("--fault", "stream-payload-no-flags")  # the reference peer's PAYLOAD with neither N nor C
    assert code == 1 and [(r["id"], r["verdict"]) for r in results] == [("RSFRAG-012", "fail")]
    assert "RS-STREAM-1" in {v["rule"] for v in results[0]["violations"]}  # type: ignore[union-attr]


def test_a_client_finding_gives_the_listen_command_for_its_client_test_case() -> None:
    code, report, _ = _report("--finding", "F41")
    assert code == 0
    assert report.startswith("# rsocket-go v0.8.16 (client) loses the completion carried by the last fragment")
    assert "Fragmentation And Reassembly › PAYLOAD Frame (Protocol.md lines [942-989](" in report
    for line in _transcript_lines("F41"):
        assert line in report, line
    assert "`internal/fragmentation/joiner.go` lines 43-45" in report
    assert _cited_scenarios("F41") == {"CLIENT-rsocket-large-fragmented"}
    assert ("rsio-tck run --binding rsocket --listen tcp://127.0.0.1:0 --client-command interop/rsocket-go/client "
            "--client-test large-fragmented") in report
    assert "`CLIENT-rsocket-large-fragmented` failed: RS-FRAG-1" in report
    # The catalogue has no rule for the receiver's reassembly: RS-FRAG-1 is what the kit reports, not the rule.
    assert "The kit's catalogue has no rule for this yet; its run reports it as:\n\n- **RS-FRAG-1**" in report
    assert "```yaml" not in report and "* Role of rsocket-go: client" in report


def test_a_finding_seen_only_in_the_grid_names_its_cells_and_the_proxy_that_reproduces_one() -> None:
    code, report, _ = _report("--finding", "F7")
    assert code == 0 and _cited_scenarios("F7") == set()
    assert "N with C means an element followed by completion" in report
    for line in _transcript_lines("F7"):
        assert line in report, line
    assert "`internal/socket/duplex.go` lines 953-961" in report
    cells = [line.split() for line in (ROOT / "interop" / "matrix-baseline.txt").read_text().splitlines()
             if re.search(r"#\s*F7\b", line)]
    assert len(cells) == 5
    for client, server, case, *_ in cells:
        assert f"| {client} | {server} | `{case}` |" in report
    assert "rsio-tck proxy --binding rsocket --listen tcp://127.0.0.1:7879 --target tcp://127.0.0.1:7878" in report
    assert "RSIO_URL=tcp://127.0.0.1:7879 RSIO_TESTCASE=channel-echo interop/rsocket-py/client" in report
    assert "* Role of rsocket-go: server" in report and "```yaml" not in report


def test_an_entry_that_says_as_f13_brings_f13s_spec_and_names_it_at_the_end() -> None:
    _, report, _ = _report("--finding", "F45")
    assert "As F13, the same sentences in its entry (rsocket-py 0.4.20 ignores a request N of 0):" in report
    assert "> REQUEST_STREAM Frame and REQUEST_N Frame (Protocol.md lines [527-552](" in report
    assert "- **RS-d. Request N = 0.**" in report  # the kit decision the finding rests on
    assert "- F13: rsocket-py 0.4.20 ignores a request N of 0 — RS-FLOW-3 (SHOULD)" in report
    assert "exit code 0 with a warning; 1 with `--strict`" in report  # RS-FLOW-3 is a SHOULD


def test_all_findings_writes_one_report_per_live_finding_and_none_for_withdrawn_ones(tmp_path: Path) -> None:
    text = FINDINGS.read_text(encoding="utf-8")
    headings = re.findall(r"^### (F\d+)\. (.*)$", text, re.M)
    live = {number for number, title in headings if not title.startswith(NOT_LIVE)}
    assert {"F6", "F52", "F53", "F55"} == {number for number, _ in headings} - live
    code, stdout, _ = _report("--all-findings", "--out-dir", str(tmp_path / "reports"))
    assert code == 0, stdout
    assert "not live, no report: F6, F52, F53, F55" in stdout
    written = {p.stem for p in (tmp_path / "reports").glob("*.md")}
    assert written == live
    for number in sorted(live):
        cited = {s for s in _cited_scenarios(number) if not s.startswith("CLIENT-")}
        repro = tmp_path / "reports" / f"{number}-reproduction.yaml"
        assert repro.exists() == bool(cited), number
        if cited:
            assert {s.id for s in load_paths([repro], "rsocket")} == cited, number
            report = (tmp_path / "reports" / f"{number}.md").read_text(encoding="utf-8")
            assert _yaml_block(report) == repro.read_text(encoding="utf-8"), number


def test_out_writes_the_report_and_its_scenario_file_beside_it(tmp_path: Path) -> None:
    code, stdout, _ = _report("--finding", "f3", "--out", str(tmp_path / "issue.md"))
    assert code == 0
    assert stdout.splitlines() == [f"wrote {tmp_path / 'issue.md'}", f"wrote {tmp_path / 'F3-reproduction.yaml'}"]
    assert (tmp_path / "issue.md").read_text().startswith("# rsocket-py 0.4.20")


@pytest.mark.parametrize(("args", "message"), [
    (["--finding", "F999"], "error: {findings} has no finding F999 (it has F1 to F{last})"),
    (["--finding", "F6"], "error: {findings}:{f6}: F6 is not a live finding (Withdrawn): there is nothing to report"),
    (["--finding", "seven"], "error: --finding 'seven': not a finding id (F1, F2, ...)"),
    (["--all-findings"], "error: --all-findings needs --out-dir DIR"),
    (["--finding", "F3", "--all-findings"], "error: --finding and --all-findings exclude each other"),
    (["--out-dir", "x"], "error: --out-dir needs --finding F<n> or --all-findings"),
    (["--finding", "F3", "--out-dir", "x"], "error: --finding writes one report: give --out FILE (or nothing, for "
                                            "stdout), not --out-dir"),
    (["reports", "--finding", "F3"], "error: RUN_DIR reports and --finding/--all-findings exclude each other: a "
                                     "run's report, or bug reports"),
])
def test_bad_requests_are_one_line_errors_with_exit_code_2(args: list[str], message: str) -> None:
    text = FINDINGS.read_text(encoding="utf-8")
    numbers = [int(n) for n in re.findall(r"^### F(\d+)\. ", text, re.M)]
    expected = message.format(findings=FINDINGS, last=max(numbers), f6=text[:text.index("### F6. ")].count("\n") + 1)
    result = CliRunner().invoke(app, ["report", *args, "--findings", str(FINDINGS)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [expected]


def test_a_malformed_entry_is_a_one_line_error_naming_the_finding(tmp_path: Path) -> None:
    text = FINDINGS.read_text(encoding="utf-8")
    entry = _section("F7", text)
    observed = re.search(r"^- \*\*Observed\*\*.*?(?=^- \*\*)", entry, re.M | re.S)
    assert observed
    (tmp_path / "FINDINGS.md").write_text(text.replace(entry, entry.replace(observed.group(0), "")), encoding="utf-8")
    (tmp_path / "interop").symlink_to(ROOT / "interop")
    line = text[:text.index("### F7. ")].count("\n") + 1
    expected = f"error: {tmp_path / 'FINDINGS.md'}:{line}: F7 has no **Observed** bullet; a report needs it"
    for args in (["--finding", "F7"], ["--all-findings", "--out-dir", str(tmp_path / "out")]):
        result = CliRunner().invoke(app, ["report", *args, "--findings", str(tmp_path / "FINDINGS.md")])
        assert result.exit_code == 2 and result.stderr.splitlines() == [expected], result.output
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())  # nothing half-written


def test_findings_md_missing_or_without_its_interop_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", "--finding", "F3", "--findings", str(tmp_path / "FINDINGS.md")])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: --findings {tmp_path / 'FINDINGS.md'}: no such")
    shutil.copy(FINDINGS, tmp_path / "FINDINGS.md")
    result = CliRunner().invoke(app, ["report", "--finding", "F3", "--findings", str(tmp_path / "FINDINGS.md")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {tmp_path / 'FINDINGS.md'}: no interop/ folder beside it, where the baselines " \
                            "that reproduce the findings are\n"


def test_protocol_md_lines_are_linked_in_upstreams_numbering() -> None:
    from rsio_tck.bindings.rsocket.bug_report import PROTOCOL_URL, link_protocol_lines

    # The kit's reference copy of Protocol.md has a provenance line first: its line 1252 is upstream's 1251.
    assert link_protocol_lines("Handling the Unexpected (line 1252)") == \
        f"Handling the Unexpected (line [1251]({PROTOCOL_URL}?plain=1#L1251))"
    assert link_protocol_lines("lines 528-553, 588-606") == \
        f"lines [527-552]({PROTOCOL_URL}?plain=1#L527-L552), [587-605]({PROTOCOL_URL}?plain=1#L587-L605)"


def test_a_findings_binding_is_the_one_its_implementations_baseline_lines_belong_to() -> None:
    from rsio_tck.findings.entries import FindingsError
    from rsio_tck.findings.report import implementation_binding
    from rsio_tck.findings.sources import read_sources

    sources = read_sources(FINDINGS)
    assert {implementation_binding(sources, entry.implementation) for entry in sources.findings.live()} == {"rsocket"}
    with pytest.raises(FindingsError, match="tell no one binding"):
        implementation_binding(sources, "no-such-implementation")
