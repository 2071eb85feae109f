"""A finding's minimal reproduction: what to run, against what, and what the run then shows.

Server role: the scenarios the finding's baseline lines name, copied verbatim from the kit's scenario
files into one standalone file (``copy_items``: each item's own text, comments and flow style kept),
and the ``rsio-tck run --scenarios FILE`` that runs exactly them against a server.  A copy that does not
read back as the same data (a YAML layout the slicing did not foresee) is written out by PyYAML instead.
Client role: the ``rsio-tck run --listen`` that starts the client for the cited client test cases.
Grid: the cells of the client x server grid, which the kit's proxy reproduces between the two programs.
Probe: the first findings quote transcripts of ``interop/smoke.py``'s probes, which print them again.

Commands are built as argument lists and quoted with ``shlex``, so that they paste into a POSIX shell.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import yaml

from ..catalogue import RULES, Level
from ..scenarios.loader import SAFE_LOADER, Scenario, parse_document
from .baselines import BaselineLine, GridCell

EXAMPLE_PORT = 7878  # the server's port in the commands shown
PROXY_PORT = 7879


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a run of one scenario (or client test case) shows, from the baseline lines that name it."""

    scenario: str
    rules: tuple[tuple[str, bool], ...]  # (rule, flaky): a flaky rule fails in some runs only
    whys: tuple[str, ...]  # the lines' whys, each once
    must: bool  # some rule is a MUST: the run fails (SHOULD rules only: it warns)

    @property
    def rule_list(self) -> str:
        steady = [rule for rule, flaky in self.rules if not flaky]
        flaky = [rule for rule, flaky in self.rules if flaky]
        if not flaky:
            return ", ".join(steady)
        if not steady:
            return ", ".join(flaky) + ", in some runs only (timing)"
        return ", ".join(steady) + " (and " + ", ".join(flaky) + " in some runs only: timing)"


def outcomes(lines: Sequence[BaselineLine], why: Callable[[str], str] = str) -> tuple[Outcome, ...]:
    """The baseline lines grouped by scenario, in file order; ``why`` rewrites a line's why for the reader."""
    grouped: dict[str, list[BaselineLine]] = {}
    for line in lines:
        grouped.setdefault(line.scenario, []).append(line)
    result = []
    for scenario, mine in grouped.items():
        rules: dict[str, bool] = {}
        for line in mine:
            for rule in line.rules:
                rules[rule] = rules.get(rule, True) and line.flaky
        result.append(Outcome(scenario=scenario, rules=tuple(rules.items()),
                              whys=tuple(dict.fromkeys(w for line in mine if (w := why(line.why)))),
                              must=any(RULES[r].level is Level.MUST if r in RULES else True for r in rules)))
    return tuple(result)


@dataclass(frozen=True, slots=True)
class ScenarioReproduction:
    file_name: str
    yaml: str  # the standalone scenario file
    outcomes: tuple[Outcome, ...]  # what a run of it shows, per scenario
    scenarios: tuple[Scenario, ...]
    command: str  # rsio-tck run ... --scenarios FILE
    server_command: str  # the kit's fixture server of the implementation
    isolated: tuple[tuple[str, str], ...]  # (scenario, why) that must run on a fresh server


@dataclass(frozen=True, slots=True)
class ClientReproduction:
    outcomes: tuple[Outcome, ...]
    cases: tuple[tuple[str, str], ...]  # (client test case, what the client is asked to do)
    command: str  # rsio-tck run --listen ... with the kit's fixture client
    binding: str


@dataclass(frozen=True, slots=True)
class GridReproduction:
    rows: tuple[tuple[GridCell, str], ...]  # each cell with its note for the reader ("" if none)
    proxy_command: str
    server_command: str
    client_command: str  # for the first cell: the others differ in client, server or case


@dataclass(frozen=True, slots=True)
class Reproduction:
    scenarios: ScenarioReproduction | None
    clients: ClientReproduction | None
    grid: GridReproduction | None
    probe_command: str | None = None  # the smoke probe that printed the entry's transcript

    @property
    def empty(self) -> bool:
        return self.scenarios is None and self.clients is None and self.grid is None and self.probe_command is None


def _last_node(node: yaml.Node) -> yaml.Node:
    """The node whose end is where ``node``'s own text ends: a block collection's end mark lies at the next
    token (after blank lines and comments that belong to what follows), so descend to its last value."""
    while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, yaml.MappingNode) else last
    return node


def copy_items(text: str, ids: Collection[str]) -> dict[str, str]:
    """The text of each top-level item of a scenario file whose ``id`` is in ``ids``, from its ``- `` line."""
    root, data = parse_document(text)
    if not isinstance(root, yaml.SequenceNode) or not isinstance(data, list):
        return {}
    copied: dict[str, str] = {}
    for node, item in zip(root.value, data):
        if not isinstance(item, dict) or item.get("id") not in ids:
            continue
        start = text.rfind("\n", 0, node.start_mark.index) + 1
        piece = text[start:_last_node(node).end_mark.index].rstrip()
        if yaml.load(piece, Loader=SAFE_LOADER) != [item]:
            piece = yaml.safe_dump([item], sort_keys=False, allow_unicode=True, width=120).rstrip()
        copied[item["id"]] = piece
    return copied


def scenario_file(header: Sequence[str], pieces: Sequence[str]) -> str:
    """A standalone scenario file: ``#`` header lines, then the copied items."""
    return "".join(f"# {line}\n" if line else "#\n" for line in header) + "\n" + "\n\n".join(pieces) + "\n"


def run_command(binding: str, file_name: str, port: int = EXAMPLE_PORT) -> str:
    return shlex.join(["rsio-tck", "run", "--binding", binding, "--target", f"tcp://127.0.0.1:{port}",
                       "--scenarios", file_name])


def listen_command(binding: str, fixture: str, cases: Sequence[str]) -> str:
    args = ["rsio-tck", "run", "--binding", binding, "--listen", "tcp://127.0.0.1:0",
            "--client-command", f"interop/{fixture}/client"]
    for case in cases:
        args += ["--client-test", case]
    return shlex.join(args)


def server_command(fixture: str, port: int = EXAMPLE_PORT) -> str:
    return shlex.join([f"interop/{fixture}/server", str(port)])


def smoke_command(fixture: str) -> str:
    """interop/smoke.py: the probes whose transcripts the first findings quote, against the fixture server."""
    return shlex.join(["python", "interop/smoke.py", "--transcript", fixture])


def proxy_command(binding: str, port: int = PROXY_PORT, server_port: int = EXAMPLE_PORT) -> str:
    return shlex.join(["rsio-tck", "proxy", "--binding", binding, "--listen", f"tcp://127.0.0.1:{port}",
                       "--target", f"tcp://127.0.0.1:{server_port}", "--max-connections", "1"])


def grid_client_command(cell: GridCell, port: int = PROXY_PORT) -> str:
    return (f"RSIO_URL=tcp://127.0.0.1:{port} RSIO_TESTCASE={shlex.quote(cell.case)} "
            + shlex.quote(f"interop/{cell.client}/client"))
