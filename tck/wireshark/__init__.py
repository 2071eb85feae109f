"""Wireshark dissectors shipped with the kit, and where they go.

One Lua dissector per binding that has one, which the binding gives through its optional hook
``wireshark_dissector()`` (a ``Dissector``): RS-IO (``rsio.lua``), RSocket (``rsocket.lua``, also inside
WebSocket binary messages) and Ditto (``ditto.lua``: Wireshark's WebSocket and JSON
dissectors carry it; this one labels the Reactive Streams signal, subscriptionId and demand).  Each is a single
self-contained file of its binding package's data, so it can be loaded by path
(``tshark -X lua_script:FILE``) or copied into Wireshark's personal Lua plugin
folder, where Wireshark loads every ``*.lua`` at start-up.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..binding import binding_names, get_binding, hooks_of

# Overrides the personal plugin folder (for tests, or a Wireshark with another configuration).
PLUGIN_DIR_ENV = "RSIO_TCK_WIRESHARK_PLUGINS"


@dataclass(frozen=True, slots=True, kw_only=True)
class Dissector:
    """What a binding's optional hook ``wireshark_dissector()`` returns: its Lua dissector."""

    binding: str  # the binding it decodes, as the kit names it
    lua: Path  # the Lua file: package data of the binding's package
    protocol: str  # Wireshark's filter name for it (rsio.type, ...)
    description: str


class WiresharkError(Exception):
    """A dissector could not be found or installed; the message is one line."""


def _dissector_of(name: str) -> Dissector | None:
    try:
        binding = get_binding(name)
    except ValueError as exc:  # a binding registered from outside that cannot be loaded
        raise WiresharkError(str(exc)) from None
    return hooks_of(binding).wireshark_dissector() if hasattr(binding, "wireshark_dissector") else None


def dissectors() -> dict[str, Dissector]:
    """The dissector of every known binding that has one (the hook ``wireshark_dissector``), in the registry's
    order; each binding is loaded to ask it."""
    return {name: found for name in binding_names() if (found := _dissector_of(name)) is not None}


def dissector_path(binding: str) -> Path:
    """The shipped Lua file of ``binding``'s dissector."""
    dissector = _dissector_of(binding) if binding in binding_names() else None
    if dissector is None:
        raise WiresharkError(f"no Wireshark dissector for {binding!r}; there is one for: {', '.join(dissectors())}")
    path = dissector.lua
    if not path.is_file():
        raise WiresharkError(f"{path}: the {binding} dissector is missing from the installed kit")
    return path


def personal_plugin_dir() -> Path:
    """Wireshark's personal Lua plugin folder (``$RSIO_TCK_WIRESHARK_PLUGINS`` overrides it).

    Wireshark 2.5 and later read ``~/.local/lib/wireshark/plugins`` on Linux and macOS, and
    ``%APPDATA%\\Wireshark\\plugins`` on Windows.
    """
    override = os.environ.get(PLUGIN_DIR_ENV)
    if override:
        return Path(override).expanduser()
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "Wireshark" / "plugins"
    return Path.home() / ".local" / "lib" / "wireshark" / "plugins"


def install(target: Path | None = None) -> list[Path]:
    """Copy every shipped dissector into ``target`` (default: the personal plugin folder)."""
    folder = target if target is not None else personal_plugin_dir()
    sources = [dissector_path(binding) for binding in dissectors()]
    if folder.exists() and not folder.is_dir():
        raise WiresharkError(f"{folder}: not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copyfile(source, folder / source.name)) for source in sources]
    except OSError as exc:
        raise WiresharkError(f"{folder}: cannot install the dissectors ({exc.strerror or exc})") from None
