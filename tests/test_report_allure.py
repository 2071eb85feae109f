"""allure results from a pytest run of the scenarios (pytester subprocess, --alluredir)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsio_tck.embedded import EmbeddedPeer

pytest_plugins = ["pytester"]
pytest.importorskip("allure_pytest", reason="allure-pytest is not installed")


@pytest.fixture(scope="module")
def faulty_peer() -> object:
    with EmbeddedPeer(faults=["dem-beyond-demand"]) as url:
        yield url


def test_allure_results_carry_area_rule_severity_links_and_attachments(pytester: pytest.Pytester,
                                                                        faulty_peer: str) -> None:
    results = pytester.path / "allure-results"
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--rsio-target", faulty_peer,
                                        "-k", "HS-001 or DEM-001", "--alluredir", str(results), timeout=120)
    run.assert_outcomes(passed=1, failed=1)
    cases = {}
    for path in results.glob("*-result.json"):
        case = json.loads(path.read_text())
        cases[case["name"].split(":")[0]] = case
    assert set(cases) == {"HS-001", "DEM-001"}
    dem = cases["DEM-001"]
    labels = {(label["name"], label["value"]) for label in dem["labels"]}
    assert {("epic", "DEM Demand"), ("feature", "DEM-1"), ("feature", "DEM-5"), ("severity", "critical"),
            ("tag", "verdict:fail")} <= labels
    assert dem["status"] == "failed"
    assert {link["name"] for link in dem["links"]} == {"SPEC DEM-1", "SPEC DEM-5"}
    assert any(link["url"].endswith("#dem-1-must-publisher") for link in dem["links"])
    attachments = {a["name"]: a for a in dem["attachments"]}
    assert set(attachments) >= {"transcript", "DEM-001.trace", "DEM-001.pcap"}
    assert attachments["DEM-001.pcap"]["type"] == "application/vnd.tcpdump.pcap"
    transcript = (results / attachments["transcript"]["source"]).read_text()
    assert "DEM-1" in transcript and "onNext" in transcript
    pcap = (results / attachments["DEM-001.pcap"]["source"]).read_bytes()
    assert pcap[:4] in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4")  # pcap magic
    hs_labels = {(label["name"], label["value"]) for label in cases["HS-001"]["labels"]}
    assert ("epic", "HS Handshake") in hs_labels and ("tag", "verdict:pass") in hs_labels


def test_without_alluredir_nothing_is_written(pytester: pytest.Pytester, faulty_peer: str) -> None:
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "--rsio-target", faulty_peer,
                                        "-k", "HS-001", timeout=120)
    run.assert_outcomes(passed=1)
    assert not list(Path(pytester.path).rglob("*-result.json"))
