"""What a failing rule's page shows of a run: the scenarios that broke it, their transcript, a reproduction.

Theory of operation.  Every scenario of a run directory has a transcript (``transcripts/<ID>.txt``):
a header, the monitor's findings (``monitor: [RULE] ... (MUST, frame #N)``) or the failed expectation
(``[RULE] (step K) expected ...``), then the frames in wire order (``12.5ms #3  << PAYLOAD(...)``).
``excerpt`` keeps the part a reader needs: the frames the rule's findings name, highlighted, with a
few frames of context before and after.  A failed expectation names no frame, so its last frame from
the target is highlighted: that is what the target did instead.

The reproduction is the command that runs the same scenario (or client test case) again: against a
server, ``rsio-tck run --binding B --target tcp://HOST:PORT -k ID``; against a client, listen mode
with the case.  ``HOST:PORT`` is left for the reader: the run's own address was a loopback port.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..listen.cases import case_of_result
from ..report.rundir import file_stem

FRAME_LINE = re.compile(r"^\s*[\d.]+ms #(?P<index>\d+)\s")
FINDING_FRAME = re.compile(r"^\s*monitor: \[(?P<rule>[A-Z0-9-]+)\].*\(\w+, frame #(?P<index>\d+)\)\s*$")
EXPECTATION = re.compile(r"^\s*\[(?P<rule>[A-Z0-9-]+)\] \(step \d+\)")
TRANSCRIPT_MOST = 8 * 1024 * 1024  # bytes read of one transcript (a flood's transcript is bounded by the kit)
BEFORE, AFTER, MOST = 6, 8, 60  # frames of context before the first highlight and after the last, lines in all


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    highlighted: bool


@dataclass(frozen=True, slots=True)
class Evidence:
    """One scenario that broke the rule: its verdict, what it found, the transcript excerpt, the command."""

    scenario: str
    title: str
    known: bool  # the run's baseline lists it (xfail)
    findings: tuple[str, ...]  # the monitor's or the expectation's statements of the rule
    excerpt: tuple[Line, ...]
    elided: bool  # the excerpt left frames out
    reproduce: str


def _transcript(run_dir: Path | None, scenario: str) -> list[str]:
    if run_dir is None:
        return []
    path = run_dir / "transcripts" / f"{file_stem(scenario)}.txt"
    try:
        with path.open("rb") as stream:
            data = stream.read(TRANSCRIPT_MOST)
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()


def excerpt(lines: list[str], rule: str) -> tuple[tuple[str, ...], tuple[Line, ...], bool]:
    """(the rule's statements, the excerpt of the frames, whether frames were left out)."""
    statements = [line.strip() for line in lines if (m := FINDING_FRAME.match(line) or EXPECTATION.match(line))
                  and m.group("rule") == rule]
    named = {int(m.group("index")) for line in lines if (m := FINDING_FRAME.match(line)) and m.group("rule") == rule}
    start = next((i + 1 for i, line in enumerate(lines) if line.lstrip().startswith("transcript (")), len(lines))
    frames = lines[start:]
    hits = [i for i, line in enumerate(frames) if (m := FRAME_LINE.match(line)) and int(m.group("index")) in named]
    if not frames:
        return tuple(dict.fromkeys(statements)), (), False
    if not hits:
        received = [i for i, line in enumerate(frames) if "<< " in line[:40]]
        hits = received[-1:] or [len(frames) - 1]
    first, last = max(0, hits[0] - BEFORE), min(len(frames), hits[-1] + AFTER + 1)
    shown = list(range(first, last))
    if len(shown) > MOST:  # many highlighted frames: the first ones, with their context
        shown = shown[:MOST]
    marked = set(hits)
    out = tuple(Line(text=frames[i].strip(), highlighted=i in marked) for i in shown)
    return tuple(dict.fromkeys(statements)), out, first > 0 or shown[-1] < len(frames) - 1


def reproduce_command(binding: str, role: str, scenario: str) -> str:
    """The command that runs ``scenario`` again: against a server, or in listen mode against a client."""
    case = case_of_result(binding, scenario) if role == "client" else None
    if case is not None:
        return shlex.join(["rsio-tck", "run", "--binding", binding, "--listen", "tcp://127.0.0.1:7878",
                           "--client-command", "YOUR-CLIENT", "--client-test", case])
    return shlex.join(["rsio-tck", "run", "--binding", binding, "--target", "tcp://HOST:PORT", "-k", scenario])


def evidence(run_dir: Path | None, binding: str, role: str, result: dict[str, Any], rule: str) -> Evidence:
    statements, lines, elided = excerpt(_transcript(run_dir, result["id"]), rule)
    if not statements:
        statements = tuple(str(v.get("message", "")) for v in result.get("violations") or []
                           if isinstance(v, dict) and v.get("rule") == rule)[:3]
    return Evidence(scenario=result["id"], title=str(result.get("title") or ""), known=result["verdict"] == "xfail",
                    findings=statements[:5], excerpt=lines, elided=elided,
                    reproduce=reproduce_command(binding, role, result["id"]))
