"""The kit breaks rules only where a scenario says so: zero undeclared kit-side violations.

Every scenario of the suite runs against the reference peer, over both codecs.
Each violation with side ``client`` (the kit's) must be listed in that
scenario's ``kit_violations``; anything else is a kit bug.  Both judges are
held to it: the live monitor of the run, and the offline judge the pipeline
applies to the recorded trace (``judge_rows`` over the frame rows), whose
findings feed the multi-target site.
"""

from __future__ import annotations

import asyncio

import pytest

from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.errors import Side
from rsio_tck.pipeline.framing import frame_rows, judge_rows
from rsio_tck.scenarios import RunConfig, load_directory, run_suite
from rsio_tck.scenarios.result import Verdict


def _offline(trace: list, codec: str) -> list:  # type: ignore[type-arg]
    rows = list(frame_rows(trace, codec))
    return judge_rows([r.direction for r in rows], [r.data for r in rows], [r.t for r in rows],
                      [r.type for r in rows], codec)


@pytest.mark.parametrize("codec", ["msgpack", "varint"])
def test_the_kit_commits_only_the_violations_its_scenarios_declare(codec: str) -> None:
    scenarios = {s.id: s for s in load_directory(None)}
    with EmbeddedPeer(codec=codec) as url:
        results = asyncio.run(run_suite(scenarios.values(), RunConfig(target=url, codec=codec, keep_trace=True),
                                        jobs=4))
    undeclared, declared, judged = [], 0, 0
    for result in results:
        if result.verdict is Verdict.SKIP:
            continue
        assert result.trace, f"{result.id}: no trace kept"
        judged += 1
        allowed = scenarios[result.id].kit_violations
        for judge, findings in (("live", result.findings), ("offline", _offline(result.trace, codec))):
            for finding in findings:
                if finding.side is not Side.CLIENT:
                    continue
                if finding.rule in allowed:
                    declared += 1
                else:
                    undeclared.append(f"{result.id} ({judge} judge): {finding.message}")
    assert judged > 100
    assert declared > 0  # the deliberate ones are seen, so the judges did look at the kit's side
    assert undeclared == [], "\n".join(undeclared)
    # An undeclared MUST violation by the kit would have made the scenario's verdict error.
    assert not [r.id for r in results if r.verdict is Verdict.ERROR]
