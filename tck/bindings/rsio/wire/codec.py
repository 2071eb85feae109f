"""What every RS-IO codec provides, and the per-direction state both codec halves keep.

A codec (wire profile) is a pair of stateful halves for one direction of one
connection: a ``FrameEncoder`` for what a party sends and a ``FrameDecoder`` for
what it receives.  Both remember each fixed-size stream's ``elementSize`` from
the ``onSubscribe`` frames that travel in their direction, because a fixed-size
``onNext`` or ``onNextPacked`` cannot be framed without it (rsio-v0 section 5).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ....errors import ProtocolViolation
from .frames import (
    EXTENSION_CODES,
    RESERVED_CODES,
    Frame,
    OnComplete,
    OnError,
    OnSubscribe,
)
from .limits import Limits
from .runs import ElementRun


class FrameEncoder(Protocol):
    def encode(self, frame: Frame) -> bytes: ...

    def element_size(self, subscriber: int) -> int: ...


class FrameDecoder(Protocol):
    offset: int  # bytes of the stream consumed into complete frames
    # After a feed raised: the frames (and runs) it completed before the offending bytes.
    salvaged: list[Frame | ElementRun]

    @property
    def held(self) -> int:
        """Bytes of the frame in progress kept."""
        ...

    def feed(self, data: bytes) -> list[Frame]: ...

    # As ``feed``, but long runs of element frames may come back as one ``ElementRun``.
    def feed_runs(self, data: bytes) -> list[Frame | ElementRun]: ...

    def eof(self) -> None: ...

    def element_size(self, subscriber: int) -> int: ...


class Codec(Protocol):
    name: str

    def encoder(self, limits: Limits | None = None) -> FrameEncoder: ...

    def decoder(self, limits: Limits | None = None) -> FrameDecoder: ...


class ElementSizes:
    """elementSize per subscriber Id for the fixed-size streams of one direction.

    Only sizes > 0 are stored; a terminal signal forgets the Id, because nothing
    of that subscription follows it (and a reuse brings its own onSubscribe).

    ``limit`` bounds this memory.  Every entry answers a subscribe of the receiver's
    own, so a receiver sets it above the fixed-size subscriptions it ever opens
    (the kit opens a few dozen, the reference peer at most its subscription cap);
    more entries than that mean onSubscribes for Ids nobody subscribed, which is
    the sender's STR-4, not a length over a limit (SPEC.md Decision s).
    """

    __slots__ = ("sizes", "limit")

    def __init__(self, limit: int) -> None:
        self.sizes: dict[int, int] = {}
        self.limit = limit

    def track(self, frame: Frame) -> None:
        if isinstance(frame, OnSubscribe):
            if frame.element_size > 0:
                if frame.subscriber not in self.sizes and len(self.sizes) >= self.limit:
                    raise ProtocolViolation(
                        rule="STR-4",
                        side=None,
                        message=f"more than {self.limit} fixed-size streams at once: more than the receiver "
                                "ever subscribed, so some onSubscribe answers no subscribe",
                    )
                self.sizes[frame.subscriber] = frame.element_size
            else:
                self.sizes.pop(frame.subscriber, None)
        elif isinstance(frame, (OnComplete, OnError)):
            self.sizes.pop(frame.subscriber, None)


class DecoderBase:
    """The entry points both profiles' incremental decoders share.

    A subclass sets ``_sizes`` and decodes in ``_decode_feed``.  A violation raised
    there kills the decoder (every later feed raises it again) and keeps what that
    feed completed before the offending bytes as ``salvaged``.
    """

    _sizes: ElementSizes

    def __init__(self) -> None:
        self._dead: ProtocolViolation | None = None
        # What the feed that raised completed before the bytes that broke it.
        self.salvaged: list[Frame | ElementRun] = []

    def element_size(self, subscriber: int) -> int:
        return self._sizes.sizes.get(subscriber, 0)

    def feed(self, data: bytes) -> list[Frame]:
        out: list[Frame] = []
        self._feed(data, out, False)
        return out

    def feed_runs(self, data: bytes) -> list[Frame | ElementRun]:
        """As ``feed``, but long runs of element frames come back as one ``ElementRun`` each."""
        out: list[Frame | ElementRun] = []
        self._feed(data, out, True)
        return out

    def _feed(self, data: bytes, out: list[Any], runs: bool) -> None:
        if self._dead is not None:
            raise self._dead.again()
        try:
            self._decode_feed(data, out, runs)
        except ProtocolViolation as violation:
            self._dead = violation.again()  # kept without the traceback of this raise (``again``)
            self.salvaged = out
            raise

    def _decode_feed(self, data: bytes, out: list[Any], runs: bool) -> None:
        raise NotImplementedError


def type_code_violation(code: int, offset: int) -> ProtocolViolation:
    """The violation for a type code that names no version-0 message."""
    if code in EXTENSION_CODES:
        return ProtocolViolation(
            rule="EXT-2",
            side=None,
            offset=offset,
            message=f"type code 0x{code:02x} belongs to an extension that was not negotiated",
        )
    what = "reserved" if code in RESERVED_CODES else "invalid"
    return ProtocolViolation(
        rule="ERR-7", side=None, offset=offset, message=f"{what} type code 0x{code:02x}"
    )


CodecFactory = Callable[[], Codec]
