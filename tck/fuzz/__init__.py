"""Property-based fuzzing of RS-IO targets (hypothesis), findings written as regression scenarios.

- ``tck.fuzz.program``: strategies that draw programs (scenarios) of episodes;
- ``tck.fuzz.publisher``: the kit-as-publisher episode through ``tck/subscribe``;
- ``tck.fuzz.mutate``: malformed input from the scapy layer (``tck.dissect``);
- ``tck.fuzz.engine``: the search, shrinking, deduplication by (rule, signature);
- ``tck.fuzz.findings``: ``fuzz-findings/*.yaml`` and ``fuzz.json``; ``tck.fuzz.cli``: ``rsio-tck fuzz``.
"""

from __future__ import annotations

from .engine import FuzzConfig, FuzzFinding, FuzzOutcome, fuzz, judge, signature
from .findings import write_findings

__all__ = ["FuzzConfig", "FuzzFinding", "FuzzOutcome", "fuzz", "judge", "signature", "write_findings"]
