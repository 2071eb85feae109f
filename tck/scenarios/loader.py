"""Loading scenario files: YAML (safe loader only), checked against the JSON Schema.

Errors name the file, the line and the field, as a user fixing a scenario needs.

Each scenario names the binding it is written for (``binding:``; default ``DEFAULT_BINDING``), or
``contract``: written once in the contract's terms, it runs on every binding whose scenario
adapter has the ``features`` its ``needs:`` lists.  ``load_paths(paths, binding)`` keeps the
scenarios that apply to one binding and checks that every rule they cite, as that binding
names it (``Binding.contract_rule``), is in the catalogue.
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

from ..binding import CONTRACT, DEFAULT_BINDING, binding_names, get_binding
from ..catalogue import RULES


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
    handshake: str = "auto"
    goodbye: str = "auto"
    kit_violations: tuple[str, ...] = ()
    description: str = ""
    file: str = ""
    line: int = 0
    tags: tuple[str, ...] = field(default=())
    binding: str = DEFAULT_BINDING  # the binding it is written for, or "contract"
    needs: tuple[str, ...] = ()  # adapter features a contract scenario needs (scenarios/README.md)
    # The wire profiles it runs over, as the file names them in the binding's word (RS-IO's ``codecs:``,
    # the others' ``profiles:``); empty: all of them.
    profiles: tuple[str, ...] = ()

    @property
    def area(self) -> str:
        return self.rules[0].rsplit("-", 1)[0]


def schema() -> dict[str, Any]:
    """The scenario file schema; a scenario's ``binding`` is one of the registry's (``binding_names``) or contract,
    and defaults to ``DEFAULT_BINDING`` (the file names no binding: both are filled in here)."""
    return _schema(binding_names())


@cache
def _schema(bindings: tuple[str, ...]) -> dict[str, Any]:
    text = resources.files("rsio_tck.scenarios").joinpath("schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    binding = loaded["$defs"]["scenario"]["properties"]["binding"]
    binding["enum"], binding["default"] = [*bindings, CONTRACT], DEFAULT_BINDING
    # A frame entry names a contract signal or one of a binding's frames: the union of every binding's words.
    words: dict[str, None] = {}
    for name in bindings:
        chosen = get_binding(name)
        words.update(dict.fromkeys(chosen.scenario_adapter(chosen.profiles[0], {}).frame_words))
    loaded["$defs"]["frame"]["propertyNames"] = {"enum": list(words)}
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


SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _where(path: list[Any]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "(top)"


def parse_document(text: str) -> tuple[yaml.Node | None, Any]:
    """One YAML document's node tree (its positions give error lines) and the data built from it, in one
    parse: libyaml's loader when PyYAML has it (the wheels do), since the pure-Python one took most of a
    suite's load time.  yaml.YAMLError for text that is not YAML."""
    loader = SAFE_LOADER(text)
    try:
        root = loader.get_single_node()
        return root, loader.construct_document(root) if root is not None else None
    finally:
        loader.dispose()


