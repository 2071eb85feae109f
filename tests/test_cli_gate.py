"""The kit as a CI gate: every command fed bad files and bad flags, from one table.

Each bad case must exit with the code of the exit-code table of ``--help`` and docs/guide/exit-codes.md
(2: usage or input, 3: target unreachable) and say what is wrong in one line naming the file or the
flag, never with a traceback.  The good paths (0, 1, and 3 when every scenario
errors) run against the embedded reference peer or a local socket, on a few
scenarios only.
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap
from typer.main import get_command
from typer.testing import CliRunner

from rsio_tck import __version__
from rsio_tck.bindings.rsio.wire import get_codec
from rsio_tck.bindings.rsio.wire.frames import ClientHello, OnNext, ServerHello
from rsio_tck.errors import Side
from rsio_tck.gate import ExitCode, show_failures, suite_outcome
from rsio_tck.monitor.trace import TraceRecord, write_trace
from rsio_tck.report.pcap import write_pcap
from rsio_tck.scenarios import ScenarioResult, Verdict
from rsio_tck.scenarios.loader import default_directory

from rsio_tck.cli import app  # isort: skip

C, S = Side.CLIENT, Side.SERVER


def _trace(path: Path, violating: bool) -> Path:
    """A clean handshake; with ``violating``, then an onNext for an Id nobody subscribed (STR rules)."""
    encoder = {side: get_codec("msgpack").encoder(None) for side in Side}
    frames: list[tuple[Side, Any]] = [(C, ClientHello(version=0)), (S, ServerHello(version=0))]
    if violating:
        frames.append((S, OnNext(subscriber=5, element=b"\x01")))
    records = [TraceRecord(t=0.001 * i, sender=side, data=encoder[side].encode(frame))
               for i, (side, frame) in enumerate(frames)]
    with path.open("wb") as stream:
        write_trace(stream, records)
    return path


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every bad (and a few good) input files the table refers to as {name}."""
    root = tmp_path_factory.mktemp("gate")
    out: dict[str, Path] = {}

    def write(name: str, content: str | bytes) -> None:
        path = root / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        out[name.replace(".", "_").replace("-", "_")] = path

    write("caps-key.json", json.dumps({"rsio_capabilities": 1, "publisher": ["tck/range"]}))
    write("caps-token.json", json.dumps({"rsio_capabilities": 1, "publishers": ["tck/rnge"]}))
    write("caps-version.json", json.dumps({"rsio_capabilities": 2}))
    write("caps-broken.json", "{not json")
    write("caps-key.yaml", "rsio_capabilities: 1\nfeature: [pack]\n")
    write("caps-nothing.json", json.dumps({"rsio_capabilities": 1, "codecs": ["msgpack"], "publishers": []}))
    write("baseline-unknown.txt", "HS-003  # known to fail\nNO-SUCH-SCENARIO  # a typo\n")
    write("bad-scenario.yaml", "- id: HS-901\n  title: a scenario citing a rule SPEC.md does not have\n"
          "  rules: [HS-99]\n  level: MUST\n  steps:\n    - send: {clientHello: {version: 0, extensions: []}}\n")
    write("binary.yaml", b"\xff\xfe\x00garbage")
    write("ext.trace", b"\xd4\x90\x00")  # fixext 1 with ext code 144: msgpack's "code must be 0~127"
    write("utf.trace", b"\x81\xa2\xff\xfe\x01")  # a map key that is not UTF-8
    write("text.trace", b"hello, world\n")
    write("record.trace", b"\x81\xa3dir\xa3c2s")  # a map without t
    write("not.pcap", b"not a capture at all")
    (root / "empty-dir").mkdir()
    out["empty_dir"] = root / "empty-dir"
    (root / "yml-dir").mkdir()
    (root / "yml-dir" / "notes.txt").write_text("no scenarios here\n")
    out["txt_dir"] = root / "yml-dir"
    (root / "not-a-run").mkdir()
    (root / "not-a-run" / "something.txt").write_text("x")
    out["not_a_run"] = root / "not-a-run"
    (root / "broken-run").mkdir()
    (root / "broken-run" / "run.json").write_text("{oops")
    out["broken_run"] = root / "broken-run"
    (root / "foreign-run").mkdir()
    (root / "foreign-run" / "run.json").write_text(json.dumps({"schema": "someone-else/v9"}))
    (root / "foreign-run" / "results.jsonl").write_text(json.dumps({"id": "X-001"}) + "\n")
    out["foreign_run"] = root / "foreign-run"
    out["clean_trace"] = _trace(root / "clean.trace", violating=False)
    out["violating_trace"] = _trace(root / "violating.trace", violating=True)
    udp = root / "udp.pcap"
    wrpcap(str(udp), [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP() / UDP()])
    out["udp_pcap"] = udp
    out["missing"] = root / "does-not-exist"
    out["hs_yaml"] = default_directory() / "hs.yaml"  # a small suite, for cases that load scenarios
    out["reports"] = root / "reports"
    return {**{key: str(value) for key, value in out.items()}, "closed": f"tcp://127.0.0.1:{_closed_port()}"}


