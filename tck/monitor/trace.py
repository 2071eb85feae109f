"""Frame traces: what crossed one connection, in the order one observer saw it.

A trace file is a MessagePack stream of maps, one per record:
``{"t": seconds (float), "dir": "c2s" | "s2c", "bytes": bin}`` for data and
``{"t": ..., "dir": ..., "eof": true}`` when that direction ended.  The bytes are
exactly what was written or read (frames, parts of frames, or garbage), so the
monitor re-decodes them: a trace of malformed input replays as it happened.

A recorder that bounds its trace (the kit keeps ``TRACE_MAX_BYTES`` per
connection) ends it with a truncation marker, ``{"t": ..., "dir": ...,
"truncated": true}``: nothing after that instant was recorded.  ``read_trace``
stops before the marker (``markers=True`` yields it), so every reader judges a
cut trace up to the cut and never takes the cut for an end of stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import msgpack

from ..errors import Side

DIRECTIONS = {Side.CLIENT: "c2s", Side.SERVER: "s2c"}
SENDERS = {v: k for k, v in DIRECTIONS.items()}
MAX_RECORD = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceRecord:
    t: float
    sender: Side
    data: bytes | None  # None: the sender's direction ended (eof), or the trace was cut here
    truncated: bool = False  # the truncation marker: nothing after it was recorded

    def to_map(self) -> dict[str, object]:
        out: dict[str, object] = {"t": self.t, "dir": DIRECTIONS[self.sender]}
        if self.truncated:
            out["truncated"] = True
        elif self.data is None:
            out["eof"] = True
        else:
            out["bytes"] = self.data
        return out


def write_trace(stream: BinaryIO, records: Iterable[TraceRecord]) -> int:
    packer = msgpack.Packer(use_bin_type=True)
    count = 0
    for record in records:
        stream.write(packer.pack(record.to_map()))
        count += 1
    return count


class TraceFormatError(ValueError):
    """A trace file that is not a valid RS-IO trace; the message says where."""


def until_truncation(records: Iterable[TraceRecord]) -> Iterator[TraceRecord]:
    """The records before a truncation marker (all of them when there is none)."""
    for record in records:
        if record.truncated:
            return
        yield record


def read_trace(source: Path | BinaryIO, *, markers: bool = False) -> Iterator[TraceRecord]:
    """The records of a trace file, up to its truncation marker (with it, if ``markers``)."""
    if isinstance(source, Path):
        with source.open("rb") as stream:
            yield from read_trace(stream, markers=markers)
        return
    unpacker = msgpack.Unpacker(source, raw=False, max_bin_len=MAX_RECORD, max_buffer_size=2 * MAX_RECORD)
    index = 0
    while True:
        try:
            item = next(unpacker)
        except StopIteration:
            return
        # Corrupt bytes surface as whatever msgpack meets first: invalid UTF-8 in a key, an ext code out
        # of range (ValueError), a truncated or oversized record; each is one TraceFormatError.
        except (ValueError, msgpack.UnpackException) as exc:
            raise TraceFormatError(f"trace record {index} is not valid MessagePack: "
                                   f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}") from None
        direction = item.get("dir") if isinstance(item, dict) else None
        if not isinstance(direction, str) or direction not in SENDERS or not isinstance(item.get("t"), (int, float)):
            raise TraceFormatError(f"trace record {index} is not a {{t, dir, bytes|eof}} map: {item!r:.80}")
        sender = SENDERS[item["dir"]]
        if item.get("truncated"):
            if markers:
                yield TraceRecord(t=float(item["t"]), sender=sender, data=None, truncated=True)
            return
        if item.get("eof"):
            yield TraceRecord(t=float(item["t"]), sender=sender, data=None)
        elif isinstance(item.get("bytes"), bytes):
            yield TraceRecord(t=float(item["t"]), sender=sender, data=item["bytes"])
        else:
            raise TraceFormatError(f"trace record {index} has neither bytes nor eof")
        index += 1
