"""No module of the kit or its reference peer is over 500 lines: modules are split by concept before they get there."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 500


def _line_counts() -> dict[str, int]:
    counts = {}
    for package in ("tck", "reference_peer"):
        for path in sorted((ROOT / package).rglob("*.py")):
            with path.open("rb") as file:
                counts[str(path.relative_to(ROOT))] = sum(1 for _ in file)
    return counts


def test_the_walk_sees_the_modules() -> None:
    counts = _line_counts()
    assert "tck/binding.py" in counts and "reference_peer/rsio/connection.py" in counts
    assert len(counts) > 100


def test_no_module_is_over_500_lines() -> None:
    over = {path: n for path, n in _line_counts().items() if n > LIMIT}
    assert not over, f"over {LIMIT} lines: " + ", ".join(f"{path} ({n})" for path, n in sorted(over.items()))
