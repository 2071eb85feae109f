"""Wall time of the whole scenario suite against the local reference peer, per codec and --jobs.

The baseline is the same suite run one scenario at a time (--jobs 1) in the
same run; the figure is scenarios per second with concurrency, and the
ratio to h2spec's pace of about 150 tests per second.
"""

from __future__ import annotations

import asyncio
import time

from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.scenarios import RunConfig, Verdict, load_directory, run_suite
from rsio_tck.selfcheck import freedom_only

H2SPEC_PACE = 150.0  # tests per second


def main(jobs_list: tuple[int, ...] = (1, 16)) -> dict[str, float]:
    scenarios = load_directory()
    figures: dict[str, float] = {}
    for codec in ("msgpack", "varint"):
        with EmbeddedPeer(codec=codec) as url:
            config = RunConfig(target=url, codec=codec)
            asyncio.run(run_suite(scenarios[:5], config, jobs=4))  # warm up the peer
            for jobs in jobs_list:
                started = time.perf_counter()
                results = asyncio.run(run_suite(scenarios, config, jobs=jobs))
                wall = time.perf_counter() - started
                # The peer's deliberate TCK-9 warnings (its integer-width freedom) are passes here.
                failed = [r.id for r in results
                          if r.verdict not in (Verdict.PASS, Verdict.SKIP) and not freedom_only(r)]
                rate = len(results) / wall
                figures[f"{codec}_jobs{jobs}_seconds"] = wall
                print(f"  {codec:7s} --jobs {jobs:<3d} {len(results)} scenarios in {wall:5.2f} s = {rate:6.1f}/s "
                      f"({rate / H2SPEC_PACE:4.2f}x h2spec's ~150/s); not passing: {failed or 'none'}")
    print("  goal: the full suite in under 2 s of wall time")
    return figures


if __name__ == "__main__":
    main()
