"""The mutants of the reference peer: which, where, and their mutated source.

Theory of operation: cosmic-ray's operators (parso-based, so the rest of a module's
text is kept byte for byte) find every place an operator can change in the modules
that decide what the peer sends and accepts.  A mutant is named by where a person
reading the module sees it -- ``module:line``, the operator, and its index among
that operator's changes on that line -- and carries cosmic-ray's whole-module
``occurrence``, which is what ``mutate_code`` needs to make it.  Places that cannot
change behaviour are left out before anything runs: annotations (strings under
``from __future__ import annotations``), ``if TYPE_CHECKING:`` blocks, ``__repr__``,
and, in ``rsio/connection.py``, the transport mechanics outside dispatch and publishing.

The source on disk is never touched: ``mutated_source`` returns text, and the runner
hands it to the peer process through ``overlay/sitecustomize.py``.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from cosmic_ray.operators.operator import Operator
from cosmic_ray.plugins import get_operator

ROOT = Path(__file__).resolve().parent.parent
PEER_DIR = ROOT / "reference_peer"
PACKAGE = "rsio_tck.reference_peer"
EQUIVALENTS = ROOT / "tests" / "mutation-equivalents.txt"

# The modules that decide what the peer sends and accepts (issue 15).  None: the whole
# module; otherwise only the named functions and class attributes (qualified names).
SCOPE: dict[str, tuple[str, ...] | None] = {
    "rsio/policy.py": None,
    "rsio/flows.py": None,
    "rsio/inflows.py": None,
    "sources.py": None,
    "rsio/subscribe_back.py": None,
    "rsio/connection.py": tuple(f"RsioConnection.{name}" for name in (
        "_dispatch", "_on_client_hello", "_on_server_hello", "_handshake_done", "_on_closed", "handle_subscribe",
        "_on_request", "_on_cancel", "_on_ignored", "_HANDLERS", "open", "send", "emit_elements", "wake",
        "_produce_round", "end_flow", "stop_flow", "_teardown",
    )),
}

# One or two natural changes per place (as mutmut makes them), not cosmic-ray's every
# pairing of operators: that keeps a full run near 20 minutes on two shared cores, and a
# replacement such as ``+`` by ``**`` is killed by whatever kills ``+`` by ``-``.
OPERATORS: tuple[str, ...] = (
    "core/ReplaceComparisonOperator_Lt_LtE", "core/ReplaceComparisonOperator_LtE_Lt",
    "core/ReplaceComparisonOperator_Gt_GtE", "core/ReplaceComparisonOperator_GtE_Gt",
    "core/ReplaceComparisonOperator_Eq_NotEq", "core/ReplaceComparisonOperator_NotEq_Eq",
    "core/ReplaceComparisonOperator_Is_IsNot", "core/ReplaceComparisonOperator_IsNot_Is",
    "core/ReplaceBinaryOperator_Add_Sub", "core/ReplaceBinaryOperator_Sub_Add",
    "core/ReplaceBinaryOperator_Mul_Add", "core/ReplaceBinaryOperator_FloorDiv_Mul",
    "core/ReplaceBinaryOperator_Mod_FloorDiv", "core/ReplaceBinaryOperator_Pow_Mul",
    "core/ReplaceBinaryOperator_LShift_RShift",
    "core/AddNot", "core/ReplaceUnaryOperator_Delete_Not",
    "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd", "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue",
    "core/NumberReplacer",
    "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak", "core/ZeroIterationForLoop",
    "core/ExceptionReplacer", "core/RemoveDecorator",
)


@dataclass(frozen=True, slots=True, order=True)
class Mutant:
    module: str  # path under reference_peer/, e.g. "rsio/flows.py"
    line: int
    operator: str  # cosmic-ray's name, e.g. "core/NumberReplacer"
    index: int  # among this operator's changes on this line
    occurrence: int  # cosmic-ray's occurrence of the operator in the whole module

    @property
    def key(self) -> str:
        return f"{self.module}:{self.line} {self.operator}#{self.index}"

    @property
    def import_name(self) -> str:
        return f"{PACKAGE}.{self.module.removesuffix('.py').replace('/', '.')}"

    @property
    def path(self) -> Path:
        return PEER_DIR / self.module


@dataclass(frozen=True, slots=True)
class _Region:
    """What the Python AST says about a module's lines."""

    skipped: tuple[tuple[tuple[int, int], tuple[int, int]], ...]  # (start, end) positions never mutated
    scoped: tuple[tuple[int, int], ...]  # line ranges in scope; empty: the whole module

    def allows(self, position: tuple[int, int]) -> bool:
        if any(start <= position < end for start, end in self.skipped):
            return False
        return not self.scoped or any(first <= position[0] <= last for first, last in self.scoped)


