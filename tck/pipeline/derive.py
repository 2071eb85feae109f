"""Derived tables: the compliance matrix, flakiness, violation counts, fuzz findings, wire statistics, latency.

Theory of operation: each function takes base-table DataFrames and returns one
derived DataFrame, in Spark SQL only (no Python UDFs), so they scale with the
cluster.  Verdicts combine by severity: a rule's verdict in a run is the worst
verdict among the scenarios that cite it (``VERDICT_ORDER``, worst first).
A run's target is (target, target_version); flakiness compares runs of the
same target version and kit version, so a changed verdict across versions is a
regression, not a flake.

Offline violations count against a target only when the target committed
them (``TARGET_SIDE``): the kit's own violations in the same traffic, most of
them deliberate (a scenario's ``kit_violations``), say nothing of the target.
A rule SPEC.md marks untested against a target (``Rule.untested_on_target``)
never gets a pass from a passing scenario, as in the run's own report: no
scenario can make a target exercise it.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..catalogue import RULES
from ..reader_words import FAILED_OUTCOMES
from .framing import ELEMENT_TYPES, EOF, PART_TYPES, RESET, UNDECODABLE

VERDICT_ORDER = ("fail", "error", "xpass", "warn", "xfail", "pass", "skip")
FAILING = ("fail", "error", "xpass")
FAILED = FAILED_OUTCOMES  # a run in which the scenario failed, for flakiness (reader_words)
PERCENTILES = (0.5, 0.9, 0.99)
# The kit dials the target and plays the client, in scenarios and fuzzing alike: in every connection
# it records, its own direction is the client side and the target's the server side.
TARGET_SIDE = "server"
UNTESTED_ON_TARGET = tuple(sorted(rule_id for rule_id, rule in RULES.items() if rule.untested_on_target))


def _by_target(violations: DataFrame) -> DataFrame:
    """The offline judge's violations that the target committed."""
    return violations.filter((F.col("source") == "offline") & (F.col("side") == TARGET_SIDE))


def _rank(verdict: Column) -> Column:
    rank = F.lit(len(VERDICT_ORDER))
    for index, name in reversed(list(enumerate(VERDICT_ORDER))):
        rank = F.when(verdict == name, F.lit(index)).otherwise(rank)
    return rank


def _unrank(rank: Column) -> Column:
    verdict = F.lit("unknown")
    for index, name in enumerate(VERDICT_ORDER):
        verdict = F.when(rank == index, F.lit(name)).otherwise(verdict)
    return verdict


def matrix_history(runs: DataFrame, results: DataFrame, violations: DataFrame) -> DataFrame:
    """One row per run and rule: the rule's verdict in that run, and the evidence counts."""
    per_rule = (
        results.select("run_id", "scenario", "verdict", F.explode("rules").alias("rule"))
        .filter(~((F.col("verdict") == "pass") & F.col("rule").isin(*UNTESTED_ON_TARGET)))
        .groupBy("run_id", "rule")
        .agg(F.min(_rank(F.col("verdict"))).alias("rank"), F.count("*").alias("scenarios"),
             F.sum(F.col("verdict").isin(*FAILING).cast("int")).alias("failed"))
    )
    offline = _by_target(violations).groupBy("run_id", "rule").agg(F.count("*").alias("offline_violations"))
    return (
        per_rule.join(runs.select("run_id", "target", "target_version", "kit_version", "started"), "run_id")
        .join(offline, ["run_id", "rule"], "left")
        .select("target", "target_version", "kit_version", "run_id", "started", "rule",
                _unrank(F.col("rank")).alias("verdict"), "scenarios", "failed",
                F.coalesce(F.col("offline_violations"), F.lit(0)).alias("offline_violations"))
    )


def matrix_latest(history: DataFrame) -> DataFrame:
    """Target x version x rule -> the verdict of that target version's latest run."""
    latest = Window.partitionBy("target", "target_version").orderBy(F.col("started").desc(), F.col("run_id").desc())
    last_runs = (history.select("target", "target_version", "run_id", "started").distinct()
                 .withColumn("n", F.row_number().over(latest)).filter(F.col("n") == 1).select("run_id"))
    return history.join(last_runs, "run_id").select(
        "target", "target_version", "rule", "verdict", "run_id", "kit_version", "offline_violations")


