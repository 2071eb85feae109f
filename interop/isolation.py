"""One scenario of an implementation that runs on a fresh server of its own (``run.py``, "Isolation").

Usage: python interop/isolation.py SPEC_JSON, with ``{"name", "target_name", "capabilities": FILE or null,
"baseline": FILE or null, "report_dir": DIR, "scenario": ID, "file": its scenario file}``.  Starts ``interop/NAME/server`` once it has
loaded the kit, runs the scenario against it with the runner's own configuration (``rsio-tck run``'s
defaults: signal timeout, budget, silence window; the capabilities; the baseline) and writes a run directory
under ``report_dir``, which ``run.py`` merges into the implementation's shared run.  Prints one line (the
verdict, the server's start, the scenario's time); exit 0 with a result, 3 without (the server did not listen).

What ``rsio-tck run -k ID`` did here before, and this does not: the report (``run.py`` rebuilds the merged
run's), a process pool for the pcaps (written inline: one scenario), and the liveness probe after a time-out
(``tck/scenarios/liveness.py``).  The probe decides whether the scenarios *after* one may still be judged on
the same target; no scenario comes after on this server, which is stopped, so it decided nothing, at the cost
of its whole bound (5 s) against a server still flooding the connection it was just given (rsocket-rust,
FINDINGS.md F1), and the merged run said the target "stopped answering" during one isolated scenario with
every other one "not judged", which was not so.  The verdicts are the runner's own.

Why a process per scenario and not one for all: rsocket-rust's ``tck/infinite`` responder either floods at
once or delivers nothing (F1: a task that never yields), and which one depends on the kit's timing.  A kit
process's first connection writes its SETUP tens of milliseconds after connecting (code not yet warm), and
there rsocket-rust always delivered nothing (the baseline's lines); a warm process writes it within a
millisecond, and then either outcome comes, by chance (measured on 2026-11-28: RSFLOW-005 warns or fails
RS-FLOW-2, RSFLOW-011 passes).  A fresh process per scenario keeps the conditions the baseline was
triaged under.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from processes import Server

BINDING = "rsocket"


async def run_one(spec: dict[str, Any]) -> int:
    from rsio_tck import gate
    from rsio_tck.report.rundir import run_id
    from rsio_tck.scenarios import load_paths, run_scenario

    binding, profile = gate.check_wire(BINDING, None)
    capabilities = gate.load_capabilities(Path(spec["capabilities"]) if spec["capabilities"] else None, binding)
    baseline = gate.read_baseline(Path(spec["baseline"])) if spec["baseline"] else frozenset()
    named = gate.check_target_name(spec["target_name"])
    # Its own file only: the whole suite's files take seconds to parse and validate on a loaded machine.
    scenario = next(s for s in load_paths([Path(spec["file"])], binding=binding) if s.id == spec["scenario"])
    began = time.monotonic()
    server = Server(spec["name"])
    try:
        url = server.__enter__()
    except RuntimeError as exc:  # it did not listen in time
        print(f"interop: {spec['name']} {scenario.id}: {exc}", flush=True)
        return 3
    wall = time.time()
    try:
        listening = time.monotonic()
        # No probe_timeout: no liveness probe (see the module's docstring); the rest as ``rsio-tck run``.
        config = gate.run_config(binding, profile, target=url, capabilities=capabilities, baseline=baseline,
                                 keep_trace=True)
        result = await run_scenario(scenario, config)
    finally:
        server.__exit__()
    directory = Path(spec["report_dir"]) / run_id()
    directory.mkdir(parents=True, exist_ok=True)
    recorder = gate.open_run(directory, target=url, codec=profile, binding=binding, started=wall,
                             capabilities=capabilities, target_name=named[0], target_version=named[1],
                             pcap_workers=0)
    recorder.add(result)
    recorder.finish(time.time(), 1)
    print(f"interop: {spec['name']} {scenario.id}: {result.verdict.value}; server listening after "
          f"{listening - began:.2f} s, scenario {result.duration or 0:.2f} s", flush=True)
    return 0


def main() -> int:
    return asyncio.run(run_one(json.loads(sys.argv[1])))


if __name__ == "__main__":
    sys.exit(main())
