"""Fault detection by the fuzzer (issue 5): every reference-peer fault, the fuzzer told nothing about it.

For each fault the reference peer starts with that fault alone; the fuzzer runs
until its first finding or 60 s (``RSIO_FUZZ_BUDGET``), whichever comes first.
Prints found/total, the percentage and examples per second.  ``python -m
benchmarks bench_fuzz``; ``RSIO_FUZZ_FAULTS=a,b`` restricts the faults.
"""

from __future__ import annotations

import os
import time

from rsio_tck.embedded import REASSEMBLY_LIMIT, EmbeddedPeer
from rsio_tck.fuzz import FuzzConfig, fuzz
from rsio_tck.reference_peer.rsio.faults import FAULTS
from rsio_tck.reference_peer.rsio.freedoms import DELIBERATE_WARNINGS

BUDGET = float(os.environ.get("RSIO_FUZZ_BUDGET", "60"))


def main() -> None:
    names = sorted(FAULTS)
    wanted = os.environ.get("RSIO_FUZZ_FAULTS")
    if wanted:
        names = [n for n in names if n in wanted.split(",")]
    codec = os.environ.get("RSIO_FUZZ_CODEC", "msgpack")
    found, examples, elapsed = 0, 0, 0.0
    for name in names:
        started = time.monotonic()
        with EmbeddedPeer(codec=codec, faults=[name]) as url:
            outcome = fuzz(FuzzConfig(target=url, codec=codec, examples=100_000, seed=0, time_budget=BUDGET,
                                      reassembly_limit=REASSEMBLY_LIMIT,
                                      shrink_budget=5.0, stop_at_first=True, tolerated=DELIBERATE_WARNINGS))
        hits = [f for f in outcome.findings if f.count]
        found += bool(hits)
        examples += outcome.examples
        elapsed += outcome.elapsed
        what = f"{hits[0].rule}: {hits[0].message[:90]}" if hits else "not found"
        print(f"   {name:28} {'FOUND' if hits else 'miss '} {time.monotonic() - started:5.1f} s "
              f"{outcome.examples:5d} ex  {what}", flush=True)
    total = len(names)
    print(f"   faults found: {found}/{total} ({100.0 * found / max(total, 1):.1f}%), budget {BUDGET:g} s each, "
          f"codec {codec}")
    print(f"   examples per second: {examples / elapsed if elapsed else 0.0:.1f} ({examples} examples, {elapsed:.0f} s)")


if __name__ == "__main__":
    main()
