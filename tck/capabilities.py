"""What a target claims to support: the capabilities file the kit reads.

A capabilities file is JSON (or YAML)::

    {"rsio_capabilities": 1,
     "implementation": "name", "version": "1.2.3",
     "codecs": ["msgpack", "varint"],
     "publishers": ["tck/range", "tck/infinite", "tck/fixed", "tck/large", "tck/error", "tck/subscribe"],
     "features": ["pack", "split", "split-on-request", "subscribe:all", "subscribe:one",
                  "subscribe:batch", "subscribe:cancel"]}

A scenario names what it ``requires`` with the same tokens (a publisher name,
a feature, or ``codec:NAME``).  Without a file, a target claims everything of
rsio-v0 section 8, so everything is tested.

A target without a file can still be named on the command line (``--name
NAME[@VERSION]``, ``parse_target_name``); the name and version go into run.json
and name the target's column on the multi-target site.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

PUBLISHERS = ("tck/range", "tck/infinite", "tck/fixed", "tck/large", "tck/error", "tck/subscribe")
FEATURES = (
    "pack",  # tck/fixed uses onNextPacked
    "split",  # the target, as subscriber, joins split elements it receives (always required by rsio-v0)
    "split-on-request",  # tck/large honours part=P
    "subscribe:all",
    "subscribe:one",
    "subscribe:batch",
    "subscribe:cancel",
)
CODECS = ("msgpack", "varint")


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
    def everything(cls) -> Capabilities:
        return cls(tokens=frozenset(PUBLISHERS + FEATURES + tuple(f"codec:{c}" for c in CODECS)),
                   implementation="(no capabilities file: every capability assumed)")

    @classmethod
    def load(cls, path: Path) -> Capabilities:
        try:
            text = path.read_text(encoding="utf-8")
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise CapabilitiesError(f"{path}: {exc}") from None
        if not isinstance(data, dict) or data.get("rsio_capabilities") != 1:
            raise CapabilitiesError(f"{path}: not an rsio capabilities file (needs \"rsio_capabilities\": 1)")
        tokens: set[str] = set()
        for key, known in (("publishers", PUBLISHERS), ("features", FEATURES), ("codecs", CODECS)):
            values = data.get(key, [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise CapabilitiesError(f"{path}: {key} must be a list of strings")
            unknown = sorted(set(values) - set(known))
            if unknown:
                raise CapabilitiesError(f"{path}: unknown {key} {', '.join(unknown)}; known: {', '.join(known)}")
            tokens.update(f"codec:{v}" if key == "codecs" else v for v in values)
        return cls(tokens=frozenset(tokens), implementation=str(data.get("implementation", "unknown")),
                   version=str(data.get("version", "")))

    def missing(self, required: list[str]) -> list[str]:
        return [token for token in required if token not in self.tokens]