def run_summary(runs: DataFrame, results: DataFrame, violations: DataFrame) -> DataFrame:
    """One row per run: its target, when, verdict counts and offline violations."""
    counts = results.groupBy("run_id").pivot("verdict", list(VERDICT_ORDER)).count().fillna(0)
    offline = _by_target(violations).groupBy("run_id").agg(F.count("*").alias("offline_violations"))
    return (runs.select("run_id", "target", "target_version", "kit_version", "codec", "started", "fuzz", "path",
                        "interrupted")
            .join(counts, "run_id", "left").join(offline, "run_id", "left")
            .fillna(0, subset=[*VERDICT_ORDER, "offline_violations"]))


def flakiness(runs: DataFrame, results: DataFrame) -> DataFrame:
    """Per scenario, target version and kit version: runs, failing runs, fail rate, flaky flag."""
    judged = results.filter(~F.col("verdict").isin("skip")).join(
        runs.select("run_id", "target", "target_version", "kit_version"), "run_id")
    return (
        judged.groupBy("target", "target_version", "kit_version", "scenario")
        .agg(F.countDistinct("run_id").alias("runs"),
             F.sum(F.col("verdict").isin(*FAILED).cast("int")).alias("failing_runs"),
             F.countDistinct("verdict").alias("verdicts"),
             F.sort_array(F.collect_set("verdict")).alias("seen"))
        .withColumn("fail_rate", F.col("failing_runs") / F.col("runs"))
        .withColumn("flaky", (F.col("verdicts") > 1) & (F.col("runs") > 1))
        .drop("verdicts")
    )


def violations_by_rule(runs: DataFrame, violations: DataFrame) -> DataFrame:
    return (violations.join(runs.select("run_id", "target"), "run_id", "left")
            .groupBy("rule", "source", "side")
            .agg(F.count("*").alias("violations"), F.countDistinct("run_id").alias("runs"),
                 F.sort_array(F.collect_set("target")).alias("targets")))


def violations_by_signature(runs: DataFrame, violations: DataFrame) -> DataFrame:
    return (violations.join(runs.select("run_id", "target"), "run_id", "left")
            .groupBy("target", "signature", "rule", "source", "side")
            .agg(F.count("*").alias("violations"), F.countDistinct("run_id").alias("runs"),
                 F.sort_array(F.collect_set("target")).alias("targets"), F.first("message").alias("example")))


def fuzz_dedup(runs: DataFrame, fuzz: DataFrame) -> DataFrame:
    """Fuzz findings deduplicated across runs by rule and signature."""
    return (fuzz.join(runs.select("run_id", "target", "started", "path"), "run_id", "left")
            .groupBy("rule", "signature")
            .agg(F.sum("count").alias("examples"), F.countDistinct("run_id").alias("runs"),
                 F.sort_array(F.collect_set("target")).alias("targets"),
                 F.min("started").alias("first_seen"), F.max("started").alias("last_seen"),
                 F.first("message").alias("message"),
                 F.min(F.concat_ws("/", "path", "scenario_file")).alias("reproducer")))


def wire_stats(runs: DataFrame, frames: DataFrame) -> DataFrame:
    """Per target: frames, bytes per element, header overhead, packed and split shares, frames per connection."""
    element = F.col("type").isin(*ELEMENT_TYPES)
    # per connection first: partial aggregation shrinks millions of rows to one per connection
    per_connection = (
        frames.filter(~F.col("type").isin(EOF, RESET, UNDECODABLE))
        .groupBy("run_id", "connection")
        .agg(F.count("*").alias("frames"), F.sum("size").alias("bytes"),
             F.sum(F.when(element, F.col("size")).otherwise(0)).alias("element_frame_bytes"),
             F.sum("payload").alias("payload_bytes"), F.sum("elements").alias("elements"),
             F.sum(F.when(F.col("type") == "onNextPacked", F.col("size")).otherwise(0)).alias("packed_bytes"),
             F.sum(F.when(F.col("type").isin(*PART_TYPES), F.col("size")).otherwise(0)).alias("split_bytes"))
    )
    sums = ("frames", "bytes", "element_frame_bytes", "payload_bytes", "elements", "packed_bytes", "split_bytes")
    totals = (
        per_connection.join(F.broadcast(runs.select("run_id", "target")), "run_id")
        .groupBy("target")
        .agg(F.count("*").alias("connections"), *[F.sum(name).alias(name) for name in sums])
    )
    per_element = F.when(F.col("elements") > 0, F.col("element_frame_bytes") / F.col("elements"))
    by_element_bytes = F.when(F.col("element_frame_bytes") > 0, F.col("element_frame_bytes"))
    return totals.select(
        "target", "connections", "frames", "bytes", "elements", "element_frame_bytes", "payload_bytes",
        per_element.alias("bytes_per_element"),
        (1 - F.col("payload_bytes") / by_element_bytes).alias("header_overhead"),
        (F.col("packed_bytes") / by_element_bytes).alias("packed_share"),
        (F.col("split_bytes") / by_element_bytes).alias("split_share"),
        (F.col("frames") / F.col("connections")).alias("frames_per_connection"),
    )


