"""Running tshark with the kit's dissectors, and what every reader of its output shares.

This module knows tshark and no wire: ``run_tshark`` runs it (``TsharkError`` when it is missing, fails or
times out), ``dissector_options`` loads the dissectors of the bindings asked for by path
(``-X lua_script:``), and ``parse_expert`` reads the ``-z expert`` summary into ``ExpertEntry`` rows.  A
binding that compares tshark's reading of a capture with its own decoder has its reader in its package,
over these (RS-IO: ``rsio_tck.bindings.rsio.wireshark_fields``, tshark's field lists; RSocket:
``rsio_tck.bindings.rsocket.wireshark_pdml``, tshark's PDML); a frame the dissector marks malformed comes
back from either as a ``Malformed``, with the rule the dissector names.  None of it needs a Wireshark GUI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import dissector_path

# tshark says this on stderr whenever it runs as root (containers, CI); it is no failure.
_ROOT_WARNING = re.compile(r'^Running as user "root" and group "root"\. This could be dangerous\.$')
_EXPERT_HEADER = re.compile(r"^(Errors|Warns|Notes|Chats|Comments) \((\d+)\)$")
_EXPERT_ROW = re.compile(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$")


class TsharkError(Exception):
    """tshark is missing, failed or timed out; the message is one line (plus tshark's own words)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed:
    packet: int
    stream: int
    sender_port: int
    receiver_port: int
    rule: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpertEntry:
    severity: str  # Errors, Warns, Notes, Chats, Comments
    group: str
    protocol: str
    summary: str
    count: int


def anomalies(expert: Iterable[ExpertEntry]) -> list[ExpertEntry]:
    """The expert summary's warnings and errors."""
    return [entry for entry in expert if entry.severity in ("Errors", "Warns")]


def lua_errors(expert: Iterable[ExpertEntry]) -> list[ExpertEntry]:
    """A dissector that crashed: Wireshark reports each Lua error as an expert error."""
    return [entry for entry in expert if entry.summary.startswith("Lua Error")]


# Wireshark's classic-STUN heuristic (RFC 3489 has no magic cookie) claims any TCP stream whose first
# bytes happen to look like a STUN header, before a Lua heuristic gets to see it; a varint RS-IO stream
# sometimes does.  The kit's own comparisons switch it off; the documentation (docs/wireshark.md) tells users the same.
FOREIGN_HEURISTICS = ("classicstun_tcp",)


def tshark_binary() -> str | None:
    return shutil.which("tshark")


def run_tshark(args: Iterable[str], *, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """tshark with ``args``; TsharkError if it is missing, times out or fails.  stderr loses the root warning."""
    binary = tshark_binary()
    if binary is None:
        raise TsharkError("tshark is not installed (Debian: apt-get install tshark)")
    command = [binary, *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LC_ALL": "C.UTF-8"})
    except subprocess.TimeoutExpired:
        raise TsharkError(f"tshark took more than {timeout:.0f} s: {' '.join(command)}") from None
    stderr = "\n".join(line for line in done.stderr.splitlines() if not _ROOT_WARNING.match(line))
    done.stderr = stderr
    if done.returncode != 0 or "Lua: Error" in stderr:
        raise TsharkError(f"tshark failed (exit {done.returncode}): {' '.join(command)}\n{stderr.strip()}")
    return done


def dissector_options(bindings: Iterable[str], prefs: Mapping[str, str] | None = None,
                      decode_as: Iterable[str] = ()) -> list[str]:
    """tshark's arguments that load the shipped dissectors of ``bindings`` (by the kit's names), switch off
    ``FOREIGN_HEURISTICS``, set the preferences ``prefs`` (``-o name:value``) and add ``decode_as`` (``-d``)."""
    args = [f"-Xlua_script:{dissector_path(binding)}" for binding in bindings]
    for heuristic in FOREIGN_HEURISTICS:
        args += ["--disable-heuristic", heuristic]
    for name, value in (prefs or {}).items():
        args += ["-o", f"{name}:{value}"]
    for rule in decode_as:
        args += ["-d", rule]
    return args


def parse_expert(lines: list[str]) -> list[ExpertEntry]:
    """The rows of tshark's ``-z expert`` summary (the lines after the packets)."""
    entries: list[ExpertEntry] = []
    severity = ""
    for line in lines:
        header = _EXPERT_HEADER.match(line)
        if header:
            severity = header[1]
            continue
        row = _EXPERT_ROW.match(line)
        if row and severity and row[1].isdigit():
            entries.append(ExpertEntry(severity=severity, group=row[2], protocol=row[3], summary=row[4].strip(),
                                       count=int(row[1])))
    return entries