# (case, arguments with {file} placeholders, exit code, what the one line must say)
BAD = [
    ("run: -k matching nothing", ["run", "--scenarios", "{hs_yaml}", "-k", "no-such-scenario"], 2, "-k 'no-such-scenario' matches none"),
    ("run: unknown codec (embedded peer)", ["run", "--codec", "foo"], 2, "--codec 'foo': unknown codec"),
    ("run: unknown codec (target)", ["run", "--codec", "foo", "--target", "{closed}"], 2, "--codec 'foo'"),
    ("run: capabilities, misspelled key", ["run", "--capabilities", "{caps_key_json}"], 2,
     "caps-key.json: unknown key 'publisher' (did you mean 'publishers'?)"),
    ("run: capabilities, YAML misspelled key", ["run", "--capabilities", "{caps_key_yaml}"], 2,
     "caps-key.yaml: unknown key 'feature'"),
    ("run: capabilities, unknown token", ["run", "--capabilities", "{caps_token_json}"], 2,
     "caps-token.json: publishers[0]: unknown token 'tck/rnge'"),
    ("run: capabilities, wrong version", ["run", "--capabilities", "{caps_version_json}"], 2,
     "caps-version.json: rsio_capabilities: must be 1"),
    ("run: capabilities, not JSON", ["run", "--capabilities", "{caps_broken_json}"], 2, "caps-broken.json: not valid JSON"),
    ("run: capabilities, missing", ["run", "--capabilities", "{missing}"], 2, "does-not-exist: No such file"),
    ("run: baseline missing", ["run", "--baseline", "{missing}"], 2, "baseline {missing}: No such file"),
    ("run: baseline entry unknown, --strict",
     ["run", "--scenarios", "{hs_yaml}", "--strict", "--baseline", "{baseline_unknown_txt}"], 2,
     "1 entry naming no known scenario: NO-SUCH-SCENARIO"),
    ("run: scenarios path missing", ["run", "--scenarios", "{missing}"], 2, "--scenarios {missing}: no such file"),
    ("run: scenarios dir without yaml", ["run", "--scenarios", "{txt_dir}"], 2, "no scenario files (*.yaml, *.yml)"),
    ("run: scenarios dir empty", ["run", "--scenarios", "{empty_dir}"], 2, "no scenario files"),
    ("run: scenario file invalid", ["run", "--scenarios", "{bad_scenario_yaml}"], 2,
     "bad-scenario.yaml:1: [0].rules: unknown rule ID(s) HS-99"),
    ("run: scenario file not UTF-8", ["run", "--scenarios", "{binary_yaml}"], 2, "binary.yaml: cannot read"),
    ("run: target without port", ["run", "--target", "tcp://127.0.0.1"], 2, "--target tcp://127.0.0.1: give host and port"),
    ("run: target scheme", ["run", "--target", "http://127.0.0.1:80"], 2, "the scheme must be"),
    ("run: target bad port", ["run", "--target", "tcp://127.0.0.1:99999"], 2, "--target"),
    ("run: target unreachable", ["run", "--target", "{closed}"], 3, "cannot reach {closed}"),
    ("run: unknown fault", ["run", "--fault", "no-such-fault"], 2, "--fault 'no-such-fault': no such fault"),
    ("run: fault with a target", ["run", "--fault", "dem-beyond-demand", "--target", "{closed}"], 2,
     "--fault works only with the embedded reference peer"),
    ("run: jobs 0", ["run", "--jobs", "0"], 2, "Invalid value for '--jobs'"),
    ("run: unknown flag", ["run", "--no-such-flag"], 2, "No such option: --no-such-flag"),
    ("check-trace: ext code out of range", ["check-trace", "{ext_trace}"], 2, "ext.trace: trace record 0 is not valid"),
    ("check-trace: not UTF-8", ["check-trace", "{utf_trace}"], 2, "utf.trace: trace record 0 is not valid MessagePack"),
    ("check-trace: text", ["check-trace", "{text_trace}"], 2, "text.trace: trace record 0 is not a {{t, dir, bytes|eof}}"),
    ("check-trace: record without t", ["check-trace", "{record_trace}"], 2, "record.trace: trace record 0"),
    ("check-trace: missing", ["check-trace", "{missing}"], 2, "does-not-exist: No such file"),
    ("check-trace: a directory", ["check-trace", "{empty_dir}"], 2, "empty-dir: Is a directory"),
    ("check-trace: unknown codec", ["check-trace", "{clean_trace}", "--codec", "foo"], 2, "--codec 'foo'"),
    ("check-pcap: missing", ["check-pcap", "{missing}"], 2, "does-not-exist: no such file"),
    ("check-pcap: not a capture", ["check-pcap", "{not_pcap}"], 2, "not.pcap: not a capture scapy can read"),
    ("check-pcap: no TCP connection", ["check-pcap", "{udp_pcap}"], 2, "udp.pcap: no TCP connection to judge"),
    ("check-pcap: unknown codec", ["check-pcap", "{udp_pcap}", "--codec", "foo"], 2, "--codec 'foo'"),
    ("report: missing", ["report", "{missing}"], 2, "does-not-exist: not a directory"),
    ("report: not a run directory", ["report", "{not_a_run}"], 2, "not-a-run: not a run directory"),
    ("report: broken run.json", ["report", "{broken_run}"], 2, "run.json: not valid JSON"),
    ("report: run files breaking their schemas", ["report", "{foreign_run}"], 2,
     "foreign-run: 22 schema problem(s) in its files; no report written"),
    ("fuzz: unknown codec", ["fuzz", "--codec", "foo"], 2, "--codec 'foo'"),
    ("fuzz: target unreachable", ["fuzz", "--target", "{closed}"], 3, "cannot reach {closed}"),
    ("fuzz: target malformed", ["fuzz", "--target", "tcp://:1"], 2, "--target tcp://:1"),
    ("fuzz: unknown fault", ["fuzz", "--fault", "nope"], 2, "--fault 'nope'"),
    ("fuzz: zero examples", ["fuzz", "--examples", "0"], 2, "Invalid value for '--examples'"),
    ("publish: missing path", ["publish", "{missing}"], 2, "does-not-exist: no such file or directory"),
    ("publish: no run directory", ["publish", "{empty_dir}"], 2, "no run directory"),
    ("pipeline: no run directory", ["pipeline", "{not_a_run}"], 2, "no run directory"),
]


