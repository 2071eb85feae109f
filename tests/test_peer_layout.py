"""Every binding's reference peer has the same layout, so one reading of one peer is a map of the others.

A peer is a folder of ``reference_peer/`` beside the binding-neutral shell (``hostile/`` is the
shell's).  Each holds the same roles under the same names, and its faults in a package whose
``__init__`` gathers the area modules while ``declare`` holds the registry they declare on, so
no area imports its package back (``test_import_cycles`` holds that for every module).
"""

from __future__ import annotations

import ast
from pathlib import Path

PEER_ROOT = Path(__file__).resolve().parent.parent / "reference_peer"
SHELL_PACKAGES = {"hostile"}
ROLES = ("__init__.py", "connection.py", "policy.py", "publishers.py", "freedoms.py", "config.py", "hostile.py",
         "faults/__init__.py", "faults/declare.py")


def peers() -> list[Path]:
    return sorted(folder for folder in PEER_ROOT.iterdir()
                  if (folder / "__init__.py").is_file() and folder.name not in SHELL_PACKAGES)


def test_every_peer_has_the_same_modules_for_the_same_roles() -> None:
    assert [folder.name for folder in peers()] == ["ditto", "rsio", "rsocket"]
    for folder in peers():
        missing = [role for role in ROLES if not (folder / role).is_file()]
        assert missing == [], f"{folder.name}: {missing}"
        old_names = sorted(path.name for path in folder.glob("*.py")
                           if path.stem in ("session", "registry") or path.stem.startswith("faults_"))
        assert old_names == [], f"{folder.name}: {old_names}"


def test_a_peers_fault_registry_imports_none_of_its_areas() -> None:
    for folder in peers():
        faults = folder / "faults"
        areas = {path.stem for path in faults.glob("*.py")} - {"__init__", "declare"}
        assert areas, folder.name
        tree = ast.parse((faults / "declare.py").read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1
                    for alias in node.names} | {node.module for node in ast.walk(tree)
                                                if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}
        assert imported & areas == set(), f"{folder.name}/faults/declare.py imports {imported & areas}"
        gathered = ast.parse((faults / "__init__.py").read_text(encoding="utf-8"))
        named = {alias.name for node in ast.walk(gathered) if isinstance(node, ast.ImportFrom) and node.level == 1
                 and node.module is None for alias in node.names}
        assert named == areas, f"{folder.name}/faults/__init__.py gathers {sorted(named)}, the areas are {sorted(areas)}"
