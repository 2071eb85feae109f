"""Allure labels and attachments for scenario test items (used by ``tck/pytest_plugin.py``).

When pytest runs with allure-pytest's ``--alluredir``, each scenario item is
labelled: epic = its spec area ("DEM Demand"), feature = each rule it cites,
severity = critical for a MUST scenario and normal for a SHOULD one, a link per
rule to its SPEC.md section, and a tag with the kit's verdict.  Its
transcript, trace and pcap are attached.  Without ``--alluredir`` (or without
allure-pytest) nothing here runs.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

from ..catalogue import AREAS, RULES
from ..monitor.trace import write_trace
from .html import spec_url
from .model import spec_anchor
from .pcap import target_port, write_pcap


def allure_active(config: Any) -> bool:
    """Whether this pytest run writes allure results."""
    try:
        import allure  # noqa: F401
    except ImportError:
        return False
    return bool(config.getoption("allure_report_dir", None))


def label_scenario(scenario: Any, target: str | None = None) -> None:
    """Labels known before the scenario runs (they are kept even if the run crashes).

    ``target`` (``--rsio-name``, else the URL) is a parameter: runs against different targets
    then keep separate histories in allure.
    """
    import allure

    allure.dynamic.title(f"{scenario.id}: {scenario.title}")
    allure.dynamic.epic(f"{scenario.area} {AREAS.get(scenario.area, '')}".strip())
    allure.dynamic.feature(*scenario.rules)
    allure.dynamic.severity(allure.severity_level.CRITICAL if scenario.level == "MUST"
                            else allure.severity_level.NORMAL)
    base = spec_url()
    for rule in scenario.rules:
        if rule in RULES and base:
            allure.dynamic.link(f"{base}#{spec_anchor(RULES[rule])}", name=f"SPEC {rule}")
    if target:
        allure.dynamic.parameter("target", target)


def attach_result(result: Any) -> None:
    """The verdict tag, the transcript, and (for a result run with ``keep_trace``) the trace and the pcap."""
    import allure

    allure.dynamic.tag(f"verdict:{result.verdict.value}")
    allure.attach(result.explain(), name="transcript", attachment_type=allure.attachment_type.TEXT)
    if not result.trace:
        return
    buffer = io.BytesIO()
    write_trace(buffer, result.trace)
    allure.attach(buffer.getvalue(), name=f"{result.id}.trace", extension="trace")
    with tempfile.TemporaryDirectory(prefix="rsio-allure-") as scratch:
        pcap = Path(scratch) / f"{result.id}.pcap"
        write_pcap(pcap, result.trace, server_port=target_port(result.target))
        allure.attach(pcap.read_bytes(), name=f"{result.id}.pcap", attachment_type=allure.attachment_type.PCAP)
