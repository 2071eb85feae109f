"""The interop baselines, read for the findings they cite: which scenario or grid cell shows a finding.

``interop/<implementation>/baseline.txt`` lines are ``SCENARIO-ID RULE... [flaky]  # F<n>: why`` (a client
test case is ``CLIENT-<binding>-<case>``); ``interop/matrix-baseline.txt`` lines are
``CLIENT SERVER CASE [flaky]  # F<n>: why``.  A line cites every F-number of its why (``# F47, F2: ...``).
``interop/baselines.py`` reads the same files to compare runs; it is a script of the interop harness,
not part of the installed kit, so the kit reads them here, from text.

``interop/run.py`` pins the implementations' versions in its ``VERSIONS`` literal, read with ``ast``
without running the harness.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .entries import FINDING_ID, FindingsError


@dataclass(frozen=True, slots=True)
class BaselineLine:
    """One known failure of the kit's suite (server role) or of a client test case (client role)."""

    implementation: str  # the interop/ folder: rsocket-go
    scenario: str  # RSFRAG-012, or CLIENT-rsocket-large-fragmented
    rules: tuple[str, ...]
    flaky: bool
    why: str
    findings: tuple[str, ...]  # the F-numbers the why cites
    where: str  # interop/rsocket-go/baseline.txt:17

    @property
    def file(self) -> str:
        return self.where.rsplit(":", 1)[0]

    @property
    def client_case(self) -> tuple[str, str] | None:
        """(binding, case) of a client-role line (``CLIENT-rsocket-metadata-push``); None for a scenario."""
        if not self.scenario.startswith("CLIENT-"):
            return None
        binding, _, case = self.scenario.removeprefix("CLIENT-").partition("-")
        return binding, case


@dataclass(frozen=True, slots=True)
class GridCell:
    """One known failing cell of the client x server grid."""

    client: str
    server: str
    case: str
    flaky: bool
    why: str
    findings: tuple[str, ...]
    where: str


def _entries(text: str) -> list[tuple[int, list[str], str]]:
    """(line number, words, why) of every line that is not blank or a comment."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        entry, _, why = line.partition("#")
        words = entry.split()
        if words:
            out.append((number, words, why.strip()))
    return out


def parse_baseline(text: str, implementation: str, source: str) -> list[BaselineLine]:
    lines = []
    for number, words, why in _entries(text):
        flaky = words[-1] == "flaky"
        rules = tuple(words[1:-1] if flaky else words[1:])
        if not rules:
            raise FindingsError(f"{source}:{number}: {words[0]} names no rule (write SCENARIO-ID RULE...  # F<n>: why)")
        lines.append(BaselineLine(implementation=implementation, scenario=words[0], rules=rules, flaky=flaky, why=why,
                                  findings=tuple(dict.fromkeys(FINDING_ID.findall(why))), where=f"{source}:{number}"))
    return lines


def parse_grid(text: str, source: str) -> list[GridCell]:
    cells = []
    for number, words, why in _entries(text):
        flaky = words[-1] == "flaky"
        fields = words[:-1] if flaky else words
        if len(fields) != 3:
            raise FindingsError(f"{source}:{number}: expected CLIENT SERVER CASE [flaky], got {' '.join(words)!r}")
        cells.append(GridCell(client=fields[0], server=fields[1], case=fields[2], flaky=flaky, why=why,
                              findings=tuple(dict.fromkeys(FINDING_ID.findall(why))), where=f"{source}:{number}"))
    return cells


def parse_isolated(text: str) -> dict[str, str]:
    """``interop/<implementation>/isolate.txt``: scenario id -> why it runs on a fresh server of its own."""
    return {words[0]: why for _, words, why in _entries(text)}


def parse_versions(source_text: str, source: str) -> dict[str, str]:
    """The ``VERSIONS = {...}`` literal of interop/run.py."""
    try:
        tree = ast.parse(source_text)
    except SyntaxError as exc:
        raise FindingsError(f"{source}: not Python: {exc.msg} (line {exc.lineno})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "VERSIONS" for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                break
            if isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                return value
            break
    raise FindingsError(f"{source}: no VERSIONS = {{'implementation': 'version', ...}} literal")
