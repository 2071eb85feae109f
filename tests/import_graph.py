"""The import graph of rsio_tck and rsio_tck.reference_peer, read from source (``ast``; nothing is imported).

Theory of operation.  ``module_path`` maps a dotted name onto the worktree's folders
(``tck/`` is ``rsio_tck``, ``reference_peer/`` is ``rsio_tck.reference_peer``), as the
package's ``package-dir`` does.  ``imports_in`` lists the rsio_tck modules one module's
source imports, resolved to dotted names, the way ``grimp`` counts them: ``from . import
flows`` imports the submodule ``flows`` (not its package's ``__init__``, which is
running already), ``from .faults import FAULTS`` imports ``faults``.  Imports inside
functions count (they run when the function does); imports under ``if TYPE_CHECKING:``
do not (they never run).  What a module imports implicitly -- its parent packages'
``__init__`` -- is not an edge here; a walk that wants it asks ``parents``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Most specific first: rsio_tck.reference_peer lives apart from the rest of rsio_tck.
PACKAGES = {"rsio_tck.reference_peer": ROOT / "reference_peer", "rsio_tck": ROOT / "tck"}


def module_path(name: str) -> Path | None:
    """The source file of module ``name`` (a package's ``__init__.py``), or None if it is not one of ours."""
    for package, directory in PACKAGES.items():
        if name == package or name.startswith(package + "."):
            rest = name[len(package) + 1:].split(".") if name != package else []
            base = directory.joinpath(*rest)
            if base.with_suffix(".py").is_file():
                return base.with_suffix(".py")
            if (base / "__init__.py").is_file():
                return base / "__init__.py"
            return None
    return None


def is_package(name: str) -> bool:
    path = module_path(name)
    return path is not None and path.name == "__init__.py"


def parents(name: str) -> list[str]:
    """The packages Python imports before ``name`` (``a.b.c``: ``a``, ``a.b``) that are ours."""
    parts = name.split(".")
    return [dotted for i in range(1, len(parts)) if module_path(dotted := ".".join(parts[:i])) is not None]


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_in(source: str, name: str, *, package: bool) -> list[str]:
    """The rsio_tck modules the source of module ``name`` imports (``package``: it is an ``__init__``)."""
    tree = ast.parse(source, filename=name)
    base_package = name if package else name.rpartition(".")[0]
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = base_package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            submodules = [f"{module}.{alias.name}" for alias in node.names
                          if module_path(f"{module}.{alias.name}") is not None]
            found.extend(submodules)
            if len(submodules) < len(node.names):  # some names are attributes of ``module`` itself
                found.append(module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [module for module in found if module == "rsio_tck" or module.startswith("rsio_tck.")]


def imports_of(name: str) -> list[str]:
    """The rsio_tck modules module ``name`` imports (outside ``if TYPE_CHECKING:``), resolved."""
    path = module_path(name)
    assert path is not None, name
    return imports_in(path.read_text(encoding="utf-8"), name, package=path.name == "__init__.py")


def modules_under(prefix: str) -> list[str]:
    """``prefix`` and, if it is a package, every module below it."""
    path = module_path(prefix)
    if path is None:
        return []
    if path.name != "__init__.py":
        return [prefix]
    names = []
    for file in sorted(path.parent.rglob("*.py")):
        rel = file.relative_to(path.parent).with_suffix("")
        if "__pycache__" in rel.parts:
            continue
        parts = [part for part in rel.parts if part != "__init__"]
        names.append(".".join([prefix, *parts]))
    return names


def import_graph() -> dict[str, set[str]]:
    """Every module of rsio_tck and rsio_tck.reference_peer -> the modules of ours it imports."""
    names = sorted(name for name in {*modules_under("rsio_tck"), *modules_under("rsio_tck.reference_peer")}
                   if module_path(name) is not None)  # a .py in a folder without __init__ is no module of ours
    return {name: {module for module in imports_of(name) if module_path(module) is not None} for name in names}
