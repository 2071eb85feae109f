"""The landing page over several published sites: who conforms, in every role, and the grid underneath.

Theory of operation.  ``make interop`` publishes one site per role (the implementations as servers, as
clients, and Ditto's client), each with its scorecards in ``site.json``.  ``write_landing`` reads them back
and writes one ``index.html`` above them: a scorecard row per implementation and role, each linking into
its site (rule pages, findings, badges stay where they were written), and the client x server grid of the
site that has one.  It reads only the sites' ``site.json``: no Spark, and nothing a site did not publish.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from .. import __version__
from ..output_files import write_text

SITE_JSON_MOST = 64 * 1024 * 1024  # bytes: a site.json of the interop sites is a few MB


class LandingError(ValueError):
    """A site the landing page cannot be made from; the message is one line."""


def _site(out: Path, folder: str) -> dict[str, Any]:
    path = out / folder / "site.json"
    try:
        if path.stat().st_size > SITE_JSON_MOST:
            raise LandingError(f"{path}: larger than {SITE_JSON_MOST} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LandingError(f"{path}: not a published site: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("scorecards"), list):
        raise LandingError(f"{path}: no scorecards (published by an older kit?)")
    return data


def write_landing(out: Path, sites: list[tuple[str, str]], title: str) -> Path:
    """``out``/index.html over the sites ``(heading, folder under out)``; returns its path."""
    rows, grid, grid_site, runs = [], None, None, 0
    for heading, folder in sites:
        data = _site(out, folder)
        runs += len(data.get("runs") or [])
        for card in data["scorecards"]:
            rows.append({**card, "site": folder, "heading": heading})
        if grid is None and data.get("grid_cells"):
            grid, grid_site = data["grid_cells"], folder
    shaped = None
    if grid is not None:
        shaped = {"clients": sorted({c["client"] for c in grid}), "servers": sorted({c["server"] for c in grid}),
                  "cells": {(c["client"], c["server"]): c for c in grid}}
    env = Environment(loader=PackageLoader("rsio_tck.pipeline", "templates"), autoescape=select_autoescape(["html"]))
    page = out / "index.html"
    write_text(page, env.get_template("landing.html").render(
        root="", title=title, sites=sites, rows=sorted(rows, key=lambda r: (r["target"], r["role"])), grid=shaped,
        grid_site=grid_site, generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        kit_version=__version__, runs=range(runs)))
    return page