@pytest.mark.parametrize(("args", "code", "says"), [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_bad_input_is_one_line_and_its_exit_code(files: dict[str, str], args: list[str], code: int, says: str) -> None:
    argv = [a.format(**files) for a in args]
    if argv[0] in ("run", "fuzz"):
        argv += ["--report-dir", files["reports"], "--quiet"]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    errors = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("schema: ")]
    said = [line for line in errors if line.startswith(("error:", "Error:", "Error "))]
    assert len(said) == 1, result.stderr  # one line says what is wrong ...
    assert says.format(**files) in said[0], said[0]  # ... and names the file or flag
    if "Usage:" not in result.stderr:  # typer's parser adds its usage lines; the kit's own errors are one line
        assert errors == said, result.stderr
    assert not Path(files["reports"]).exists()  # refused before a run directory was made


def test_report_on_a_non_run_directory_writes_nothing(files: dict[str, str]) -> None:
    for name in ("not_a_run", "foreign_run", "broken_run"):
        before = sorted(p.name for p in Path(files[name]).iterdir())
        assert CliRunner().invoke(app, ["report", files[name]]).exit_code == 2
        assert sorted(p.name for p in Path(files[name]).iterdir()) == before  # no report/


def test_publish_without_pyspark_says_how_to_install_it(files: dict[str, str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspark" else real(name, *a))
    result = CliRunner().invoke(app, ["publish", str(run), "--out", str(tmp_path / "site")])
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: the pipeline needs PySpark: pip install 'rsio-tck[pipeline]'"


def test_check_trace_exit_codes_and_the_file_named(files: dict[str, str]) -> None:
    clean = CliRunner().invoke(app, ["check-trace", files["clean_trace"]])
    assert clean.exit_code == 0, clean.output
    assert clean.stdout.splitlines()[-1] == f"{files['clean_trace']}: 2 frames, 0 violations, 0 warnings"
    violating = CliRunner().invoke(app, ["check-trace", files["violating_trace"]])
    assert violating.exit_code == 1, violating.output
    assert violating.stdout.splitlines()[-1].startswith(f"{files['violating_trace']}: 3 frames, 1 violations")


def test_check_pcap_exit_codes(files: dict[str, str], tmp_path: Path) -> None:
    from rsio_tck.monitor.trace import read_trace

    for name, code in (("clean_trace", 0), ("violating_trace", 1)):
        pcap = tmp_path / f"{name}.pcap"
        write_pcap(pcap, list(read_trace(Path(files[name]))), server_port=7878, base=0.0, client_port=40000)
        result = CliRunner().invoke(app, ["check-pcap", str(pcap)])
        assert result.exit_code == code, result.output
        assert f"{pcap}: 1 connection(s) judged" in result.stdout


# --- run: the good paths, against the embedded reference peer -------------------------------------------------


def _run(tmp_path: Path, *args: str) -> Any:
    """rsio-tck run on the handshake scenarios only (loading all of them costs seconds on a busy machine)."""
    suite = [] if "--scenarios" in args else ["--scenarios", str(default_directory() / "hs.yaml")]
    return CliRunner().invoke(app, ["run", "--report-dir", str(tmp_path / "reports"), "--quiet", *suite, *args])


def test_run_exit_0_results_line_on_stdout_and_unknown_baseline_warns(files: dict[str, str], tmp_path: Path) -> None:
    result = _run(tmp_path, "-k", "HS-001 or HS-002", "--baseline", files["baseline_unknown_txt"])
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "reports").iterdir()
    assert f"results: {run_dir / 'results.jsonl'}  report: {run_dir / 'report' / 'index.html'}" in result.stdout
    assert "results:" not in result.stderr
    assert "warning: baseline" in result.stderr and "NO-SUCH-SCENARIO" in result.stderr


def test_report_leaves_out_a_half_last_line_of_results_and_says_so(tmp_path: Path) -> None:
    # A run directory whose writer was killed in the middle of a line (an older kit wrote lines in pieces):
    # the whole lines before it are results; the half line is left out, said in one note, not a refusal.
    assert _run(tmp_path, "-k", "HS-001 or HS-002").exit_code == 0
    (run_dir,) = (tmp_path / "reports").iterdir()
    results = run_dir / "results.jsonl"
    whole = results.read_text()
    results.write_text(whole + whole.splitlines()[0][:57])  # a third line, cut
    result = CliRunner().invoke(app, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert f"note: {results}:3 is half a line (the run was cut while writing it): left out" in result.stderr
    report = json.loads((run_dir / "report" / "report.json").read_text())
    assert len(report["scenarios"]) == 2, report["scenarios"]
    results.write_text(whole.splitlines()[0][:57] + "\n" + whole)  # not the last line: a damaged file, refused
    result = CliRunner().invoke(app, ["report", str(run_dir)])
    assert result.exit_code == 2 and "results.jsonl:1: not valid JSON" in result.output, result.output


def test_run_exit_1_on_a_conformance_failure(tmp_path: Path) -> None:
    result = _run(tmp_path, "--scenarios", str(default_directory() / "dem-contract.yaml"), "-k", "DEM-001",
                  "--fault", "dem-beyond-demand")
    assert result.exit_code == 1, result.output
    assert "DEM-001" in result.stderr and "[fail]" in result.stderr


def test_run_with_every_scenario_skipped_is_loud_and_fails_unless_min_run_0(files: dict[str, str],
                                                                           tmp_path: Path) -> None:
    args = ("--scenarios", str(default_directory() / "dem-contract.yaml"), "-k", "DEM-001 or DEM-002",
            "--capabilities", files["caps_nothing_json"])
    result = _run(tmp_path, *args)
    assert result.exit_code == 2, result.output
    assert "error: NOTHING WAS TESTED: all 2 scenarios skipped" in result.stderr
    allowed = _run(tmp_path, *args, "--min-run", "0")
    assert allowed.exit_code == 0, allowed.output
    assert "warning: NOTHING WAS TESTED" in allowed.stderr
    too_few = _run(tmp_path, "-k", "HS-001", "--min-run", "2")
    assert too_few.exit_code == 2, too_few.output
    assert "only 1 scenario(s) ran (0 skipped); --min-run asks for 2" in too_few.stderr


def test_scenarios_accepts_a_yml_file_and_a_yml_directory(tmp_path: Path) -> None:
    source = (default_directory() / "hs.yaml").read_text()
    directory = tmp_path / "mine"
    directory.mkdir()
    (directory / "hs.yml").write_text(source)
    by_dir = _run(tmp_path, "--scenarios", str(directory), "-k", "HS-001")
    by_file = _run(tmp_path, "--scenarios", str(directory / "hs.yml"), "-k", "HS-001")
    assert by_dir.exit_code == 0 and by_file.exit_code == 0, by_dir.output + by_file.output
    for run_dir in (tmp_path / "reports").iterdir():
        assert [json.loads(line)["id"] for line in (run_dir / "results.jsonl").read_text().splitlines()] == ["HS-001"]


def test_run_exit_3_when_every_scenario_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A target that passes the reachability probe and then refuses every scenario's connection.  The probe is
    # stubbed: a real listener that answers only the probe cannot be made so, since the kernel completes a
    # scenario's connect into the backlog before the listener can close (it is then reset: HS-001 judged that).
    from rsio_tck import gate

    monkeypatch.setattr(gate, "reach_target", lambda *args, **kwargs: None)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed when the run starts: nothing listens there
    result = _run(tmp_path, "--target", f"tcp://127.0.0.1:{port}", "-k", "HS-001 or HS-002 or HS-003")
    assert result.exit_code == 3, result.output
    said = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(said) == 1 and said[0].startswith("error: every scenario that ran errored (3): cannot reach"), said
    assert "results:" in result.stdout  # the run directory still records what happened


# --- the exit-code decision and the failure listing, on made-up results -----------------------------------------


def _result(verdict: Verdict, number: int = 0, reason: str = "") -> ScenarioResult:
    return ScenarioResult(id=f"X-{number:03d}", title="made up", rules=("HS-1",), level="MUST", verdict=verdict,
                          reason=reason)


@pytest.mark.parametrize(("verdicts", "min_run", "code"), [
    (["pass", "pass", "skip"], 1, ExitCode.OK),
    (["pass", "warn", "xfail"], 3, ExitCode.OK),
    (["pass", "fail"], 1, ExitCode.FAILED),
    (["pass", "xpass"], 1, ExitCode.FAILED),
    (["pass", "error"], 1, ExitCode.FAILED),
    (["error", "error", "skip"], 1, ExitCode.UNRUNNABLE),
    (["skip", "skip"], 1, ExitCode.USAGE),
    (["skip", "skip"], 0, ExitCode.OK),
    (["pass", "skip"], 2, ExitCode.USAGE),
    ([], 1, ExitCode.USAGE),
])
def test_suite_outcome_maps_verdicts_to_the_exit_code_table(verdicts: list[str], min_run: int, code: ExitCode) -> None:
    results = [_result(Verdict(v), i, reason="why") for i, v in enumerate(verdicts)]
    assert suite_outcome(results, min_run).code is code


def test_failures_past_the_limit_are_counted_and_pointed_at_without_wrapping(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rsio_tck import gate

    monkeypatch.delenv("COLUMNS", raising=False)
    out = gate.console(stderr=False)  # under pytest, stdout is not a terminal: as in a CI log
    out.file = io.StringIO()
    failed = [_result(Verdict.FAIL, i, reason="broken") for i in range(23)]
    path = Path("/a/very/long/path/that/goes/on/and/on/past/eighty/columns/of/a/terminal/and/then/some/more/"
                "reports/20261123T013000123Z/results.jsonl")
    show_failures(out, failed, path)
    text = out.file.getvalue()
    assert "X-019" in text and "X-020" not in text
    assert text.rstrip().splitlines()[-1] == f"and 3 more failures (see {path})"  # one line, not cut at 80


# --- help, version ----------------------------------------------------------------------------------------------


def test_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith(f"rsio-tck {__version__}")


def test_help_has_no_type_markers_every_option_has_help_and_the_exit_codes() -> None:
    group = get_command(app)
    commands = group.commands  # type: ignore[attr-defined]
    assert {"run", "fuzz", "check-trace", "check-pcap", "report", "publish"} <= set(commands)
    for name, command in commands.items():
        for param in command.params:
            assert getattr(param, "help", None), f"rsio-tck {name}: {param.name} has no help text"
        text = CliRunner().invoke(app, [name, "--help"]).stdout
        assert not re.search(r"<(bool|str|int|float|path|list\[[^\]]*\]|Path)>", text), f"rsio-tck {name} --help:\n{text}"
        assert "Exit codes:" in text and "3  the kit could not run the target" in text, name
    top = CliRunner().invoke(app, ["--help"]).stdout
    assert "Exit codes:" in top and "<bool>" not in top


def test_the_capabilities_schema_names_the_tokens_the_kit_knows() -> None:
    from rsio_tck.bindings.rsio.binding import CODECS, FEATURES, PUBLISHERS
    from rsio_tck.capabilities import Capabilities, schema

    properties = schema()["properties"]
    assert tuple(properties["publishers"]["items"]["enum"]) == PUBLISHERS
    assert tuple(properties["features"]["items"]["enum"]) == FEATURES
    assert tuple(properties["codecs"]["items"]["enum"]) == CODECS
    shipped = Path(__file__).resolve().parents[1] / "reference_peer" / "rsio" / "capabilities.json"
    assert Capabilities.load(shipped).tokens == Capabilities.everything().tokens


def test_report_rule_links_use_the_spec_shipped_in_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import resources

    from rsio_tck.report.html import spec_url

    monkeypatch.delenv("RSIO_SPEC_URL", raising=False)
    shipped = Path(str(resources.files("rsio_tck").joinpath("SPEC.md")))
    assert spec_url() == shipped.resolve().as_uri()
    monkeypatch.setenv("RSIO_SPEC_URL", "https://example.invalid/SPEC.md")
    assert spec_url() == "https://example.invalid/SPEC.md"
