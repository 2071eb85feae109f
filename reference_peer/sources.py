"""Where the elements of a publication come from: the test publishers and queues.

A ``Source`` yields elements on request and knows how the stream ends.  It
decides *what* is sent; how elements are framed (onNext, packed, split) is the
business of ``flows`` and the session's policy.  Sources are synchronous: an
application publisher (async generator, Reactive Streams Publisher) feeds a
``QueueSource`` from its own task, so every publication is produced by the
same code under the same backpressure.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import msgpack

from rsio_tck.testpubs import Error, Fixed, Infinite, Large, Range, TestPublisher, large_bytes

INFINITE = 2**63 - 1  # what ``available`` says for a source without end


@dataclass(frozen=True, slots=True)
class End:
    """How a stream ends: ``error`` None for onComplete, else the onError text."""

    error: str | None = None


COMPLETE = End()


class Source:
    element_size: int = 0  # > 0: fixed-size mode

    def available(self) -> int:
        """Elements that can be taken now."""
        raise NotImplementedError

    def take(self, n: int) -> list[bytes]:
        """The next ``n`` elements (n <= available())."""
        raise NotImplementedError

    def take_packed(self, n: int) -> bytes:
        """The next ``n`` fixed-size elements as one buffer."""
        return b"".join(self.take(n))

    def end(self) -> End | None:
        """How the stream ends once nothing is available; None while more may come."""
        return None

    def stop(self) -> None:
        """The subscription is over (cancelled, failed, connection gone): release what is held."""


class RangeSource(Source):
    """``first .. first+count-1`` as MessagePack ints, then ``end``."""

    def __init__(self, first: int, count: int | None, end: End = COMPLETE) -> None:
        self.next = first
        self.left = count  # None: without end
        self.final = end
        self._pack = msgpack.Packer().pack
        # Rewrites a batch (first value, shortest encodings) in the widths the session writes.
        self.widen: Callable[[int, list[bytes]], list[bytes]] | None = None

    def available(self) -> int:
        return INFINITE if self.left is None else self.left

    def take(self, n: int) -> list[bytes]:
        pack, first = self._pack, self.next
        self.next = first + n
        if self.left is not None:
            self.left -= n
        out = [pack(i) for i in range(first, first + n)]
        return out if self.widen is None else self.widen(first, out)

    def end(self) -> End | None:
        return self.final if self.left == 0 else None


class FixedElements:
    """Element i = i mod 256^K as K bytes big-endian, produced a block at a time.

    For K <= 16 a block holds 256^min(K, 2) consecutive elements: the low bytes
    of each element follow a fixed pattern and the high bytes are the block
    number, rewritten (one strided slice assignment per byte column) only when
    they change.  Taking n elements is then a slice of that block.
    """

    BLOCK_MAX_K = 16

    def __init__(self, size: int) -> None:
        self.size = size
        self._mod = 256**size
        if size > self.BLOCK_MAX_K:
            return
        self.low = min(size, 2)
        self.per_block = 256**self.low
        self.block = bytearray(self.per_block * size)
        if self.low == 1:
            self.block[size - 1 :: size] = bytes(range(256))
        else:
            self.block[size - 2 :: size] = bytes(hi for hi in range(256) for _ in range(256))
            self.block[size - 1 :: size] = bytes(range(256)) * 256
        self._upper = bytearray(size - self.low)  # the high bytes currently written
        self._block_no = 0

    def _select(self, number: int) -> None:
        if number == self._block_no:
            return
        self._block_no = number
        width = self.size - self.low
        upper = (number % 256**width).to_bytes(width, "big") if width else b""
        for column, value in enumerate(upper):
            if self._upper[column] != value:
                self._upper[column] = value
                self.block[column :: self.size] = bytes((value,)) * self.per_block

    def get(self, first: int, n: int) -> bytes:
        size = self.size
        if size > self.BLOCK_MAX_K:
            mod = self._mod
            return b"".join([(i % mod).to_bytes(size, "big") for i in range(first, first + n)])
        pieces = []
        while n > 0:
            number, offset = divmod(first, self.per_block)
            take = min(n, self.per_block - offset)
            self._select(number)
            pieces.append(bytes(self.block[offset * size : (offset + take) * size]))
            first += take
            n -= take
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)


class FixedSource(Source):
    """tck/fixed: fixed-size mode; element i is i as K bytes big-endian."""

    def __init__(self, size: int, count: int) -> None:
        self.element_size = size
        self.next = 0
        self.left = count
        self._elements = FixedElements(size)

    def available(self) -> int:
        return self.left

    def take_packed(self, n: int) -> bytes:
        data = self._elements.get(self.next, n)
        self.next += n
        self.left -= n
        return data

    def take(self, n: int) -> list[bytes]:
        data = self.take_packed(n)
        k = self.element_size
        return [data[i : i + k] for i in range(0, len(data), k)]

    def end(self) -> End | None:
        return COMPLETE if self.left == 0 else None


class LargeSource(Source):
    """tck/large: ``count`` elements of ``size`` bytes, read a part at a time."""

    def __init__(self, size: int, count: int, part: int | None) -> None:
        self.size = size
        self.part = part
        self.next = 0
        self.left = count

    def available(self) -> int:
        return self.left

    def begin(self) -> int:
        """Start the next element; returns its index."""
        index = self.next
        self.next += 1
        self.left -= 1
        return index

    def read(self, index: int, offset: int, length: int) -> bytes:
        return large_bytes(index, offset, length)

    def take(self, n: int) -> list[bytes]:
        return [self.read(self.begin(), 0, self.size) for _ in range(n)]

    def end(self) -> End | None:
        return COMPLETE if self.left == 0 else None


class QueueSource(Source):
    """Elements pushed by someone else (an application publisher, tck/subscribe reports).

    ``on_taken`` is called after elements are taken, so the feeder can fetch more.
    """

    def __init__(self, element_size: int = 0) -> None:
        self.element_size = element_size
        self.items: deque[bytes] = deque()
        self.ended: End | None = None
        self.on_taken: Callable[[], None] | None = None
        self.on_stop: Callable[[], None] | None = None

    def push(self, item: bytes) -> None:
        self.items.append(item)

    def finish(self, end: End) -> None:
        if self.ended is None:
            self.ended = end

    def available(self) -> int:
        return len(self.items)

    def take(self, n: int) -> list[bytes]:
        popleft = self.items.popleft
        out = [popleft() for _ in range(n)]
        if self.on_taken is not None:
            self.on_taken()
        return out

    def end(self) -> End | None:
        return self.ended if not self.items else None

    def stop(self) -> None:
        self.items.clear()
        if self.on_stop is not None:
            callback, self.on_stop = self.on_stop, None
            callback()


def source_for(spec: TestPublisher) -> Source:
    """The source of a parsed test publisher (tck/subscribe excepted: it needs a session)."""
    if isinstance(spec, Range):
        return RangeSource(spec.start, spec.count)
    if isinstance(spec, Infinite):
        return RangeSource(spec.start, None)
    if isinstance(spec, Error):
        return RangeSource(0, spec.after, End(error=spec.message))
    if isinstance(spec, Fixed):
        return FixedSource(spec.size, spec.count)
    if isinstance(spec, Large):
        return LargeSource(spec.size, spec.count, spec.part)
    raise TypeError(f"{spec!r} has no plain source")
