"""The mutation runner's machinery (``mutation/``); the full run is ``make mutation`` only."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mutation.mutants import (
    EQUIVALENTS,
    OPERATORS,
    PEER_DIR,
    SCOPE,
    all_mutants,
    changed_lines,
    load_equivalents,
    module_mutants,
    mutated_source,
    nearest,
    parse_equivalents,
)
from mutation.suite import OVERLAY

ROOT = Path(__file__).resolve().parent.parent


def test_every_mutant_has_a_unique_key_and_changes_exactly_its_line() -> None:
    mutants = module_mutants("rsio/policy.py")
    assert len({m.key for m in mutants}) == len(mutants) > 5
    source = (PEER_DIR / "rsio" / "policy.py").read_text()
    for mutant in mutants:
        changes = changed_lines(mutant, source)
        before, _after = changes[0]
        assert before == source.splitlines()[mutant.line - 1], mutant.key
        compile(mutated_source(mutant, source), mutant.module, "exec")


def test_annotations_type_checking_blocks_and_repr_are_never_mutated() -> None:
    source = (
        "from __future__ import annotations\n"
        "if TYPE_CHECKING:\n"
        "    X = 1\n"
        "def f(a: int | None = 1) -> int | None:\n"
        "    return a\n"
        "class C:\n"
        "    n: int = 2\n"
        "    def __repr__(self) -> str:\n"
        "        return str(self.n + 1)\n"
    )
    SCOPE["_probe.py"] = None
    try:
        lines = {m.line for m in module_mutants("_probe.py", source)}
    finally:
        del SCOPE["_probe.py"]
    assert lines == {4, 7}  # the default value 1 of a, and n = 2; nothing else


def test_session_mutants_stay_in_dispatch_and_publishing() -> None:
    text = (PEER_DIR / "rsio" / "connection.py").read_text().splitlines()
    mutants = module_mutants("rsio/connection.py")
    assert mutants
    handle_subscribe = next(i for i, line in enumerate(text, 1) if "def handle_subscribe" in line)
    linger = next(i for i, line in enumerate(text, 1) if "def _goodbye_expired" in line)
    assert any(m.line > handle_subscribe for m in mutants)
    assert not any(linger <= m.line <= linger + 5 for m in mutants)


def test_the_curated_operators_exist_in_cosmic_ray() -> None:
    from cosmic_ray.plugins import operator_names

    assert set(OPERATORS) <= set(operator_names())


def test_a_mutant_is_loaded_by_the_overlay_and_the_worktree_is_untouched(tmp_path: Path) -> None:
    mutant = next(m for m in module_mutants("rsio/policy.py") if m.operator == "core/NumberReplacer"
                  and "VERSION = 0" in changed_lines(m)[0][0])
    original = hashlib.sha256(mutant.path.read_bytes()).hexdigest()
    source = tmp_path / "policy.py"
    source.write_text(mutated_source(mutant))
    probe = "from rsio_tck.reference_peer.rsio import policy; print(policy.VERSION, policy.__file__)"
    env = {**os.environ, "RSIO_MUTANT_MODULE": mutant.import_name, "RSIO_MUTANT_SOURCE": str(source),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(OVERLAY), os.environ.get("PYTHONPATH")]))}
    mutated = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert mutated.returncode == 0, mutated.stderr
    version, file = mutated.stdout.split()
    assert int(version) in (1, -1) and Path(file) == mutant.path
    plain = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert plain.stdout.split()[0] == "0"  # without the overlay: the module as it is
    assert hashlib.sha256(mutant.path.read_bytes()).hexdigest() == original


def test_equivalents_file_parses_and_every_entry_names_a_current_mutant() -> None:
    equivalents = load_equivalents()
    assert equivalents, f"{EQUIVALENTS} is empty"
    mutants = all_mutants()
    keys = {m.key for m in mutants}
    stale = [f"{EQUIVALENTS.name}:{e.lineno}: {e.key} (mutants of that operator nearby: {nearest(mutants, e.key)})"
             for e in equivalents.values() if e.key not in keys]
    assert not stale, "equivalent mutants that no longer exist (the module changed; update the file):\n" + \
        "\n".join(stale)
    assert all(len(e.reason) > 20 for e in equivalents.values())


@pytest.mark.parametrize("text, problem", [
    ("flows.py:12 core/AddNot#0", "expected 'module.py:LINE"),  # no reason
    ("flows.py:x core/AddNot#0 reason", "expected 'module.py:LINE"),
    ("flows.py:12 core/AddNot#0  why\nflows.py:12 core/AddNot#0  again", "listed twice"),
])
def test_a_bad_equivalents_line_names_the_file_and_line(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem) as error:
        parse_equivalents(text, "eq.txt")
    assert str(error.value).startswith("eq.txt:")


def test_the_runner_lists_mutants_without_running_them() -> None:
    listed = subprocess.run([sys.executable, "-m", "mutation", "--list", "--module", "rsio/policy.py"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip().endswith(f"{len(module_mutants('rsio/policy.py'))} mutants")
    assert all(m.key in listed.stdout for m in module_mutants("rsio/policy.py"))
