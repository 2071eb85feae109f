"""Wireshark dissectors shipped with the kit, and where they go.

One Lua dissector per binding: RS-IO (``rsio.lua``), RSocket (``rsocket.lua``, also inside
WebSocket binary messages) and Ditto (``ditto.lua``: Wireshark's WebSocket and JSON
dissectors carry it; this one labels the Reactive Streams signal, subscriptionId and demand).  Each is a single
self-contained file of this package's data, so it can be loaded by path
(``tshark -X lua_script:FILE``) or copied into Wireshark's personal Lua plugin
folder, where Wireshark loads every ``*.lua`` at start-up.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

# Overrides the personal plugin folder (for tests, or a Wireshark with another configuration).
PLUGIN_DIR_ENV = "RSIO_TCK_WIRESHARK_PLUGINS"


@dataclass(frozen=True, slots=True, kw_only=True)
class Dissector:
    binding: str  # the binding it decodes, as the kit names it
    filename: str  # its file in this package
    protocol: str  # Wireshark's filter name for it (rsio.type, ...)
    description: str


DISSECTORS: dict[str, Dissector] = {
    "rsio": Dissector(binding="rsio", filename="rsio.lua", protocol="rsio",
                      description="RS-IO, both codecs (msgpack, varint)"),
    "rsocket": Dissector(binding="rsocket", filename="rsocket.lua", protocol="rsocket",
                         description="RSocket over TCP and WebSocket, both profiles (rsocket-1.0, reactivesocket-draft)"),
    "ditto": Dissector(binding="ditto", filename="ditto.lua", protocol="ditto",
                       description="Ditto streaming/search envelopes (WebSocket text messages, TCP lines): labels only"),
}


class WiresharkError(Exception):
    """A dissector could not be found or installed; the message is one line."""


def dissector_path(binding: str) -> Path:
    """The shipped Lua file of ``binding``'s dissector."""
    try:
        dissector = DISSECTORS[binding]
    except KeyError:
        raise WiresharkError(f"no Wireshark dissector for {binding!r}; there is one for: {', '.join(DISSECTORS)}") from None
    path = Path(str(resources.files(__package__).joinpath(dissector.filename)))
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
    sources = [dissector_path(binding) for binding in DISSECTORS]
    if folder.exists() and not folder.is_dir():
        raise WiresharkError(f"{folder}: not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copyfile(source, folder / source.name)) for source in sources]
    except OSError as exc:
        raise WiresharkError(f"{folder}: cannot install the dissectors ({exc.strerror or exc})") from None
