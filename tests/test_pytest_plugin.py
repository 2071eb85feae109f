"""The pytest plugin, driven through pytester against the embedded reference peer."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from rsio_tck.embedded import EmbeddedPeer

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def peer_url() -> object:
    with EmbeddedPeer() as url:
        yield url


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # A subprocess per run: each inner session owns its event loops and its embedded peer,
    # as a user's pytest process does (in-process re-runs share asyncio's C-level state).
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", *args, timeout=120)


def test_scenarios_are_items_named_by_id_and_pass(pytester: pytest.Pytester, peer_url: str) -> None:
    result = _run(pytester, "--rsio-target", peer_url, "-k", "DEM-001 or HS-002")
    result.assert_outcomes(passed=2)


def test_markers_select_by_area_and_rule(pytester: pytest.Pytester, peer_url: str) -> None:
    result = _run(pytester, "--rsio-target", peer_url, "-m", "rule_DEM_4", "--collect-only")
    result.stdout.fnmatch_lines(["*DEM-005*"])
    assert "HS-001" not in result.stdout.str()


def test_ini_options_are_twins_of_the_command_line(pytester: pytest.Pytester) -> None:
    # DEM-010 runs only over varint, so the ini's codec must reach both the kit and the target.
    with EmbeddedPeer(codec="varint") as varint_url:
        pytester.makeini(f"[pytest]\nrsio_target = {varint_url}\nrsio_codec = varint\n")
        result = _run(pytester, "-k", "DEM-010")
    result.assert_outcomes(passed=1)


def test_a_missing_capability_skips_with_its_name(pytester: pytest.Pytester, peer_url: str) -> None:
    caps = pytester.path / "caps.json"
    caps.write_text(json.dumps({"rsio_capabilities": 1, "codecs": ["msgpack"], "publishers": ["tck/range"],
                                "features": []}))
    junit = pytester.path / "junit.xml"
    result = _run(pytester, "--rsio-target", peer_url, "--rsio-capabilities", str(caps), "-k", "PACK-001",
                  "-rs", f"--junitxml={junit}")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*does not claim capability tck/fixed*"])
    skipped = ElementTree.parse(junit).getroot().find(".//skipped")
    assert skipped is not None and "tck/fixed" in (skipped.get("message") or "")


def test_a_failure_shows_rule_expectation_and_transcript(pytester: pytest.Pytester) -> None:
    # A target that is not RS-IO at all: an echo of nothing, closing at once.
    result = _run(pytester, "--rsio-target", "exec:true", "-k", "HS-007")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "[HS-1]" in text and "expected serverHello" in text
    # The transcript, kit to target.  Whether the clientHello's write wins the race with the child's exit
    # depends on the machine: either it is shown as sent, or as not sent, by name.
    hello = [line for line in text.splitlines() if ">>" in line and "clientHello" in line]
    assert hello, text
    assert all(("(not sent: clientHello(" in line) or ("not sent" not in line) for line in hello)
    assert "Traceback" not in text


def test_baseline_turns_known_failures_into_xfail(pytester: pytest.Pytester, peer_url: str) -> None:
    baseline = pytester.path / "baseline.txt"
    baseline.write_text("HS-007  # known to fail\nDEM-001\n")
    failing = _run(pytester, "--rsio-target", "exec:true", "--rsio-baseline", str(baseline), "-k", "HS-007")
    failing.assert_outcomes(xfailed=1)
    passing = _run(pytester, "--rsio-target", peer_url, "--rsio-baseline", str(baseline), "-k", "DEM-001")
    passing.assert_outcomes(xpassed=1)


def test_without_a_target_the_plugin_starts_the_reference_peer(pytester: pytest.Pytester) -> None:
    result = _run(pytester, "--rsio", "-k", "STR-001")
    result.assert_outcomes(passed=1)


def test_the_plugin_stays_out_of_ordinary_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    result = _run(pytester)
    result.assert_outcomes(passed=1)


def test_scenario_directory_can_be_chosen(pytester: pytest.Pytester, peer_url: str, tmp_path: Path) -> None:
    directory = pytester.mkdir("mine")
    (directory / "one.yaml").write_text(
        "- id: STR-901\n  title: my own scenario\n  rules: [STR-1]\n  level: MUST\n  requires: [tck/range]\n"
        "  steps:\n    - send: {subscribe: {publisher: \"tck/range?count=1\", subscriber: 1, initialDemand: 1}}\n"
        "    - expect: {onSubscribe: {subscriber: 1}}\n"
        "    - expect_elements: {subscriber: 1, count: 1, then: onComplete}\n"
    )
    result = _run(pytester, "--rsio-target", peer_url, "--rsio-scenarios", str(directory))
    result.assert_outcomes(passed=1)


def test_bad_options_are_refused_before_anything_runs(pytester: pytest.Pytester) -> None:
    codec = _run(pytester, "--rsio", "--rsio-codec", "foo")
    assert codec.ret == pytest.ExitCode.USAGE_ERROR
    assert "rsio: --rsio-codec 'foo': unknown codec" in codec.stderr.str()
    caps = pytester.path / "caps.json"
    caps.write_text(json.dumps({"rsio_capabilities": 1, "publisher": ["tck/range"]}))
    pytester.makeini(f"[pytest]\nrsio_capabilities = {caps}\n")  # the ini twin is checked the same way
    misspelled = _run(pytester, "--rsio")
    assert misspelled.ret == pytest.ExitCode.USAGE_ERROR
    assert f"rsio: {caps}: unknown key 'publisher'" in misspelled.stderr.str()
    for result in (codec, misspelled):
        assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_scenario_file_can_be_chosen_and_unknown_baseline_entries_warn(pytester: pytest.Pytester,
                                                                         peer_url: str) -> None:
    scenario = pytester.path / "one.yml"
    scenario.write_text(
        "- id: STR-902\n  title: my own scenario\n  rules: [STR-1]\n  level: MUST\n  requires: [tck/range]\n"
        "  steps:\n    - send: {subscribe: {publisher: \"tck/range?count=1\", subscriber: 1, initialDemand: 1}}\n"
        "    - expect: {onSubscribe: {subscriber: 1}}\n"
        "    - expect_elements: {subscriber: 1, count: 1, then: onComplete}\n"
    )
    baseline = pytester.path / "baseline.txt"
    baseline.write_text("NO-SUCH-SCENARIO\n")
    result = _run(pytester, "--rsio-target", peer_url, "--rsio-scenarios", str(scenario),
                  "--rsio-baseline", str(baseline))
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*1 entries naming no collected scenario: NO-SUCH-SCENARIO*"])
    strict = _run(pytester, "--rsio-target", peer_url, "--rsio-scenarios", str(scenario),
                  "--rsio-baseline", str(baseline), "--rsio-strict")
    assert strict.ret == pytest.ExitCode.USAGE_ERROR
    assert "an error with --rsio-strict" in strict.stderr.str()


def test_an_unreachable_target_stops_the_session_with_one_message(pytester: pytest.Pytester) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    result = _run(pytester, "--rsio-target", url, "-k", "HS-001 or HS-002 or HS-003")
    assert result.ret == 3
    text = result.stdout.str() + result.stderr.str()
    assert text.count(f"cannot reach {url}") == 1, text


def _junit_targets(junit: Path) -> set[str]:
    return {p.get("value") or "" for p in ElementTree.parse(junit).getroot().iter("property") if p.get("name") == "target"}


def test_rsio_name_names_the_target_in_the_results(pytester: pytest.Pytester, peer_url: str) -> None:
    junit = pytester.path / "junit.xml"
    result = _run(pytester, "--rsio-target", peer_url, "--rsio-name", "acme@2.0", "-k", "HS-002",
                  f"--junitxml={junit}", "-o", "junit_family=xunit1")
    result.assert_outcomes(passed=1)
    assert _junit_targets(junit) == {"acme@2.0"}
    pytester.makeini("[pytest]\nrsio_name = widget\njunit_family = xunit1\n")  # the ini twin
    result = _run(pytester, "--rsio-target", peer_url, "-k", "HS-002", f"--junitxml={junit}")
    result.assert_outcomes(passed=1)
    assert _junit_targets(junit) == {"widget"}
    pytester.makeini("[pytest]\njunit_family = xunit1\n")  # unnamed: the URL, port included
    result = _run(pytester, "--rsio-target", peer_url, "-k", "HS-002", f"--junitxml={junit}")
    assert _junit_targets(junit) == {peer_url}


def test_a_bad_rsio_name_is_a_one_line_usage_error(pytester: pytest.Pytester, peer_url: str) -> None:
    result = _run(pytester, "--rsio-target", peer_url, "--rsio-name", "acme@", "-k", "HS-002")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rsio-name 'acme@': the version after '@' is empty*"])
    assert "Traceback" not in result.stderr.str()


def test_rsio_profile_and_binding_ini_twins_reach_kit_and_target(pytester: pytest.Pytester) -> None:
    # As rsio_codec does: DEM-010 runs only over varint, so the profile must reach the kit and the
    # embedded peer (no target given: the plugin starts it with the binding and profile).
    pytester.makeini("[pytest]\nrsio = true\nrsio_binding = rsio\nrsio_profile = varint\n")
    result = _run(pytester, "-k", "DEM-010")
    result.assert_outcomes(passed=1)
    on_the_command_line = _run(pytester, "--rsio-binding", "rsio", "--rsio-profile", "msgpack", "-k", "DEM-010")
    on_the_command_line.assert_outcomes(skipped=1)  # the command line wins over the ini


def test_bad_binding_and_profile_options_are_one_line_usage_errors(pytester: pytest.Pytester) -> None:
    cases = [
        (("--rsio", "--rsio-binding", "carrier-pigeon"), "rsio: --rsio-binding 'carrier-pigeon': unknown binding"),
        (("--rsio", "--rsio-profile", "json"), "rsio: --rsio-profile 'json': unknown profile of binding rsio"),
        (("--rsio", "--rsio-profile", "varint", "--rsio-codec", "msgpack"),
         "rsio: --rsio-codec 'msgpack' and --rsio-profile 'varint' disagree"),
    ]
    for args, message in cases:
        result = _run(pytester, *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, args
        assert message in result.stderr.str(), (args, result.stderr.str())
        assert "Traceback" not in result.stdout.str() + result.stderr.str()
