"""The client x server grid of ``make interop``: every real client against every real server, judged.

Theory of operation: ``interop/run.py`` writes ``matrix.json``, one row per cell (client,
server, client test case) with the cell's verdict, the client's exit code and the MUST rules
the monitor found broken on each side of the proxied connection, and the binding the proxy judged the cell
with (``binding``; a matrix.json written before that column has none: None).  Spark reads it as a
table and aggregates it per (client, server) pair: how many cases passed, failed, were
known failures or skipped, and which rules each side broke; the publisher renders the grid.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 - pyspark's convention

from ..reader_words import word
from .public import slug

VERDICTS = ("pass", "fail", "xfail", "xpass", "skip")
OUTPUT_MOST = 2000  # characters of a client's printed lines kept per case: what it received, for the cell's page



def read_grid(spark: SparkSession, path: Path) -> list[dict[str, Any]]:
    """Per (client, server): verdict counts, the cases that did not pass, and the rules broken per side."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a client x server matrix: {exc}") from None
    if not isinstance(cells, list) or not all(isinstance(c, dict) and {"client", "server", "case", "verdict"} <= c.keys()
                                             for c in cells):
        raise ValueError(f"{path}: not a client x server matrix (a list of {{client, server, case, verdict}} rows)")
    if not cells:
        return []
    rows = [(str(c["client"]), str(c["server"]), str(c["case"]), str(c["verdict"]),
             [str(r) for r in c.get("client_rules") or []], [str(r) for r in c.get("server_rules") or []],
             c.get("client_exit") if isinstance(c.get("client_exit"), int) else None,
             str(c.get("output") or "")[:OUTPUT_MOST], str(c["binding"]) if c.get("binding") else None)
            for c in cells]
    frame = spark.createDataFrame(rows, "client string, server string, case string, verdict string, "
                                        "client_rules array<string>, server_rules array<string>, client_exit int, "
                                        "output string, binding string")
    counts = [F.sum(F.when(F.col("verdict") == v, 1).otherwise(0)).alias(v) for v in VERDICTS]
    grouped = frame.groupBy("client", "server").agg(
        *counts,
        F.max("binding").alias("binding"),  # one per pair (the grid's); None from a matrix.json without the column
        F.sort_array(F.collect_list(F.when(F.col("verdict") != "pass", F.concat_ws(": ", "case", "verdict"))))
        .alias("not_passed"),
        F.sort_array(F.array_distinct(F.flatten(F.collect_list("client_rules")))).alias("client_rules"),
        F.sort_array(F.array_distinct(F.flatten(F.collect_list("server_rules")))).alias("server_rules"),
        F.sort_array(F.collect_list(F.struct("case", "verdict", "client_exit", "client_rules", "server_rules",
                                             "output"))).alias("cases"),
    ).orderBy("client", "server")
    return [row.asDict(recursive=True) for row in grouped.collect()]


def grid_shape(pairs: list[dict[str, Any]], known: dict[tuple[str, str, str], Any] | None = None) -> dict[str, Any]:
    """Rows (clients), columns (servers) and cells keyed by (client, server), in the reader's words: each
    cell's cases passed and failed (a known failure counts as failed), its word, and per case the word and what
    the grid's baseline says of it (``known``: (client, server, case) -> an object with ``findings``, ``flaky``)."""
    known = known or {}
    clients = sorted({p["client"] for p in pairs})
    servers = sorted({p["server"] for p in pairs})
    cells = {}
    for pair in pairs:
        cases = []
        for case in pair.get("cases") or []:
            note = known.get((pair["client"], pair["server"], case["case"]))
            cases.append({**case, "word": word(case["verdict"]),
                          "findings": list(note.findings) if note else [], "flaky": bool(note and note.flaky),
                          "known": case["verdict"] in ("xfail", "xpass")})
        passed = pair.get("pass", 0) + pair.get("xpass", 0)
        failed = pair.get("fail", 0) + pair.get("xfail", 0)
        cell_word = "fail" if failed else ("pass" if passed else "not run")
        cells[(pair["client"], pair["server"])] = {
            **pair, "passed": passed, "failed": failed, "word": cell_word, "cases": cases,
            "page": f"grid/{slug(pair['client'])}--{slug(pair['server'])}.html",
            "findings": sorted({f for c in cases if c["word"] == "fail" for f in c["findings"]},
                               key=lambda f: int(f[1:]) if f[1:].isdigit() else 0)}
    return {"clients": clients, "servers": servers, "cells": cells}
