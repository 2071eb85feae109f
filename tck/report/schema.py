"""The versioned JSON Schemas of the run directory's files, and checking files against them.

Each schema lives in ``tck/report/schemas/NAME.schema.json`` and carries its
version in ``$id`` (``.../schemas/run/v1``).  ``report`` refers to ``fuzz`` by
``$id``, so every schema is validated against a registry holding all of them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from ..output_files import result_lines

NAMES = ("run", "result", "report", "fuzz")


@cache
def load_schema(name: str) -> dict[str, Any]:
    if name not in NAMES:
        raise KeyError(f"no schema {name!r}; there are {', '.join(NAMES)}")
    text = resources.files("rsio_tck.report").joinpath("schemas").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator(name: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry().with_resources(
        (load_schema(n)["$id"], Resource.from_contents(load_schema(n))) for n in NAMES
    )
    return Draft202012Validator(load_schema(name), registry=registry)


def problems(name: str, document: Any) -> list[str]:
    """Every way ``document`` breaks schema ``name``, as ``path: message`` lines (empty: valid)."""
    out = []
    for error in sorted(_validator(name).iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        out.append(f"{where}: {error.message}")
    return out


def check_run_dir(run_dir: Path) -> list[str]:
    """Schema problems of every JSON file a run directory holds, each prefixed by its file (and line)."""
    out: list[str] = []

    def parsed(where: str, text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError as exc:
            out.append(f"{where}: not valid JSON: {exc}")
            return None

    for name, relative in (("run", "run.json"), ("fuzz", "fuzz.json"), ("report", "report/report.json")):
        path = run_dir / relative
        if path.exists():
            document = parsed(relative, path.read_text(encoding="utf-8"))
            if document is not None:
                out += [f"{relative}: {p}" for p in problems(name, document)]
    results = run_dir / "results.jsonl"
    if results.exists():
        lines, _ = result_lines(results.read_text(encoding="utf-8"))  # a cut last line is left out, not a problem
        for number, line in lines:
            document = parsed(f"results.jsonl:{number}", line)
            if document is not None:
                out += [f"results.jsonl:{number}: {p}" for p in problems("result", document)]
    return out
