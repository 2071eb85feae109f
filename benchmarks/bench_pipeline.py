"""The pipeline at scale: judge and aggregate N frame rows (default 10,000,000 over 100,000 connections).

Steps, all in one run: a synthetic corpus (runs + frames Parquet) is generated
by Spark (cached by size and seed under --cache, not timed); then the same job
-- judge every connection with the monitor (mapInArrow), count violations by
rule, and compute the wire statistics per target -- runs on local[1] and on
local[2]; then the single-process baseline does the same work on the same
Parquet files with pyarrow + plain Python (the same monitor walk) + pandas.
Figures: rows/s for each, the speedup from 1 to 2 cores, and the ratio of
Spark local[2] to the baseline.  Every configuration's violation count must
equal the number of connections the generator made faulty.

With ``--standalone 1,2`` the clustered-files judge also runs on a Spark
standalone cluster on loopback (rsio_tck.pipeline.standalone), one per count:
a master and N workers of one core and 1 GB each, started, waited for (the
application's N executors too), timed and stopped; the figures add rows/s per
worker count and the speedup from 1 to 2 workers.

    python -m benchmarks bench_pipeline [--rows 1000000] [--cache DIR] [--standalone 1,2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

FRAMES_PER_CONNECTION = 100


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench_pipeline")
    parser.add_argument("--rows", type=int, default=10_000_000, help="frame rows (about; 100 per connection)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rsio-bench-pipeline")
    parser.add_argument("--cores", default="1,2", help="local[N] configurations to time (clustered-files judge)")
    parser.add_argument("--standalone", default="",
                        help="worker counts of standalone clusters on loopback to time (clustered-files judge), e.g. 1,2")
    parser.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=True,
                        help="also time the general shuffle+sort judge on local[2]")
    return parser.parse_known_args(argv)[0]


def _corpus(cache: Path, rows: int, seed: int) -> tuple[Path, dict[str, int], float]:
    from rsio_tck.pipeline.bulk import BulkSpec, write_bulk_corpus
    from rsio_tck.pipeline.spark_session import spark_session

    connections = max(1, rows // FRAMES_PER_CONNECTION)
    warehouse = cache.resolve() / f"rows{rows}-seed{seed}"  # absolute: a cluster's executors work elsewhere
    meta = warehouse / "bulk.json"
    if meta.is_file():
        return warehouse, json.loads(meta.read_text())["counts"], 0.0
    started = time.perf_counter()
    spark = spark_session("local[2]")
    counts = write_bulk_corpus(spark, warehouse, BulkSpec(connections, FRAMES_PER_CONNECTION, seed),
                               partitions=max(4, min(64, connections // 500)))
    return warehouse, counts, time.perf_counter() - started


def _faulty(warehouse: Path) -> int:
    from rsio_tck.bindings.rsio.corpus import synthetic_connection
    from rsio_tck.pipeline.bulk import BulkSpec

    spec = json.loads((warehouse / "bulk.json").read_text())["spec"]
    bulk = BulkSpec(spec["connections"], spec["frames_per_connection"], spec["seed"])
    faulty = 0
    for number in range(bulk.connections):
        target, _ = bulk.run_of(number)
        if target.fault_rate:  # only these can be faulty; generating them again is the cheap way to know
            faulty += synthetic_connection(bulk.seed, number, target, 4)[1]
    return faulty


def spark_job(master: str, warehouse: Path, shuffle: bool) -> tuple[float, dict[str, int], list[dict[str, object]]]:
    """Judge + aggregate on ``master``: (seconds, violations by rule, wire stats rows).

    ``shuffle``: the general judge (repartition by connection, sort, mapInArrow); else the
    clustered-files judge.  A small warm-up job runs first, untimed, so both core counts
    start with a warm JVM.
    """
    from pyspark.sql import functions as F

    from rsio_tck.pipeline.derive import wire_stats
    from rsio_tck.pipeline.ingest import read_table
    from rsio_tck.pipeline.judge import judge_files, judge_frames
    from rsio_tck.pipeline.spark_session import spark_session

    spark = spark_session(master)
    cores = spark.sparkContext.defaultParallelism
    frames, runs = read_table(spark, warehouse, "frames"), read_table(spark, warehouse, "runs")
    sample = frames.filter(F.col("connection") < 300)
    judge_frames(sample, runs, partitions=cores).count()
    wire_stats(runs, sample).collect()
    started = time.perf_counter()
    if shuffle:
        found = judge_frames(frames, runs, partitions=cores * 4)
    else:
        codecs = {r["run_id"]: r["codec"] for r in runs.select("run_id", "codec").collect()}
        found = judge_files(spark, warehouse / "frames", codecs)
    by_rule = {r["rule"]: r["n"] for r in found.groupBy("rule").agg(F.count("*").alias("n")).collect()}
    judged = time.perf_counter()
    stats = [r.asDict() for r in wire_stats(runs, frames).collect()]
    print(f"    judge {judged - started:.1f} s + wire statistics {time.perf_counter() - judged:.1f} s", flush=True)
    return time.perf_counter() - started, by_rule, stats


def baseline_job(warehouse: Path) -> tuple[float, dict[str, int], dict[str, dict[str, float]]]:
    """The same work in one process: pyarrow reads, the same monitor walk, pandas for the statistics."""
    import pyarrow.parquet as pq

    from rsio_tck.pipeline.framing import ELEMENT_TYPES
    from rsio_tck.pipeline.judge import judge_table

    started = time.perf_counter()
    runs = pq.read_table(warehouse / "runs").to_pandas()
    codec_of = dict(zip(runs["run_id"], runs["codec"]))
    target_of = dict(zip(runs["run_id"], runs["target"]))
    by_rule: Counter[str] = Counter()
    totals: dict[str, Counter[str]] = {}
    for path in sorted((warehouse / "frames").glob("*.parquet")):
        table = pq.read_table(path, columns=["run_id", "scenario", "connection", "seq", "direction", "type", "t",
                                             "data", "size", "payload", "elements"])
        found, _ = judge_table(table, codec_of)
        by_rule.update(found.column("rule").to_pylist())
        frame = table.drop_columns(["data", "scenario", "direction", "t"]).to_pandas()
        frame = frame[~frame["type"].isin(["eof", "undecodable"])]
        frame["target"] = frame["run_id"].map(target_of)
        frame["element"] = frame["type"].isin(list(ELEMENT_TYPES))
        frame["element_size"] = frame["size"].where(frame["element"], 0)
        for target, group in frame.groupby("target"):
            sums = totals.setdefault(str(target), Counter())
            sums["frames"] += len(group)
            sums["bytes"] += int(group["size"].sum())
            sums["elements"] += int(group["elements"].sum())
            sums["element_frame_bytes"] += int(group["element_size"].sum())
            sums["payload_bytes"] += int(group["payload"].sum())
            sums["connections"] += group[["run_id", "connection"]].drop_duplicates().shape[0]
    stats = {t: {"frames": c["frames"], "bytes_per_element": c["element_frame_bytes"] / max(1, c["elements"]),
                 "frames_per_connection": c["frames"] / max(1, c["connections"])} for t, c in totals.items()}
    return time.perf_counter() - started, dict(by_rule), stats


def _stop_session() -> None:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        active.stop()


def standalone_job(workers: int, warehouse: Path) -> tuple[float, dict[str, int], list[dict[str, object]]]:
    """``spark_job`` (clustered-files judge) on a standalone cluster of ``workers`` one-core workers on loopback."""
    from rsio_tck.pipeline.spark_session import spark_session
    from rsio_tck.pipeline.standalone import standalone_cluster, wait_for_executors

    with tempfile.TemporaryDirectory(prefix=f"rsio-bench-standalone{workers}-") as logs:
        with standalone_cluster(Path(logs), workers=workers) as url:
            try:
                # The one session of this process moves to the cluster (spark_session stops the local one);
                # timing starts once every worker's executor has joined.
                wait_for_executors(spark_session(url).sparkContext, workers)
                return spark_job(url, warehouse, shuffle=False)
            finally:  # the application before its master: a driver whose master vanished logs errors
                _stop_session()


def main() -> dict[str, float]:
    args = _args([a for a in sys.argv[1:] if a != "bench_pipeline"])
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    warehouse, counts, generated = _corpus(args.cache, args.rows, args.seed)
    rows = counts["frames"]
    faulty = _faulty(warehouse)
    print(f"  corpus: {rows:,} frame rows, {args.rows // FRAMES_PER_CONNECTION:,} connections, {counts['runs']} runs, "
          f"{faulty} planted violations; " + (f"generated in {generated:.1f} s" if generated else f"cached in {warehouse}"),
          flush=True)
    figures: dict[str, float] = {"rows": float(rows)}
    spark_stats: list[dict[str, object]] = []
    runs = [(int(c), False) for c in args.cores.split(",") if c] + ([(2, True)] if args.shuffle else [])
    for cores, shuffle in runs:
        seconds, by_rule, spark_stats = spark_job(f"local[{cores}]", warehouse, shuffle)
        name = f"spark_local{cores}" + ("_shuffle" if shuffle else "")
        figures[f"{name}_seconds"] = seconds
        ok = sum(by_rule.values()) == faulty
        how = "shuffle+sort judge" if shuffle else "clustered-files judge"
        print(f"  spark local[{cores}] {how}: {seconds:7.1f} s = {rows / seconds:>10,.0f} rows/s; violations {by_rule} "
              f"{'= planted' if ok else '!= planted ' + str(faulty)}", flush=True)
    for workers in [int(n) for n in args.standalone.split(",") if n]:
        seconds, by_rule, spark_stats = standalone_job(workers, warehouse)
        figures[f"spark_standalone{workers}_seconds"] = seconds
        ok = sum(by_rule.values()) == faulty
        print(f"  spark standalone, {workers} worker(s) x 1 core, clustered-files judge: {seconds:7.1f} s = "
              f"{rows / seconds:>10,.0f} rows/s; violations {by_rule} {'= planted' if ok else '!= planted ' + str(faulty)}",
              flush=True)
    _stop_session()
    seconds, by_rule, stats = baseline_job(warehouse)
    figures["baseline_seconds"] = seconds
    print(f"  baseline (1 process): {seconds:7.1f} s = {rows / seconds:>10,.0f} rows/s; violations {by_rule}", flush=True)
    for row in spark_stats:
        mine = stats.get(str(row["target"]), {})
        same = mine.get("frames") == row["frames"] and abs(mine.get("bytes_per_element", 0) - float(row["bytes_per_element"] or 0)) < 1e-9  # type: ignore[arg-type]
        print(f"    {row['target']}: {row['frames']:,} frames, {row['bytes_per_element']:.2f} B/element, "
              f"{row['frames_per_connection']:.1f} frames/connection; baseline agrees: {same}")
    if "spark_local1_seconds" in figures and "spark_local2_seconds" in figures:
        speedup = figures["spark_local1_seconds"] / figures["spark_local2_seconds"]
        figures["speedup_1_to_2"] = speedup
        print(f"  speedup local[1] -> local[2]: {speedup:.2f}x")
    if "spark_standalone1_seconds" in figures and "spark_standalone2_seconds" in figures:
        speedup = figures["spark_standalone1_seconds"] / figures["spark_standalone2_seconds"]
        figures["speedup_1_to_2_workers"] = speedup
        print(f"  speedup 1 -> 2 standalone workers: {speedup:.2f}x")
    best = min(v for k, v in figures.items() if k.startswith("spark_") and k.endswith("_seconds"))
    figures["baseline_over_spark"] = seconds / best
    print(f"  baseline time / best Spark time: {seconds / best:.2f}x (> 1: Spark is faster)")
    return figures


if __name__ == "__main__":
    main()
