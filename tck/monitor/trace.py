"""Frame traces: what crossed one connection, in the order one observer saw it.

A trace file is a MessagePack stream of maps, one per record:
``{"t": seconds (float), "dir": "c2s" | "s2c", "bytes": bin}`` for data and
``{"t": ..., "dir": ..., "eof": true}`` when that direction ended, with ``"reset": true``
when it ended by a connection reset (TCP RST), which discards what was still in flight.  The
bytes are exactly what was written or read (frames, parts of frames, or garbage), so the
monitor re-decodes them: a trace of malformed input replays as it happened.

A recorder that bounds its trace (the kit keeps ``TRACE_MAX_BYTES`` per
connection) ends it with a truncation marker, ``{"t": ..., "dir": ...,
"truncated": true}``: nothing after that instant was recorded.  ``read_trace``
stops before the marker (``markers=True`` yields it), so every reader judges a
cut trace up to the cut and never takes the cut for an end of stream.

A trace *file* that ends inside a record (its writer was killed, the disk filled
up, a copy was cut short) is another thing: the bytes of its last record are not
all there.  ``read_trace`` yields every whole record and then raises
``TraceCut`` (a ``TraceFormatError``), so no reader takes a cut file for a whole
one by default; a reader that can use the whole records and say the file was cut
reads through ``whole_records`` or ``read_whole``, which hand the cut over
instead of raising it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from io import DEFAULT_BUFFER_SIZE
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
    reset: bool = False  # an end (data None) by a connection reset, not an orderly close

    def to_map(self) -> dict[str, object]:
        out: dict[str, object] = {"t": self.t, "dir": DIRECTIONS[self.sender]}
        if self.truncated:
            out["truncated"] = True
        elif self.data is None:
            out["eof"] = True
            if self.reset:
                out["reset"] = True
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


class TraceCut(TraceFormatError):
    """The file ends inside a record: ``records`` whole records (``whole`` bytes) came before the cut, of
    ``size`` bytes in all.  Raised by ``read_trace`` after it yielded those records."""

    def __init__(self, records: int, whole: int, size: int) -> None:
        super().__init__(f"the file ends inside trace record {records}, {size - whole} byte(s) into it (it was cut "
                         f"at byte {size}): the {records} record(s) before it are whole")
        self.records, self.whole, self.size = records, whole, size


def whole_records(records: Iterable[TraceRecord], cut: list[TraceCut]) -> Iterator[TraceRecord]:
    """``records`` (of ``read_trace``) up to a cut last record, which ends them as the file's end would; the
    ``TraceCut`` goes onto ``cut`` instead of being raised."""
    try:
        yield from records
    except TraceCut as exc:
        cut.append(exc)


def read_whole(source: Path | BinaryIO) -> tuple[list[TraceRecord], TraceCut | None]:
    """The whole records of a trace file (up to its truncation marker) and, if the file was cut inside a
    record, the ``TraceCut`` that says where."""
    cut: list[TraceCut] = []
    records = list(whole_records(read_trace(source), cut))
    return records, cut[0] if cut else None


def until_truncation(records: Iterable[TraceRecord]) -> Iterator[TraceRecord]:
    """The records before a truncation marker (all of them when there is none)."""
    for record in records:
        if record.truncated:
            return
        yield record


def read_trace(source: Path | BinaryIO, *, markers: bool = False) -> Iterator[TraceRecord]:
    """The records of a trace file, up to its truncation marker (with it, if ``markers``); ``TraceCut`` after
    the last whole record if the file ends inside one."""
    if isinstance(source, Path):
        with source.open("rb") as stream:
            yield from read_trace(stream, markers=markers)
        return
    # Fed by hand, not given the stream: at the end the unpacker says nothing of bytes it holds that make no
    # whole record, but ``tell()`` after each record says where the whole ones end.
    unpacker = msgpack.Unpacker(raw=False, max_bin_len=MAX_RECORD, max_buffer_size=2 * MAX_RECORD)
    index = fed = whole = 0
    while chunk := source.read(DEFAULT_BUFFER_SIZE * 8):
        try:
            unpacker.feed(chunk)
        except msgpack.BufferFull:
            raise TraceFormatError(f"trace record {index} is larger than {2 * MAX_RECORD} bytes") from None
        fed += len(chunk)
        while (item := _next(unpacker, index)) is not _END:
            whole = unpacker.tell()
            record = _record(item, index)
            if record.truncated:
                if markers:
                    yield record
                return
            yield record
            index += 1
    if fed > whole:
        raise TraceCut(index, whole, fed)


_END = object()  # no whole object in the bytes fed so far


def _next(unpacker: msgpack.Unpacker, index: int) -> object:
    """The next object the bytes fed so far complete, or ``_END``."""
    try:
        return next(unpacker)
    except StopIteration:
        return _END
    # Corrupt bytes surface as whatever msgpack meets first: invalid UTF-8 in a key, an ext code out
    # of range (ValueError), an oversized record; each is one TraceFormatError.
    except (ValueError, msgpack.UnpackException) as exc:
        raise TraceFormatError(f"trace record {index} is not valid MessagePack: "
                               f"{type(exc).__name__}: {' '.join(str(exc).split())[:120]}") from None


def _record(item: object, index: int) -> TraceRecord:
    """One unpacked record, checked."""
    direction = item.get("dir") if isinstance(item, dict) else None
    if not isinstance(item, dict) or not isinstance(direction, str) or direction not in SENDERS \
            or not isinstance(item.get("t"), (int, float)):
        raise TraceFormatError(f"trace record {index} is not a {{t, dir, bytes|eof}} map: {item!r:.80}")
    sender = SENDERS[direction]
    if item.get("truncated"):
        return TraceRecord(t=float(item["t"]), sender=sender, data=None, truncated=True)
    if item.get("eof"):
        return TraceRecord(t=float(item["t"]), sender=sender, data=None, reset=item.get("reset") is True)
    if isinstance(item.get("bytes"), bytes):
        return TraceRecord(t=float(item["t"]), sender=sender, data=item["bytes"])
    raise TraceFormatError(f"trace record {index} has neither bytes nor eof")
