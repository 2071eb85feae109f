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

from ..binding import binding_names, get_binding
from ..output_files import result_lines

NAMES = ("run", "result", "report", "fuzz")


def load_schema(name: str) -> dict[str, Any]:
    """Schema ``name``; run.json's ``binding`` enum is the binding registry's names (``binding_names``), and
    its ``codec`` and ``profile`` enums those bindings' profiles, so a run of a binding registered from
    outside the kit is valid too (the files list the kit's own bindings, for readers)."""
    return _load_schema(name, binding_names())


def _profiles(bindings: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in bindings:
        try:
            profiles = get_binding(name).profiles
        except ValueError:  # registered from outside and cannot load: no run of it can be written either
            continue
        out += [profile for profile in profiles if profile not in out]
    return out


@cache
def _load_schema(name: str, bindings: tuple[str, ...]) -> dict[str, Any]:
    if name not in NAMES:
        raise KeyError(f"no schema {name!r}; there are {', '.join(NAMES)}")
    text = resources.files("rsio_tck.report").joinpath("schemas").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    properties = schema.get("properties", {})
    if "enum" in properties.get("binding", {}):
        properties["binding"]["enum"] = list(bindings)
    for key in ("codec", "profile"):
        if "enum" in properties.get(key, {}):
            properties[key]["enum"] = _profiles(bindings)
    return schema


def _validator(name: str) -> Draft202012Validator:
    return _validator_of(name, binding_names())


@cache
def _validator_of(name: str, bindings: tuple[str, ...]) -> Draft202012Validator:
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