def _region(source: str, scope: tuple[str, ...] | None) -> _Region:
    tree = ast.parse(source)
    skipped: list[tuple[tuple[int, int], tuple[int, int]]] = []

    def span(node: ast.AST) -> None:
        # ast columns are UTF-8 byte offsets and parso's are characters: the peer is ASCII.
        skipped.append(((node.lineno, node.col_offset), (node.end_lineno or node.lineno, node.end_col_offset or 0)))

    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            span(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.returns is not None:
                span(node.returns)
            if node.name == "__repr__":
                span(node)
        elif isinstance(node, ast.AnnAssign):
            span(node.annotation)
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            span(node)
    scoped: list[tuple[int, int]] = []
    if scope is not None:
        for name, node in _named_blocks(tree):
            if name in scope:
                scoped.append((node.lineno, node.end_lineno or node.lineno))
        missing = set(scope) - {name for name, _ in _named_blocks(tree)}
        if missing:
            raise ValueError(f"mutation scope names what the module does not define: {sorted(missing)}")
    return _Region(tuple(skipped), tuple(scoped))


def _named_blocks(tree: ast.Module) -> Iterator[tuple[str, ast.stmt]]:
    """(qualified name, node) of every function and class-level assignment."""
    def walk(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.stmt]]:
        for node in body:
            if isinstance(node, ast.ClassDef):
                yield from walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{prefix}{node.name}", node
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                yield f"{prefix}{node.target.id}", node
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                yield f"{prefix}{node.targets[0].id}", node
    return walk(tree.body, "")


@cache
def _operator(name: str) -> Operator:
    return get_operator(name)()


def module_mutants(module: str, source: str | None = None) -> list[Mutant]:
    """Every mutant of one in-scope module (``source`` defaults to the file's text)."""
    text = (PEER_DIR / module).read_text() if source is None else source
    region = _region(text, SCOPE[module])
    nodes = list(ast_nodes(get_ast(text)))
    found: list[Mutant] = []
    for name in OPERATORS:
        operator = _operator(name)
        per_line: dict[int, int] = {}
        occurrence = 0
        # Exactly cosmic-ray's walk order (MutationVisitor.visit), so the occurrence matches.
        for node in nodes:
            for start, _end in operator.mutation_positions(node):
                if region.allows(start):
                    index = per_line.get(start[0], 0)
                    per_line[start[0]] = index + 1
                    found.append(Mutant(module, start[0], name, index, occurrence))
                occurrence += 1
    # A replaced operator can make a statement that does not compile (``*`` of keyword-only
    # parameters read as multiplication): such a mutant tests nothing, so it is left out.
    return sorted(m for m in found if not m.operator.startswith("core/ReplaceBinaryOperator") or _compiles(m, text))


def _compiles(mutant: Mutant, source: str) -> bool:
    try:
        compile(mutated_source(mutant, source), mutant.module, "exec")
    except SyntaxError:
        return False
    return True


def all_mutants(modules: Iterable[str] = SCOPE) -> list[Mutant]:
    return [mutant for module in modules for mutant in module_mutants(module)]


def mutated_source(mutant: Mutant, source: str | None = None) -> str:
    """The module's text with this one mutant applied."""
    text = mutant.path.read_text() if source is None else source
    mutated = mutate_code(text, _operator(mutant.operator), mutant.occurrence)
    if mutated is None:
        raise ValueError(f"{mutant.key}: cosmic-ray made no change at occurrence {mutant.occurrence}")
    return str(mutated)


def changed_lines(mutant: Mutant, source: str | None = None) -> list[tuple[str, str]]:
    """(original, mutated) text of each line the mutant changes."""
    text = mutant.path.read_text() if source is None else source
    before, after = text.splitlines(), mutated_source(mutant, text).splitlines()
    return [(a, b) for a, b in zip(before, after) if a != b] or [("", "(lines removed or added)")]


# -- tests/mutation-equivalents.txt --------------------------------------------------------

_ENTRY = re.compile(r"^(?P<module>[\w/]+\.py):(?P<line>\d+)\s+(?P<operator>core/\w+)#(?P<index>\d+)\s+(?P<reason>\S.*)$")


@dataclass(frozen=True, slots=True)
class Equivalent:
    key: str  # as Mutant.key
    reason: str
    lineno: int  # in the equivalents file


def parse_equivalents(text: str, origin: str = str(EQUIVALENTS)) -> dict[str, Equivalent]:
    """``module.py:LINE core/Operator#INDEX  reason`` per line; ``#`` starts a comment line."""
    entries: dict[str, Equivalent] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _ENTRY.match(line)
        if match is None:
            raise ValueError(f"{origin}:{lineno}: expected 'module.py:LINE core/Operator#INDEX  reason', got {line!r}")
        key = f"{match['module']}:{match['line']} {match['operator']}#{match['index']}"
        if key in entries:
            raise ValueError(f"{origin}:{lineno}: {key} is listed twice (first on line {entries[key].lineno})")
        entries[key] = Equivalent(key, match["reason"].strip(), lineno)
    return entries


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, Equivalent]:
    return parse_equivalents(path.read_text(), str(path)) if path.exists() else {}


def stale_equivalents(equivalents: dict[str, Equivalent], mutants: Iterable[Mutant]) -> list[Equivalent]:
    """Entries that name no current mutant (the module changed under them)."""
    keys = {mutant.key for mutant in mutants}
    return [entry for entry in equivalents.values() if entry.key not in keys]


def nearest(mutants: list[Mutant], key: str) -> str:
    """The mutants of the same module and operator closest to a stale key, for its error message."""
    module, rest = key.split(":", 1)
    line, operator = int(rest.split()[0]), rest.split()[1].split("#")[0]
    same = [m for m in mutants if m.module == module and m.operator == operator]
    lines = sorted({m.line for m in same})
    at = bisect.bisect_left(lines, line)
    return ", ".join(f"{module}:{n}" for n in lines[max(at - 2, 0):at + 2]) or "none"
