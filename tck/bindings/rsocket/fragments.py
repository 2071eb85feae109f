"""Fragment reassembly for one direction of an RSocket connection (sans-IO).

Protocol.md, Fragmentation And Reassembly: REQUEST_RESPONSE, REQUEST_FNF,
REQUEST_STREAM, REQUEST_CHANNEL and PAYLOAD may be fragmented.  The first
fragment is the frame itself with the F (follows) flag; every further fragment
is a PAYLOAD on the same stream, the last one without F.  Metadata travels
completely before data.  A PAYLOAD with both F and C ends the chain (the F flag
is implicitly ignored, Handling the Unexpected).  The sender may abandon a
chain by sending CANCEL; an ERROR on the stream ends it as well.

Theory of operation.  ``Reassembler.push`` takes every decoded frame of one
direction in order and returns what the layer above should see: the frame
itself when it is not part of a chain, ``None`` while a chain is incomplete, or
the whole request/payload once its last fragment arrives.  The whole frame is
the first fragment with the joined metadata and data, ``follows`` cleared, and:
``next`` set when any fragment had N; ``complete`` from the last fragment (for
REQUEST_CHANNEL, also from the first).  Frames out of ``push`` never carry F.

Bytes held are bounded: all chains in progress together may hold at most
``max_reassembly`` bytes, counting a fixed cost per chain, so neither a huge
fragment chain nor many empty ones grow memory without bound (RS-LIMIT-1).
Reassembly is per direction: use one Reassembler for each side's frames.
The frame types it joins are ``frames.FRAGMENTABLE``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .codec import DEFAULT_LIMITS, RSocketLimits, violation
from .frames import (
    Cancel,
    Decoded,
    Error,
    Payload,
    RequestChannel,
    RequestFnf,
    RequestResponse,
    RequestStream,
)

CHAIN_COST = 256  # bytes charged per chain in progress, whatever its fragments hold

Fragmentable = RequestResponse | RequestFnf | RequestStream | RequestChannel | Payload


@dataclass(slots=True)
class _Chain:
    first: Fragmentable  # the first fragment without its metadata and data (``metadata``, ``data`` hold them)
    metadata: bytearray | None
    data: bytearray = field(default_factory=bytearray)
    next: bool = False
    fragments: int = 1


class Reassembler:
    def __init__(self, limits: RSocketLimits | None = None) -> None:
        self.limits = limits or DEFAULT_LIMITS
        self._chains: dict[int, _Chain] = {}
        self.held = 0  # bytes charged against max_reassembly

    def clear(self) -> None:
        """Drop every chain in progress (nothing more of this direction will be judged)."""
        self._chains.clear()
        self.held = 0

    def in_progress(self) -> frozenset[int]:
        """Stream ids with a fragment chain in progress."""
        return frozenset(self._chains)

    def push(self, frame: Decoded) -> Decoded | None:
        if not isinstance(frame, (RequestResponse, RequestFnf, RequestStream, RequestChannel, Payload)):
            if isinstance(frame, (Cancel, Error)):
                self._drop(frame.stream_id)  # the sender abandoned the chain, or the stream ended
            return frame
        chain = self._chains.get(frame.stream_id)
        ends = not frame.follows or (isinstance(frame, Payload) and frame.complete)
        if chain is None:
            if ends:
                return replace(frame, follows=False) if frame.follows else frame
            self._start(frame)
            return None
        if not isinstance(frame, Payload):
            raise violation(
                "RS-FRAG-1",
                f"{frame.wire_name} on stream {frame.stream_id} while fragment {chain.fragments} of a "
                f"{chain.first.wire_name} is in progress; the next fragment must be a PAYLOAD",
            )
        self._append(chain, frame)
        if not ends:
            return None
        return self._finish(chain, frame)

    # -- chains ---------------------------------------------------------------------------

    def _charge(self, size: int, stream_id: int) -> None:
        self.held += size
        if self.held > self.limits.max_reassembly:
            raise violation(
                "RS-LIMIT-1",
                f"fragments on stream {stream_id} bring the bytes held for reassembly to {self.held}, "
                f"over the limit {self.limits.max_reassembly}",
            )

    def _start(self, frame: Fragmentable) -> None:
        metadata = None if frame.metadata is None else bytearray(frame.metadata)
        # The first fragment is kept without its bytes: they are copied into the chain, and keeping them in the
        # frame as well held a large first fragment twice (counted once in ``held``).
        chain = _Chain(first=replace(frame, metadata=None, data=b""), metadata=metadata, data=bytearray(frame.data),
                       next=_has_next(frame))
        self._chains[frame.stream_id] = chain
        self._charge(CHAIN_COST + len(frame.metadata or b"") + len(frame.data), frame.stream_id)

    def _append(self, chain: _Chain, frame: Payload) -> None:
        chain.fragments += 1
        if frame.metadata:
            if chain.data:
                raise violation(
                    "RS-FRAG-2",
                    f"PAYLOAD fragment {chain.fragments} on stream {frame.stream_id} carries "
                    f"{len(frame.metadata)} bytes of metadata after {len(chain.data)} bytes of data",
                )
            if chain.metadata is None:
                chain.metadata = bytearray()
            chain.metadata += frame.metadata
        elif frame.metadata is not None and chain.metadata is None:
            chain.metadata = bytearray()  # M set with no bytes: the whole still has (empty) metadata
        chain.data += frame.data
        chain.next = chain.next or frame.next
        self._charge(len(frame.metadata or b"") + len(frame.data), frame.stream_id)

    def _finish(self, chain: _Chain, last: Payload) -> Fragmentable:
        self._drop(last.stream_id)
        first = chain.first
        metadata = None if chain.metadata is None else bytes(chain.metadata)
        data = bytes(chain.data)
        if isinstance(first, Payload):
            return replace(first, follows=False, next=chain.next, complete=last.complete, metadata=metadata, data=data)
        if isinstance(first, RequestChannel):
            return replace(first, follows=False, complete=first.complete or last.complete, metadata=metadata, data=data)
        return replace(first, follows=False, metadata=metadata, data=data)

    def _drop(self, stream_id: int) -> None:
        chain = self._chains.pop(stream_id, None)
        if chain is not None:
            self.held -= CHAIN_COST + len(chain.metadata or b"") + len(chain.data)


def _has_next(frame: Fragmentable) -> bool:
    return frame.next if isinstance(frame, Payload) else False


def fragment(frame: Fragmentable, max_payload: int) -> list[Fragmentable]:
    """``frame`` split so that no fragment carries more than ``max_payload`` bytes of metadata plus data.

    The first fragment is ``frame``'s own type; the rest are PAYLOADs on its
    stream with N set.  Metadata goes out completely before data; F is set on
    all but the last fragment, and C (of a PAYLOAD or REQUEST_CHANNEL) only on
    the last one, since a fragment with C ends the chain.  A frame that fits is
    returned alone, unchanged.  In ``reactivesocket-draft`` only PAYLOAD (its
    RESPONSE) has an F flag, so only PAYLOAD fragments can be sent there.
    """
    if max_payload < 1:
        raise ValueError(f"max_payload {max_payload} is below 1")
    metadata = frame.metadata or b""
    total = len(metadata) + len(frame.data)
    if total <= max_payload:
        return [frame]
    complete = isinstance(frame, (Payload, RequestChannel)) and frame.complete
    pieces: list[tuple[bytes | None, bytes]] = []
    meta_pos = data_pos = 0
    while meta_pos < len(metadata) or data_pos < len(frame.data) or not pieces:
        room = max_payload
        meta = metadata[meta_pos : meta_pos + room]
        meta_pos += len(meta)
        room -= len(meta)
        data = frame.data[data_pos : data_pos + room]
        data_pos += len(data)
        # M stays set on the first fragment of a frame with (even empty) metadata, and on any carrying some.
        has_meta = frame.metadata is not None and (bool(meta) or not pieces)
        pieces.append((meta if has_meta else None, data))
    out: list[Fragmentable] = []
    for index, (meta_part, data_part) in enumerate(pieces):
        last = index == len(pieces) - 1
        if index == 0:
            first: Fragmentable = replace(frame, follows=True, metadata=meta_part, data=data_part)
            if isinstance(first, (Payload, RequestChannel)):
                first = replace(first, complete=False)
            out.append(first)
        else:
            out.append(
                Payload(
                    stream_id=frame.stream_id,
                    follows=not last,
                    complete=complete and last,
                    next=True,
                    metadata=meta_part,
                    data=data_part,
                )
            )
    return out