def load_file(path: Path) -> list[Scenario]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ScenarioError(f"{path}: cannot read: {reason}") from None
    try:
        root, data = parse_document(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from None
    validator = jsonschema.Draft202012Validator(schema())
    problems = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        node = _node_at(root, list(error.absolute_path))
        line = node.start_mark.line + 1 if node is not None else 0
        message = error.message if len(error.message) < 200 else error.message[:200] + "..."
        if error.validator in ("anyOf", "oneOf"):
            message = "not a known step, or a step with a wrong field (see scenarios/README.md)"
        problems.append(f"{path}:{line}: {_where(list(error.absolute_path))}: {message}")
    if problems:
        raise ScenarioError("\n".join(problems))
    scenarios = []
    for index, item in enumerate(data):
        node = _node_at(root, [index])
        line = node.start_mark.line + 1 if node is not None else 0
        # A contract scenario's rules are checked again as each binding names them (load_paths).
        unknown = [r for r in item["rules"] + item.get("kit_violations", []) if r not in RULES]
        if unknown:
            raise ScenarioError(f"{path}:{line}: [{index}].rules: unknown rule ID(s) {', '.join(unknown)}")
        profiles = tuple(item.get("profiles", item.get("codecs", ())))
        _check_profiles(profiles, item.get("binding", DEFAULT_BINDING), f"{path}:{line}: [{index}]")
        scenarios.append(
            Scenario(
                id=item["id"],
                title=item["title"],
                rules=tuple(item["rules"]),
                level=item["level"],
                steps=tuple(item["steps"]),
                role=item.get("role", "subscriber"),
                requires=tuple(item.get("requires", ())),
                handshake=item.get("handshake", "auto"),
                goodbye=item.get("goodbye", "auto"),
                kit_violations=tuple(item.get("kit_violations", ())),
                description=item.get("description", ""),
                file=str(path),
                line=line,
                binding=item.get("binding", DEFAULT_BINDING),
                needs=tuple(item.get("needs", ())),
                profiles=profiles,
            )
        )
    return scenarios


def _check_profiles(profiles: tuple[str, ...], binding: str, where: str) -> None:
    """A scenario's ``codecs:``/``profiles:`` name profiles of its binding (a contract scenario's, of none)."""
    if not profiles:
        return
    if binding == CONTRACT:
        raise ScenarioError(f"{where}: a contract scenario runs over every profile of each binding; it names none")
    chosen = get_binding(binding)
    unknown = [p for p in profiles if p not in chosen.profiles]
    if unknown:
        raise ScenarioError(f"{where}: unknown {chosen.profile_word}(s) {', '.join(unknown)} of binding {binding} "
                            f"(it has {', '.join(chosen.profiles)})")


def default_directory() -> Path:
    """The scenarios shipped with the kit."""
    return Path(str(resources.files("rsio_tck.suite")))


SUFFIXES = (".yaml", ".yml")


def scenario_files(directory: Path) -> list[Path]:
    """The scenario files of a directory (not its subdirectories): ``*.yaml`` and ``*.yml``."""
    return sorted(p for p in directory.iterdir() if p.suffix in SUFFIXES and p.is_file())


def applies_to(scenario: Scenario, binding: str) -> str | None:
    """None if ``scenario`` runs on ``binding``; else why not (one line)."""
    if scenario.binding == binding:
        return None
    if scenario.binding != CONTRACT:
        return f"scenario is written for binding {scenario.binding}, not {binding}"
    missing = [need for need in scenario.needs if need not in features(binding)]
    if missing:
        return f"binding {binding} lacks what the scenario needs: {', '.join(missing)}"
    return None


@cache
def features(binding: str) -> frozenset[str]:
    """What ``binding``'s scenario adapter offers contract scenarios (``needs:``)."""
    chosen = get_binding(binding)
    adapter = chosen.scenario_adapter(chosen.profiles[0], {})
    return frozenset(adapter.features)


@cache
def _binding_rules(binding: str) -> frozenset[str]:
    """The catalogue's rules ``binding`` owns (all of them if it does not say)."""
    owned = getattr(get_binding(binding), "rules", None)
    return frozenset(owned() if owned is not None else RULES)


def _check_rules(scenario: Scenario, binding: str) -> None:
    """Every rule the scenario cites, as ``binding`` names it, exists and is the binding's own: an
    RSocket report never cites an RS-IO rule."""
    chosen = get_binding(binding)
    cited = [chosen.contract_rule(rule) for rule in scenario.rules + scenario.kit_violations]
    unknown = [rule for rule in cited if rule not in RULES or rule not in _binding_rules(binding)]
    if unknown:
        raise ScenarioError(f"{scenario.file}:{scenario.line}: {scenario.id} cites rule(s) binding {binding} "
                            f"does not have: {', '.join(unknown)}")


def load_directory(directory: Path | None = None, binding: str | None = DEFAULT_BINDING) -> list[Scenario]:
    return load_paths([directory or default_directory()], binding)


def load_paths(paths: list[Path], binding: str | None = DEFAULT_BINDING) -> list[Scenario]:
    """Scenarios of files and directories (the kit's own when ``paths`` is empty); ids must be unique.

    ``binding``: keep only the scenarios that run on it (written for it, or contract scenarios
    whose needs it meets), their rules checked as it names them; None keeps every scenario."""
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
            if binding is not None:
                if applies_to(scenario, binding) is not None:
                    continue
                _check_rules(scenario, binding)
            scenarios.append(scenario)
    if not scenarios:
        which = f" for binding {binding}" if binding is not None else ""
        raise ScenarioError(f"{', '.join(map(str, paths))}: no scenarios{which} in the files given")
    return scenarios
