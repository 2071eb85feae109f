"""Property-based fuzzing of a target on any binding (hypothesis), findings written as regression scenarios.

The programs are the binding's (``binding.fuzz_programs()`` and ``binding.fuzz_bystander()``;
RS-IO's in ``rsio_tck.bindings.rsio.fuzz``); this package is the binding-neutral engine:

- ``rsio_tck.fuzz.engine``: the search, shrinking, deduplication by (rule, signature);
- ``rsio_tck.fuzz.findings``: ``fuzz-findings/*.yaml`` and ``fuzz.json``; ``rsio_tck.fuzz.cli``: ``rsio-tck fuzz``.
"""

from __future__ import annotations

from .engine import FuzzConfig, FuzzFinding, FuzzOutcome, fuzz, judge, signature
from .findings import write_findings

__all__ = ["FuzzConfig", "FuzzFinding", "FuzzOutcome", "fuzz", "judge", "signature", "write_findings"]
