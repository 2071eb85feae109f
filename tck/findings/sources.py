"""Reading the repository files a bug report is made from: FINDINGS.md and, beside it, ``interop/``.

This is the only module of the package that touches the file system on the way in; every file is read
once, and a file that cannot be read is one ``FindingsError`` line naming it.  A missing optional file
(an implementation without ``isolate.txt``, a checkout without the grid's baseline) is simply empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .baselines import BaselineLine, GridCell, parse_baseline, parse_grid, parse_isolated, parse_versions
from .entries import Findings, FindingsError, parse_findings


@dataclass(frozen=True, slots=True)
class Sources:
    findings: Findings
    baseline: tuple[BaselineLine, ...]  # every implementation's
    grid: tuple[GridCell, ...]
    versions: dict[str, str]  # interop/run.py's VERSIONS
    isolated: dict[tuple[str, str], str]  # (implementation, scenario) -> why it needs a fresh server


def _read(path: Path, shown: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise FindingsError(f"{shown}: {reason}") from None


def read_sources(findings_path: Path) -> Sources:
    """FINDINGS.md at ``findings_path`` and the interop files of the checkout it is in."""
    if findings_path.is_dir():
        raise FindingsError(f"--findings {findings_path}: a directory; give the FINDINGS.md file")
    if not findings_path.exists():
        raise FindingsError(f"--findings {findings_path}: no such file (run from the kit's checkout, or give "
                            "--findings PATH/FINDINGS.md)")
    findings = parse_findings(_read(findings_path, str(findings_path)), source=str(findings_path))
    interop = findings_path.parent / "interop"
    if not interop.is_dir():
        raise FindingsError(f"{findings_path}: no interop/ folder beside it, where the baselines that reproduce the "
                            "findings are")
    baseline: list[BaselineLine] = []
    isolated: dict[tuple[str, str], str] = {}
    for folder in sorted(p for p in interop.iterdir() if p.is_dir()):
        path = folder / "baseline.txt"
        if path.is_file():
            shown = f"interop/{folder.name}/baseline.txt"
            baseline += parse_baseline(_read(path, shown), folder.name, shown)
        isolate = folder / "isolate.txt"
        if isolate.is_file():
            for scenario, why in parse_isolated(_read(isolate, f"interop/{folder.name}/isolate.txt")).items():
                isolated[(folder.name, scenario)] = why
    grid_path = interop / "matrix-baseline.txt"
    grid = parse_grid(_read(grid_path, "interop/matrix-baseline.txt"), "interop/matrix-baseline.txt") \
        if grid_path.is_file() else []
    run_py = interop / "run.py"
    versions = parse_versions(_read(run_py, "interop/run.py"), "interop/run.py") if run_py.is_file() else {}
    return Sources(findings=findings, baseline=tuple(baseline), grid=tuple(grid), versions=versions,
                   isolated=isolated)