def frame_types(runs: DataFrame, frames: DataFrame) -> DataFrame:
    """Per target, direction and wire type: frames and bytes.  Binding-neutral: the type is the binding's own
    frame name (RSocket's PAYLOAD, Ditto's envelope kind, RS-IO's onNext), so every binding's page has it."""
    return (frames.filter(~F.col("type").isin(EOF, RESET, UNDECODABLE))
            .join(F.broadcast(runs.select("run_id", "target")), "run_id")
            .groupBy("target", "direction", "type")
            .agg(F.count("*").alias("frames"), F.sum("size").alias("bytes")))


def latency(runs: DataFrame, frames: DataFrame) -> DataFrame:
    """Per target and measure: percentiles of request -> first element and subscribe -> onSubscribe (seconds)."""
    subscribing = F.when(F.col("type").isin("request", "subscribe"), F.col("direction")).otherwise(
        F.when(F.col("direction") == "c2s", "s2c").otherwise("c2s"))
    firsts = (
        frames.filter(F.col("type").isin("request", "subscribe", "onSubscribe", *ELEMENT_TYPES))
        .withColumn("space", subscribing)
        .groupBy("run_id", "connection", "space", "id")
        .agg(F.min(F.when(F.col("type") == "request", F.col("t"))).alias("request"),
             F.min(F.when(F.col("type").isin(*ELEMENT_TYPES), F.col("t"))).alias("element"),
             F.min(F.when(F.col("type") == "subscribe", F.col("t"))).alias("subscribe"),
             F.min(F.when(F.col("type") == "onSubscribe", F.col("t"))).alias("on_subscribe"))
    )
    measures = firsts.select(
        "run_id",
        F.explode(F.array(
            F.struct(F.lit("request_to_first_element").alias("measure"),
                     (F.col("element") - F.col("request")).alias("seconds")),
            F.struct(F.lit("subscribe_to_on_subscribe").alias("measure"),
                     (F.col("on_subscribe") - F.col("subscribe")).alias("seconds")),
        )).alias("m"),
    ).select("run_id", "m.measure", "m.seconds").filter(F.col("seconds") >= 0)
    quantiles = F.percentile_approx("seconds", list(PERCENTILES), 10000)
    return (
        measures.join(F.broadcast(runs.select("run_id", "target")), "run_id")
        .groupBy("target", "measure")
        .agg(F.count("*").alias("samples"), quantiles.alias("q"), F.max("seconds").alias("max"))
        .select("target", "measure", "samples", F.col("q")[0].alias("p50"), F.col("q")[1].alias("p90"),
                F.col("q")[2].alias("p99"), "max")
    )


def derive_all(tables: dict[str, DataFrame]) -> dict[str, DataFrame]:
    runs, results, violations = tables["runs"], tables["scenario_results"], tables["violations"]
    history = matrix_history(runs, results, violations)
    return {
        "matrix_history": history,
        "matrix_latest": matrix_latest(history),
        "run_summary": run_summary(runs, results, violations),
        "flakiness": flakiness(runs, results),
        "violations_by_rule": violations_by_rule(runs, violations),
        "violations_by_signature": violations_by_signature(runs, violations),
        "fuzz_dedup": fuzz_dedup(runs, tables["fuzz_findings"]),
        "wire_stats": wire_stats(runs, tables["frames"]),
        "frame_types": frame_types(runs, tables["frames"]),
        "latency": latency(runs, tables["frames"]),
    }
