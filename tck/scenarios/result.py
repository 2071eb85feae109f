"""Outcomes of scenarios, kept distinct as the report needs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..monitor import Finding


class Verdict(str, Enum):
    PASS = "pass"
    FAIL = "fail"  # a MUST rule broken by the target
    WARN = "warn"  # a SHOULD not met (optional-not-met): fails only in strict mode
    SKIP = "skip"  # a capability the target does not claim, or a codec the scenario excludes
    XFAIL = "xfail"  # failed, and the baseline says it is known to fail
    XPASS = "xpass"  # passed, although the baseline says it fails
    ERROR = "error"  # the kit could not run the scenario (unreachable target, kit bug)


@dataclass(slots=True)
class Failure:
    rule: str
    expectation: str
    got: str
    step: int | None = None

    def render(self) -> str:
        where = f" (step {self.step})" if self.step is not None else ""
        return f"[{self.rule}]{where} expected {self.expectation}; got {self.got}"


@dataclass(frozen=True, slots=True)
class TargetStop:
    """The target stopped answering: after ``during`` ended on a time-out, a fresh connection got no answer
    to the binding's liveness probe (``why``).  ``running``: the other scenarios in flight at that moment
    (``--jobs N``), whose own time-outs then prove nothing.  ``slow``: ``during`` ran out of its budget
    while bytes still came, and the fresh connection's answer did not come whole within the probe's bound:
    the target answers too slowly for the kit to judge it (see ``liveness``)."""

    during: str
    why: str
    running: tuple[str, ...] = ()
    slow: bool = False
    after: str = "after its time-out"  # what set the probe off, in the words of the one line the run says

    @property
    def what(self) -> str:
        """What the target did, in the words of the one line the run says."""
        return "answered too slowly to judge" if self.slow else "stopped answering"

    @property
    def went(self) -> str:
        """What the target did, in the words of each result's reason ("not run: the target went silent ...")."""
        return "answered too slowly to judge" if self.slow else "went silent"

    def to_json(self) -> dict[str, Any]:
        return {"during": self.during, "why": self.why, "running": list(self.running),
                **({"slow": True, "after": self.after} if self.slow else {})}


@dataclass(slots=True)
class ScenarioResult:
    id: str
    title: str
    rules: tuple[str, ...]
    level: str
    verdict: Verdict
    duration: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # the monitor's, both sides
    reason: str = ""  # skip or error reason
    transcript: list[str] = field(default_factory=list)
    target: str = ""
    codec: str = ""
    kit_version: str = ""
    trace: list[Any] = field(default_factory=list)
    wire_trace: list[Any] = field(default_factory=list)  # ws://: the raw TCP bytes, for the pcap (trace: the binding's)
    # Where a bounded record was cut, per store (trace, transcript, findings, inbox, reassembly,
    # steps): empty when nothing was.
    truncated: dict[str, str] = field(default_factory=dict)
    # The side the target plays: "server" when the kit is the client, "client" in listen mode.
    target_side: str = "server"
    # The scenario ended waiting for the target: a step's time-out, or a connection that took too long to open.
    timed_out: bool = False
    # The scenario ran out of its budget while the target's bytes still came: not judged (error), and followed
    # by a probe of the target's pace (``liveness``).
    out_of_budget: bool = False
    # Seconds the scenario's slowest frame took to trickle in, when longer than the signal timeout (0: none
    # was): the kit waited for it as bytes kept coming; also followed by a probe of the target's pace.
    stretched: float = 0.0
    # Set when the target stopped answering during this run: on the scenario it stopped during (``during`` is
    # its own id; its verdict stands) and on every scenario judged after it (verdict error).
    stopped: TargetStop | None = None

    @property
    def violations(self) -> list[dict[str, Any]]:
        out = [{"rule": f.rule, "message": f.render(), "source": "scenario"} for f in self.failures]
        out += [{"rule": f.rule, "message": f.message, "source": "monitor", "side": str(f.side), "level": f.level.value}
                for f in self.findings if f.side is not None and str(f.side) == self.target_side]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "rules": list(self.rules),
            "level": self.level,
            "verdict": self.verdict.value,
            "duration": round(self.duration, 6),
            "violations": self.violations,
            "reason": self.reason,
            "target": self.target,
            "codec": self.codec,
            "kit_version": self.kit_version,
            **({"truncated": dict(self.truncated)} if self.truncated else {}),
            **({"target_stopped": self.stopped.to_json()} if self.stopped is not None else {}),
        }

    def explain(self) -> str:
        """What a failing item prints: rule, expectation, and the transcript of both directions."""
        lines = [f"{self.id}: {self.title}  [{self.verdict.value}]  rules {', '.join(self.rules)}"]
        if self.reason:
            lines.append(f"  {self.reason}")
        for failure in self.failures:
            lines.append(f"  {failure.render()}")
        for store, where in self.truncated.items():
            lines.append(f"  truncated {store}: {where}")
        for finding in self.findings:
            if finding.side is not None and str(finding.side) == self.target_side:
                lines.append(f"  monitor: {finding.message} ({finding.level.value}, frame #{finding.frame_index})")
            elif finding.side is not None and self.verdict is Verdict.ERROR:
                # An error names the kit's own violations: a kit bug is among them.
                lines.append(f"  monitor, the kit's side: {finding.message} ({finding.level.value}, "
                             f"frame #{finding.frame_index})")
        if self.transcript:
            lines.append("  transcript (>> kit to target, << target to kit):")
            lines.extend(f"    {line}" for line in self.transcript)
        return "\n".join(lines)


def apply_baseline(result: ScenarioResult, baseline: frozenset[str]) -> None:
    """A result the baseline names: fail becomes xfail, pass becomes xpass (it changed: look at it)."""
    if result.id not in baseline:
        return
    if result.verdict is Verdict.FAIL:
        result.verdict = Verdict.XFAIL
    elif result.verdict is Verdict.PASS:
        result.verdict = Verdict.XPASS
