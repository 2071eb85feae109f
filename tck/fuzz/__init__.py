"""Property-based fuzzing of RS-IO targets (hypothesis), findings written as regression scenarios.

- ``rsio_tck.fuzz.program``: strategies that draw programs (scenarios) of episodes;
- ``rsio_tck.fuzz.publisher``: the kit-as-publisher episode through ``tck/subscribe``;
- ``rsio_tck.fuzz.mutate``: malformed input from the scapy layer (``rsio_tck.dissect``);
- ``rsio_tck.fuzz.engine``: the search, shrinking, deduplication by (rule, signature);
- ``rsio_tck.fuzz.findings``: ``fuzz-findings/*.yaml`` and ``fuzz.json``; ``rsio_tck.fuzz.cli``: ``rsio-tck fuzz``.
"""

from __future__ import annotations

from .engine import FuzzConfig, FuzzFinding, FuzzOutcome, fuzz, judge, signature
from .findings import write_findings

__all__ = ["FuzzConfig", "FuzzFinding", "FuzzOutcome", "fuzz", "judge", "signature", "write_findings"]
