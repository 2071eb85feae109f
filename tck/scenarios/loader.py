"""Loading scenario files: YAML (safe loader only), checked against the JSON Schema.

Errors name the file, the line and the field, as a user fixing a scenario needs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from ..rules import RULES


class ScenarioError(ValueError):
    """A scenario file that is not valid; every line is ``file:line: field: problem``."""


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    title: str
    rules: tuple[str, ...]
    level: str
    steps: tuple[dict[str, Any], ...]
    role: str = "subscriber"
    requires: tuple[str, ...] = ()
    codecs: tuple[str, ...] = ("msgpack", "varint")
    handshake: str = "auto"
    goodbye: str = "auto"
    kit_violations: tuple[str, ...] = ()
    description: str = ""
    file: str = ""
    line: int = 0
    tags: tuple[str, ...] = field(default=())

    @property
    def area(self) -> str:
        return self.rules[0].rsplit("-", 1)[0]


@cache
def schema() -> dict[str, Any]:
    text = resources.files("rsio_tck.scenarios").joinpath("schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _node_at(root: yaml.Node | None, path: list[Any]) -> yaml.Node | None:
    """The YAML node at a JSON-Schema error path, as deep as it exists."""
    node = root
    for key in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == key:
                    node = v
                    break
            else:
                return node
        else:
            return node
    return node


def _where(path: list[Any]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "(top)"


def load_file(path: Path) -> list[Scenario]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ScenarioError(f"{path}: cannot read: {reason}") from None
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)  # positions only: composes nodes, builds no objects
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from None
    validator = jsonschema.Draft202012Validator(schema())
    problems = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        node = _node_at(root, list(error.absolute_path))
        line = node.start_mark.line + 1 if node is not None else 0
        message = error.message if len(error.message) < 200 else error.message[:200] + "..."
        if error.validator == "oneOf":
            message = "not a known step, or a step with a wrong field (see scenarios/README.md)"
        problems.append(f"{path}:{line}: {_where(list(error.absolute_path))}: {message}")
    if problems:
        raise ScenarioError("\n".join(problems))
    scenarios = []
    for index, item in enumerate(data):
        node = _node_at(root, [index])
        line = node.start_mark.line + 1 if node is not None else 0
        unknown = [r for r in item["rules"] + item.get("kit_violations", []) if r not in RULES]
        if unknown:
            raise ScenarioError(f"{path}:{line}: [{index}].rules: unknown rule ID(s) {', '.join(unknown)}")
        scenarios.append(
            Scenario(
                id=item["id"],
                title=item["title"],
                rules=tuple(item["rules"]),
                level=item["level"],
                steps=tuple(item["steps"]),
                role=item.get("role", "subscriber"),
                requires=tuple(item.get("requires", ())),
                codecs=tuple(item.get("codecs", ("msgpack", "varint"))),
                handshake=item.get("handshake", "auto"),
                goodbye=item.get("goodbye", "auto"),
                kit_violations=tuple(item.get("kit_violations", ())),
                description=item.get("description", ""),
                file=str(path),
                line=line,
            )
        )
    return scenarios


def default_directory() -> Path:
    """The scenarios shipped with the kit."""
    return Path(str(resources.files("rsio_tck.suite")))


SUFFIXES = (".yaml", ".yml")


def scenario_files(directory: Path) -> list[Path]:
    """The scenario files of a directory (not its subdirectories): ``*.yaml`` and ``*.yml``."""
    return sorted(p for p in directory.iterdir() if p.suffix in SUFFIXES and p.is_file())


def load_directory(directory: Path | None = None) -> list[Scenario]:
    return load_paths([directory or default_directory()])


def load_paths(paths: list[Path]) -> list[Scenario]:
    """Scenarios of files and directories (the kit's own when ``paths`` is empty); ids must be unique."""
    files: list[Path] = []
    for path in paths or [default_directory()]:
        if path.is_dir():
            found = scenario_files(path)
            if not found:
                raise ScenarioError(f"{path}: no scenario files (*.yaml, *.yml) in this directory")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise ScenarioError(f"{path}: no such file or directory")
    scenarios: list[Scenario] = []
    seen: dict[str, str] = {}
    for path in files:
        for scenario in load_file(path):
            if scenario.id in seen:
                raise ScenarioError(f"{path}:{scenario.line}: id {scenario.id} already used in {seen[scenario.id]}")
            seen[scenario.id] = f"{path}:{scenario.line}"
            scenarios.append(scenario)
    if not scenarios:
        raise ScenarioError(f"{', '.join(map(str, paths))}: no scenarios in the files given")
    return scenarios
