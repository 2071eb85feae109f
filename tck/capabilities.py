"""What a target claims to support: the capabilities file the kit reads.

Each binding declares the format of its targets' files (``rsio_tck.binding.CapabilitiesFormat``,
from ``Binding.capabilities_format``): a version key, a JSON Schema (a file of the binding's own
package), the keys whose values are tokens (with each key's prefix), and what a target without a file
claims.  This module holds no binding's tokens: it reads every format from the registry (``formats()``),
so a binding defined outside the kit brings its own.  As an example, RS-IO's file (its format and
tokens: docs/guide/capabilities.md, which describes each binding's) is JSON (or YAML)::

    {"rsio_capabilities": 1, "implementation": "name", "version": "1.2.3",
     "codecs": ["msgpack", "varint"], "publishers": ["tck/range"], "features": ["pack"]}

A file's format follows from its version key (a file holds exactly one of the registry's); a file of
another binding than the run's is an error.  The values under each token key become tokens, as written
or with the key's prefix (profiles and codecs become ``codec:PROFILE``, the token scenarios of every
binding check); a scenario names what it ``requires`` with the same tokens.  Without a file, a target
claims its binding's ``everything``, so everything is tested.  The file is checked against its format's
schema: a misspelled key or token would otherwise silently skip scenarios, so unknown keys and tokens
are errors naming the file and the key.

A target without a file can still be named on the command line (``--name
NAME[@VERSION]``, ``parse_target_name``); the name and version go into run.json
and name the target's column on the multi-target site.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .binding import DEFAULT_BINDING, CapabilitiesFormat, binding_names, get_binding


class CapabilitiesError(ValueError):
    """A capabilities file that cannot be read; the message names the file and the problem."""


class TargetNameError(ValueError):
    """A ``--name`` value that cannot name a target; the message names the flag and the problem."""


def parse_target_name(text: str, flag: str = "--name") -> tuple[str, str | None]:
    """``NAME[@VERSION]`` -> (name, version or None); the last ``@`` splits, so a name may hold one."""
    name, at, version = text.strip().rpartition("@")
    if not at:
        name, version = version, ""
    name, version = name.strip(), version.strip()
    if not name:
        raise TargetNameError(f"{flag} {text!r}: the name is empty (expected NAME or NAME@VERSION)")
    if at and not version:
        raise TargetNameError(f"{flag} {text!r}: the version after '@' is empty (expected NAME@VERSION)")
    if any(not c.isprintable() for c in text):
        raise TargetNameError(f"{flag} {text!r}: control characters are not allowed")
    return name, version or None


@dataclass(frozen=True, slots=True)
class Capabilities:
    tokens: frozenset[str]
    implementation: str = "unknown"
    version: str = ""

    @classmethod
    def everything(cls, binding: str = DEFAULT_BINDING) -> Capabilities:
        """Every capability of ``binding`` (its format's ``everything``): a target without a file is tested on everything."""
        tokens = get_binding(binding).capabilities_format().everything
        return cls(tokens=frozenset(tokens), implementation="(no capabilities file: every capability assumed)")

    @classmethod
    def load(cls, path: Path, binding: str | None = None) -> Capabilities:
        """The file at ``path``; with ``binding``, a file of another binding's format is an error."""
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except OSError as exc:
            raise CapabilitiesError(f"{path}: {exc.strerror or exc}") from None
        except (ValueError, yaml.YAMLError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise CapabilitiesError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: "
                                    f"{' '.join(str(exc).split())}") from None
        problems = schema_problems(data)
        if problems:
            raise CapabilitiesError(f"{path}: {'; '.join(problems)}")
        version_key = next(key for key in formats() if key in data)
        owner, chosen = formats()[version_key]
        if binding is not None and owner != binding:
            raise CapabilitiesError(f"{path}: a {owner} capabilities file ({version_key!r}), "
                                    f"but the run's binding is {binding}")
        tokens: set[str] = set()
        for key, prefix in chosen.token_keys.items():
            tokens.update(f"{prefix}{v}" for v in data.get(key, []))
        return cls(tokens=frozenset(tokens), implementation=str(data.get("implementation", "unknown")),
                   version=str(data.get("version", "")))

    def missing(self, required: list[str]) -> list[str]:
        return [token for token in required if token not in self.tokens]


def formats() -> dict[str, tuple[str, CapabilitiesFormat]]:
    """version key -> (binding, its format), for every binding of the registry (``binding_names``)."""
    found: dict[str, tuple[str, CapabilitiesFormat]] = {}
    for name in binding_names():
        try:
            chosen = get_binding(name).capabilities_format()
        except ValueError:  # a binding registered from outside that cannot load: its runs say so themselves
            continue
        found[chosen.version_key] = (name, chosen)
    return found


def schema(version_key: str | None = None) -> dict[str, Any]:
    """The JSON Schema of the capabilities format ``version_key`` names; without one, that of the default
    binding's format (``DEFAULT_BINDING``).  Each format names its schema's file (package data of the
    binding's own package, so it loads from an installed wheel too)."""
    if version_key is None:
        version_key = get_binding(DEFAULT_BINDING).capabilities_format().version_key
    return _schema(formats()[version_key][1].schema)


@cache
def _schema(where: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(where.read_text(encoding="utf-8"))
    return loaded


def _suggest(word: object, known: list[str]) -> str:
    close = difflib.get_close_matches(str(word), known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def schema_problems(data: Any) -> list[str]:
    """Every way ``data`` breaks the schema, each naming the key (empty: valid)."""
    known = list(formats())
    keys = [key for key in known if isinstance(data, dict) and key in data]
    if len(keys) != 1:
        if keys:
            return [f"both {' and '.join(repr(k) for k in keys)}: a file is of one binding"]
        needs = [f'"{key}": 1' for key in known]
        return [f"not a capabilities file (needs {', '.join(needs[:-1])} or {needs[-1]})"]
    chosen = schema(keys[0])
    properties = chosen["properties"]
    out = []
    validator = jsonschema.Draft202012Validator(chosen)
    for error in sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path]):
        path = list(error.absolute_path)
        where = "".join(f"[{p}]" if isinstance(p, int) else str(p) for p in path)
        if error.validator == "additionalProperties":
            for key in sorted(set(error.instance) - set(properties)):
                out.append(f"unknown key {key!r}{_suggest(key, list(properties))}; known keys: "
                           f"{', '.join(k for k in properties if k != '$schema')}")
        elif error.validator == "enum":
            known = [str(v) for v in error.validator_value]
            out.append(f"{where}: unknown token {error.instance!r}{_suggest(error.instance, known)}; "
                       f"known {path[0]}: {', '.join(known)}")
        elif error.validator == "const":
            out.append(f"{where}: must be {error.validator_value!r}, not {error.instance!r}")
        else:
            out.append(f"{where or '(top)'}: {' '.join(error.message.split())[:200]}")
    return out
