"""Property-based fuzzing of a target on any binding (hypothesis), findings written as regression scenarios.

Theory of operation.  The programs are the binding's (``binding.fuzz_programs()`` and
``binding.fuzz_bystander()``; RS-IO's in ``rsio_tck.bindings.rsio.fuzz``): strategies that draw
programs, each a scenario.  This package is the binding-neutral engine: each example runs
through the ordinary scenario runner, so the monitor judges every frame the target returns; a
failure is shrunk by hypothesis, keyed by (rule, signature), and written as a YAML scenario
that reproduces it.

- ``rsio_tck.fuzz.engine``: the search, shrinking, deduplication by (rule, signature);
- ``rsio_tck.fuzz.findings``: ``fuzz-findings/*.yaml`` and ``fuzz.json``; ``rsio_tck.fuzz.cli``: ``rsio-tck fuzz``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import FuzzConfig, FuzzFinding, FuzzOutcome, fuzz, judge, signature
    from .findings import write_findings

# The names load on first use (PEP 562): ``rsio-tck``'s other commands import ``rsio_tck.fuzz.cli`` for its
# options and would otherwise pay for hypothesis and the scenario runner at every start.
_HOMES = {"FuzzConfig": "engine", "FuzzFinding": "engine", "FuzzOutcome": "engine", "fuzz": "engine",
          "judge": "engine", "signature": "engine", "write_findings": "findings"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_HOMES[name]}", __name__), name)

__all__ = ["FuzzConfig", "FuzzFinding", "FuzzOutcome", "fuzz", "judge", "signature", "write_findings"]
