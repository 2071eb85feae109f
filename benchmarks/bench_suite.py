"""Wall time of each binding's whole scenario suite against its local reference peer, per wire profile and --jobs.

Every binding and profile the kit ships: RS-IO over msgpack and varint, RSocket 1.0, Ditto's streaming
and search profiles.  Each suite runs once with --jobs 1 (the baseline, in the same run) and once with
--jobs 16; the figure is scenarios per second of ``run_suite`` wall time at --jobs 16, and its ratio to
h2spec's pace of about 150 tests per second.  The goal (issue 29): at least 150/s, and no single
scenario over 1 s at --jobs 16 (the slowest is printed).  Bounded: one run of each suite per --jobs.
"""

from __future__ import annotations

import asyncio
import time

from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.scenarios import RunConfig, ScenarioResult, Verdict, load_directory, run_suite
from rsio_tck.selfcheck import freedom_only

H2SPEC_PACE = 150.0  # tests per second
GOAL_RATE = H2SPEC_PACE  # scenarios per second at --jobs 16
GOAL_SLOWEST = 1.0  # seconds: no scenario longer at --jobs 16
# (binding, profile) of every suite, as ``rsio-tck run --binding B --codec P`` names them.
SUITES = (("rsio", "msgpack"), ("rsio", "varint"), ("rsocket", "rsocket-1.0"), ("ditto", "streaming"),
          ("ditto", "search"))


def _not_passing(results: list[ScenarioResult], binding: str) -> list[str]:
    # The RS-IO peer's deliberate TCK-9 warnings (its integer-width freedom) are passes here.
    return [r.id for r in results
            if r.verdict not in (Verdict.PASS, Verdict.SKIP) and not freedom_only(r, binding)]


def main(jobs_list: tuple[int, ...] = (1, 16), suites: tuple[tuple[str, str], ...] = SUITES) -> dict[str, float]:
    figures: dict[str, float] = {}
    met = True
    for binding, profile in suites:
        scenarios = load_directory(binding=binding)
        with EmbeddedPeer(binding=binding, profile=profile) as url:
            config = RunConfig(target=url, codec=profile, binding=binding)
            asyncio.run(run_suite(scenarios[:5], config, jobs=4))  # warm up the peer
            walls: dict[int, float] = {}
            for jobs in jobs_list:
                started = time.perf_counter()
                results = asyncio.run(run_suite(scenarios, config, jobs=jobs))
                wall = walls[jobs] = time.perf_counter() - started
                figures[f"{binding}_{profile}_jobs{jobs}_seconds"] = wall
                ran = [r for r in results if r.verdict is not Verdict.SKIP]
                slowest = max(results, key=lambda r: r.duration)
                rate = len(results) / wall
                figures[f"{binding}_{profile}_jobs{jobs}_slowest"] = slowest.duration
                goal = ""
                if jobs == max(jobs_list):
                    ok = rate >= GOAL_RATE and slowest.duration <= GOAL_SLOWEST
                    met = met and ok
                    goal = f"; goal >= {GOAL_RATE:.0f}/s, none over {GOAL_SLOWEST:g} s: {'met' if ok else 'NOT met'}"
                print(f"  {binding:7s} {profile:11s} --jobs {jobs:<3d} {len(results):3d} scenarios ({len(ran)} run) "
                      f"in {wall:5.2f} s = {rate:6.1f}/s ({rate / H2SPEC_PACE:4.2f}x h2spec's ~150/s); slowest "
                      f"{slowest.id} {slowest.duration:.2f} s{goal}; not passing: "
                      f"{_not_passing(results, binding) or 'none'}", flush=True)
    print(f"  goal (issue 29): every suite >= {GOAL_RATE:.0f} scenarios/s at --jobs {max(jobs_list)} and no scenario "
          f"over {GOAL_SLOWEST:g} s: {'met' if met else 'NOT met'}")
    return figures


if __name__ == "__main__":
    main()
