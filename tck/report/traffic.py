"""A run's recorded traffic, decoded: what a binding's wire statistics are computed from.

Theory of operation: a trace holds the byte chunks each side sent, in the order the kit
saw them.  ``decoded`` runs each direction through its own incremental decoder of the
binding (the one the monitor uses, so a frame counted here is a frame the monitor
judged) and yields every frame with its sender and the time of the chunk that completed
it.  From the first bytes a direction cannot decode on, that direction yields one
``WireFrame`` whose ``frame`` is None (the frames decoded before the bad bytes come
first) and nothing more: what follows undecodable bytes has no frame boundaries.  A
trace cut short (``read_trace`` stops at its truncation marker) just ends.

``run_traces`` reads the traces of a run directory lazily, one connection at a time, so
a run of many large traces is never held in memory at once.  ``by_direction`` is the
table most bindings show first: a count of each kind of frame, per direction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..binding import Binding, Cell, WireTable
from ..errors import ProtocolViolation, Side
from ..monitor.trace import TraceRecord
from .rundir import RunFiles


@dataclass(frozen=True, slots=True)
class WireFrame:
    sender: Side
    t: float
    frame: Any  # the binding's decoded frame; None: the sender's bytes stopped decoding here


def decoded(binding: Binding, profile: str, records: Iterable[TraceRecord]) -> Iterator[WireFrame]:
    """The frames of one recorded connection, in the order they were completed."""
    decoders = {side: binding.decoder(profile) for side in Side}
    dead: set[Side] = set()
    for record in records:
        sender = record.sender
        if sender in dead:
            continue
        decoder = decoders[sender]
        if record.data is None:  # the direction ended: a frame in progress is bytes that never decoded
            dead.add(sender)
            try:
                decoder.eof()
            except ProtocolViolation:
                yield WireFrame(sender, record.t, None)
            continue
        try:
            frames = decoder.feed(record.data)
        except ProtocolViolation:
            dead.add(sender)
            yield from (WireFrame(sender, record.t, frame) for frame in decoder.salvaged)
            yield WireFrame(sender, record.t, None)
            continue
        for frame in frames:
            yield WireFrame(sender, record.t, frame)


def run_traces(files: RunFiles) -> Iterator[Sequence[TraceRecord]]:
    """Each recorded connection of the run (a scenario's trace), read when asked for."""
    for result in files.results:
        trace = files.trace(result["id"])
        if trace:
            yield trace


# Directions by who sent: the client opened the connection (the kit, except when it listens).
DIRECTION_NAMES = {Side.CLIENT: "client \u2192 server", Side.SERVER: "server \u2192 client"}
UNDECODABLE = "(undecodable)"


def table_if_rows(table_id: str, title: str, columns: tuple[str, ...], rows: Sequence[tuple[Cell, ...]],
                  note: str = "") -> list[WireTable]:
    """A one-table list, or none when ``rows`` is empty: a report leaves an empty table out."""
    return [WireTable(table_id, title, columns, tuple(rows), note)] if rows else []


def by_direction(table_id: str, title: str, kind: str, counts: Counter[tuple[str, Side]],
                 note: str = "") -> list[WireTable]:
    """A table of ``counts`` ((kind, sender) -> n): a row per kind, most frequent first, with a column per
    direction and the total; no table when nothing was counted."""
    kinds = Counter[str]()
    for (name, _sender), n in counts.items():
        kinds[name] += n
    rows = tuple((name, counts[(name, Side.CLIENT)], counts[(name, Side.SERVER)], total)
                 for name, total in sorted(kinds.items(), key=lambda item: (-item[1], item[0])))
    columns = (kind, DIRECTION_NAMES[Side.CLIENT], DIRECTION_NAMES[Side.SERVER], "total")
    return table_if_rows(table_id, title, columns, rows, note)
