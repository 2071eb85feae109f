"""RS-IO's part of a run's report: codec, SPEC version and the target's hello; wire statistics.

The statistics are the pipeline's wire statistics (``rsio_tck.pipeline.derive.wire_stats``)
for this one run, with the pipeline's definitions: connections (with a frame), frames,
bytes, elements, bytes per element, header overhead (the share of element frames' bytes
that is not element bytes), the packed and split shares of element frames' bytes and
frames per connection; a measure with nothing to divide by is left out.  Then frames by
type, per direction.

Frames come from ``rsio_tck.report.traffic.decoded`` (the monitor's decoding), and a
frame's size is its re-encoding's, on one encoder per direction kept in step as the
pipeline's rows do; the pipeline gives a non-canonical frame its bytes as sent instead,
the only way the two can differ.  Not building the pipeline's rows keeps a trace of a
flood of tiny elements (4 MiB, some 800 000 frames) to seconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...binding import Cell, WireTable
from ...errors import ProtocolViolation, Side
from ...monitor.trace import TraceRecord
from ...pipeline.framing import ELEMENT_TYPES, PART_TYPES
from ...report.traffic import UNDECODABLE, by_direction, decoded
from .rows import element_load


def notions(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    hello = (run.get("fingerprint") or {}).get("hello")
    if hello:
        seen = f"serverHello(version={hello.get('version')}, extensions={hello.get('extensions')}) {hello.get('hex', '')}"
    else:
        seen = "not seen"
    return [("codec", str(run.get("codec") or run.get("profile") or "msgpack")),
            ("SPEC", str(run.get("spec_version") or "?")), ("target hello", seen.strip())]


def wire_statistics(binding: Any, profile: str, traces: Iterable[Sequence[TraceRecord]]) -> list[WireTable]:
    sums: Counter[str] = Counter()
    types: Counter[tuple[str, Side]] = Counter()
    for records in traces:
        encoders = {side: binding.encoder(profile) for side in Side}
        frames = 0
        for wire in decoded(binding, profile, records):
            frame = wire.frame
            if frame is None:
                types[(UNDECODABLE, wire.sender)] += 1
                continue
            kind = frame.wire_name
            types[(kind, wire.sender)] += 1
            frames += 1
            try:
                size = len(encoders[wire.sender].encode(frame))
            except (ValueError, ProtocolViolation):
                size = 0  # a frame the encoder refuses (a kit's deliberate violation): its bytes are not counted
            payload, elements = element_load(frame)
            sums["bytes"] += size
            sums["payload"] += payload
            sums["elements"] += elements
            if kind in ELEMENT_TYPES:
                sums["element_bytes"] += size
            if kind == "onNextPacked":
                sums["packed"] += size
            if kind in PART_TYPES:
                sums["split"] += size
        sums["frames"] += frames
        sums["connections"] += 1 if frames else 0
    out: list[WireTable] = []
    if sums["frames"]:
        measures: list[tuple[Cell, ...]] = [
            ("connections", sums["connections"]), ("frames", sums["frames"]), ("bytes", sums["bytes"]),
            ("elements", sums["elements"]), ("element frame bytes", sums["element_bytes"]),
            ("element bytes", sums["payload"])]
        if sums["elements"]:
            measures.append(("bytes per element", sums["element_bytes"] / sums["elements"]))
        if sums["element_bytes"]:
            element_bytes = sums["element_bytes"]
            measures += [("header overhead", 1 - sums["payload"] / element_bytes),
                         ("packed share", sums["packed"] / element_bytes),
                         ("split share", sums["split"] / element_bytes)]
        measures.append(("frames per connection", sums["frames"] / sums["connections"]))
        out.append(WireTable("totals", "Totals", ("measure", "value"), tuple(measures),
                             "the pipeline's wire statistics for this run: shares are of element frames' bytes"))
    out += by_direction("frames-by-type", "Frames by type", "frame type", types,
                        "frames decoded from the run's traces; (undecodable): a direction's bytes that stopped "
                        "decoding")
    return out
