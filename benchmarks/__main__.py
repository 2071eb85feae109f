"""``make bench``: every benchmark, each printing its figures and ratios against a baseline
measured in the same run.  Loopback only; every loop is bounded in count and time."""

from __future__ import annotations

import importlib
import sys
import time

BENCHES = [
    ("decode + monitor (issue 2)", "benchmarks.bench_core"),
    ("reference peer throughput (issue 3)", "benchmarks.bench_peer"),
    ("scenario suite wall time, every binding, against h2spec's 150/s (issues 4 and 29)", "benchmarks.bench_suite"),
    ("the silence window under load: the shortest that keeps every verdict (issue 29)", "benchmarks.bench_window"),
    ("fuzzer fault detection (issue 5)", "benchmarks.bench_fuzz"),
    ("Spark pipeline: judge + aggregate frame rows (issue 7)", "benchmarks.bench_pipeline"),
    ("RSocket decode + monitor against a bare length-prefix split (issue 14)", "benchmarks.bench_rsocket"),
    ("kit peak RSS and wall time under a flooding target (issue 15)", "benchmarks.bench_flood"),
    ("kit wall time and peak RSS against hostile RS-IO, RSocket and Ditto targets (issue 27)", "benchmarks.bench_hostile"),
    ("the proxy's throughput on loopback, relaying and judging RSocket (issue 27: its budget)", "benchmarks.bench_proxy"),
    ("the RSocket endpoint's receive path against its decoder alone (issue 28: the judge owns the streams)",
     "benchmarks.bench_endpoint"),
    ("offline judging per binding against a bare decode: check-pcap and the pipeline (issue 29 part 4)",
     "benchmarks.bench_offline"),
    ("make test and make interop, as their last runs in this checkout recorded them (issue 29 parts 2 and 3)",
     "benchmarks.bench_ci"),
]


def main() -> int:
    only = sys.argv[1:]
    for title, module_name in BENCHES:
        if only and not any(word in module_name for word in only):
            continue
        print(f"\n== {title} ==", flush=True)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            print(f"   not available: {exc}")
            continue
        started = time.perf_counter()
        module.main()
        print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
