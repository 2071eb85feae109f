"""RSocket's part of a run's report: the protocol the run spoke, and wire statistics from its traffic.

The statistics are computed from the run's traces, decoded as the monitor decodes them
(``rsio_tck.report.traffic.decoded``); a table with nothing to show is not returned.

- Frames by type: frames of each type per direction (bytes that stopped decoding count
  once, as ``(undecodable)``).
- Fragmentation: per direction, the frames that carry a payload (requests and PAYLOADs),
  those with the F flag, the payloads they make up (a payload ends with its one frame
  without F) and how many of those came in more than one frame.  A PAYLOAD with neither N
  nor F outside a fragment chain is a bare completion, not a payload.
- Credit per stream: the REQUEST_N credit each side granted, per stream it granted credit
  on (Initial Request N of its REQUEST_STREAM, REQUEST_CHANNEL or the draft's REQUEST_SUB,
  plus every REQUEST_N): streams, grants, total, least and most per stream.
- Keepalive round-trips: the KEEPALIVEs each side sent asking for an answer (the R flag;
  in the draft, which has no R, every KEEPALIVE of the client) and the other side's
  KEEPALIVEs without R answering them in order, with the times between (the trace's times
  of the chunks that carried them).
"""

from __future__ import annotations

import statistics
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...binding import Cell, WireTable
from ...errors import Side
from ...monitor.trace import TraceRecord
from ...report.traffic import DIRECTION_NAMES, UNDECODABLE, by_direction, decoded, table_if_rows
from .frames import Keepalive, Payload, RequestChannel, RequestN, RequestStream, RequestSubscription

PROTOCOLS = {
    "rsocket-1.0": "RSocket Protocol 1.0 (Protocol.md)",
    "reactivesocket-draft": "ReactiveSocket draft (seed 001)",
}
INITIAL_CREDIT = (RequestStream, RequestChannel, RequestSubscription)


def notions(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    profile = str(run.get("profile") or "rsocket-1.0")
    return [("profile", profile), ("protocol", PROTOCOLS.get(profile, profile))]


class _Stats:
    """Accumulates one run's tables over its connections."""

    def __init__(self, profile: str) -> None:
        self.draft = profile == "reactivesocket-draft"
        self.types: Counter[tuple[str, Side]] = Counter()
        self.fragments: dict[Side, Counter[str]] = {side: Counter() for side in Side}
        self.credit: dict[Side, dict[tuple[int, int], list[int]]] = {side: {} for side in Side}
        self.asked: Counter[Side] = Counter()
        self.round_trips: dict[Side, list[float]] = {side: [] for side in Side}

    def connection(self, number: int, records: Sequence[TraceRecord], binding: Any, profile: str) -> None:
        chains: Counter[tuple[Side, int]] = Counter()  # frames with F so far, per (sender, stream)
        pending: dict[Side, deque[float]] = {side: deque() for side in Side}  # asking KEEPALIVEs' times
        for wire in decoded(binding, profile, records):
            sender, frame = wire.sender, wire.frame
            self.types[(UNDECODABLE if frame is None else frame.wire_name, sender)] += 1
            if frame is None:
                continue
            if hasattr(frame, "follows"):
                self._payload(sender, frame, chains)
            if isinstance(frame, INITIAL_CREDIT):
                self.credit[sender].setdefault((number, frame.stream_id), []).append(frame.initial_request_n)
            elif isinstance(frame, RequestN):
                self.credit[sender].setdefault((number, frame.stream_id), []).append(frame.request_n)
            elif isinstance(frame, Keepalive):
                if frame.respond or (self.draft and sender is Side.CLIENT):
                    self.asked[sender] += 1
                    pending[sender].append(wire.t)
                elif pending[sender.peer]:
                    self.round_trips[sender.peer].append(wire.t - pending[sender.peer].popleft())

    def _payload(self, sender: Side, frame: Any, chains: Counter[tuple[Side, int]]) -> None:
        key = (sender, frame.stream_id)
        if isinstance(frame, Payload) and not frame.next and not frame.follows and not chains[key]:
            return  # a bare completion (C) or an empty frame: no payload
        counts = self.fragments[sender]
        counts["frames"] += 1
        if frame.follows:
            counts["f"] += 1
            chains[key] += 1
            return
        counts["payloads"] += 1
        if chains.pop(key, 0):
            counts["fragmented"] += 1

    def tables(self) -> list[WireTable]:
        out = by_direction("frames-by-type", "Frames by type", "frame type", self.types,
                           "frames decoded from the run's traces; (undecodable): a direction's bytes that stopped "
                           "decoding")
        rows: list[tuple[Cell, ...]] = []
        for side in Side:
            c = self.fragments[side]
            if c["frames"]:
                share = c["fragmented"] / c["payloads"] if c["payloads"] else 0.0
                rows.append((DIRECTION_NAMES[side], c["frames"], c["f"], c["payloads"], c["fragmented"], share))
        out += table_if_rows("fragmentation", "Fragmentation", (
            "direction", "payload frames", "frames with F", "payloads", "fragmented payloads", "fragmented share"),
            rows, "a payload ends with its one frame without F; fragmented: it came in more than one frame")
        rows = []
        for side in Side:
            per_stream = [sum(grants) for grants in self.credit[side].values()]
            if per_stream:
                rows.append((side.value, len(per_stream), sum(map(len, self.credit[side].values())), sum(per_stream),
                             min(per_stream), max(per_stream)))
        out += table_if_rows("credit-per-stream", "Credit per stream", (
            "granted by", "streams", "grants", "total credit", "least per stream", "most per stream"),
            rows, "Initial Request N plus every REQUEST_N a side sent, per stream it granted on")
        rows = []
        for side in Side:
            if self.asked[side]:
                times = [round(1000 * t, 3) for t in self.round_trips[side]]
                spread: tuple[Cell, ...] = (min(times), statistics.median(times), max(times)) if times else ("-",) * 3
                rows.append((side.value, self.asked[side], len(times), *spread))
        asking = "KEEPALIVEs asking (the client's)" if self.draft else "KEEPALIVEs with R"
        out += table_if_rows("keepalive-round-trips", "Keepalive round-trips", (
            "asked by", asking, "answered", "least ms", "median ms", "most ms"), rows,
            "an answer is the other side's next KEEPALIVE without R; times between the chunks that carried them")
        return out


def wire_statistics(binding: Any, profile: str, traces: Iterable[Sequence[TraceRecord]]) -> list[WireTable]:
    stats = _Stats(profile)
    for number, records in enumerate(traces):
        stats.connection(number, records, binding, profile)
    return stats.tables()
