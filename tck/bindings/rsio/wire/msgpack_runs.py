"""Bulk decoding of element runs in the ``msgpack`` profile (see ``runs.py``).

Theory of operation: both finders look at the bytes of the current feed from a
frame boundary and either prove that a run of plain element frames starts
there, returning it with the number of bytes it covers, or return None and
leave everything to the frame-by-frame decoder.  They never raise: whatever is
unusual (a frame cut off, a wider encoding than needed, an oversize field, a
different frame) simply ends the run before it, and the general path then
decodes, or rejects, those bytes exactly as it would have without runs.

Fixed-size frames (``onNext`` in fixed-size mode, ``onNextPacked``) all have
the same length once the first frame's header (type code, Id, count) is known,
so the run is as long as that header repeats at that stride
(``runs.strided_run``).

Variable-size ``onNext`` frames are three MessagePack objects each (the type
code is the fixint 8).  A scratch ``Unpacker`` over the same bytes pulls them
in batches through ``itertools.islice``; a batch is accepted when the codes
are all 8, the Ids all ints in range and not in fixed-size mode (one
subscription or several interleaved), the elements all ``bin``, and when the bytes
it consumed equal the sum of the *shortest* encodings of its objects.  No
object is ever shorter than its shortest encoding, so that equality proves
every object used it: the type codes were the byte ``08`` and nothing else,
and each frame's extent is known without looking at it one by one.
"""

from __future__ import annotations

from itertools import accumulate, chain, islice, repeat
from operator import add
from typing import Any

import msgpack

from . import runs
from .frames import ID_MAX
from .limits import Limits
from .runs import MIN_FRAMES, ElementRun, StridedRun, VariableRun

STRONG_RUN = 4 * MIN_FRAMES  # a run at least this long resets the finder's backoff
MAX_BATCH = 4096  # frames pulled per batch of a variable-size run
FIRST_WINDOW = 2048  # bytes a variable-size attempt copies first (a failed attempt costs little)
MAX_WINDOW = 256 * 1024

_UINT_WIDTH = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}
_pack = msgpack.Packer(use_bin_type=True).pack  # writes every int and bin in its shortest encoding


def shortest_uint_length(value: int) -> int:
    """Bytes of the shortest MessagePack encoding of a non-negative int."""
    if value < 0x80:
        return 1
    if value <= 0xFF:
        return 2
    if value <= 0xFFFF:
        return 3
    if value <= 0xFFFF_FFFF:
        return 5
    return 9


def shortest_uint_at(buf: bytes | bytearray, at: int) -> tuple[int, int] | None:
    """(value, length) of an unsigned int at ``at`` written in its shortest encoding, else None."""
    if at >= len(buf):
        return None
    first = buf[at]
    if first < 0x80:
        return first, 1
    width = _UINT_WIDTH.get(first)
    if width is None or at + 1 + width > len(buf):
        return None
    value = int.from_bytes(buf[at + 1 : at + 1 + width], "big")
    if shortest_uint_length(value) != 1 + width:
        return None
    return value, 1 + width


def _shortest_uint(buf: bytes | bytearray, at: int) -> tuple[int, int] | None:
    """``shortest_uint_at`` as ``runs.fixed_run`` reads integers: (value, position after it)."""
    field = shortest_uint_at(buf, at)
    return None if field is None else (field[0], at + field[1])


def fixed_run(buf: bytes, at: int, sizes: dict[int, int], max_frame: int) -> tuple[StridedRun, int] | None:
    """A run of fixed-size ``onNext`` or ``onNextPacked`` frames starting at ``buf[at]``."""
    return runs.fixed_run(buf, at, sizes, max_frame, _shortest_uint)


def _bin_headers(lengths: list[int]) -> int:
    """Bytes of the shortest ``bin`` headers for elements of these lengths."""
    if max(lengths) < 0x100:
        return 2 * len(lengths)
    return sum(2 if n < 0x100 else 3 if n < 0x10000 else 5 for n in lengths)


def _shortest_frames(objects: list[Any], sizes: dict[int, int]) -> int | None:
    """Bytes of ``objects`` as variable-size onNext frames, (8, Id, bin) each, in their shortest
    encodings; None if they are not such frames (an Id out of range or in fixed-size mode included)."""
    frames = len(objects) // 3
    if not frames:
        return 0
    elements = objects[2::3]
    ids = objects[1::3]
    if (
        objects[0::3].count(8) != frames
        or set(map(type, ids)) != {int}
        or set(map(type, elements)) != {bytes}
    ):
        return None
    first = ids[0]
    if ids.count(first) == frames:  # one subscription: check its Id once
        if not 0 <= first <= ID_MAX or first in sizes:
            return None
        id_bytes = frames * shortest_uint_length(first)
    else:
        highest = max(ids)
        if min(ids) < 0 or highest > ID_MAX or not sizes.keys().isdisjoint(ids):
            return None
        id_bytes = frames if highest < 0x80 else sum(map(shortest_uint_length, ids))
    lengths = list(map(len, elements))
    return frames + id_bytes + _bin_headers(lengths) + sum(lengths)


def _plain_prefix(objects: list[Any], sizes: dict[int, int]) -> int:
    """How many leading objects form (8, Id, bin) triples of variable-size onNext (encodings not judged)."""
    triples = zip(objects[0::3], objects[1::3], objects[2::3])
    for index, (code, ident, element) in enumerate(triples):
        if (
            type(code) is not int
            or code != 8
            or type(ident) is not int
            or not 0 <= ident <= ID_MAX
            or ident in sizes
            or type(element) is not bytes
        ):
            return index
    return len(objects) // 3


def _exactly_shortest(buf: bytes, at: int, length: int, objects: int) -> bool:
    """Whether ``objects`` MessagePack objects fill exactly ``buf[at:at + length]``.

    ``length`` is what they take in their shortest encodings, so they fit only
    if every one of them uses it.
    """
    probe = msgpack.Unpacker(raw=False, max_buffer_size=length + 1)
    probe.feed(buf[at : at + length])
    return len(list(islice(probe, objects))) == objects and probe.tell() == length


def _shortest_prefix(buf: bytes, at: int, objects: list[Any], sizes: dict[int, int]) -> tuple[int, int] | None:
    """(frames, bytes) of the longest run of plain, shortest-encoded frames that ``objects`` start with.

    The frames before the first one that differs are candidates.  Usually they
    all qualify (the batch merely ran into the end of the feed or into another
    frame), which one re-parse proves.  Otherwise some frame used a wider
    encoding: the candidates are written out in their shortest encodings and
    compared with the bytes, and a bisection over frame ends finds the first
    frame that differs.
    """
    candidates = len(objects) // 3
    length = _shortest_frames(objects, sizes)  # the usual case: all of them (a feed's last batch)
    if length is None:
        candidates = _plain_prefix(objects, sizes)
        length = _shortest_frames(objects[: 3 * candidates], sizes)
    if not candidates or not length:
        return None
    if _exactly_shortest(buf, at, length, 3 * candidates):
        return candidates, length
    heads = list(map(add, repeat(b"\x08"), map(_pack, objects[1 : 3 * candidates : 3])))
    elements = list(map(_pack, objects[2 : 3 * candidates : 3]))
    expected = b"".join(chain.from_iterable(zip(heads, elements)))
    actual = buf[at : at + len(expected)]
    ends = [0, *accumulate(map(add, map(len, heads), map(len, elements)))]  # bytes of the first j frames
    low, high = 0, candidates
    while low < high:
        middle = (low + high + 1) // 2
        if expected[: ends[middle]] == actual[: ends[middle]]:
            low = middle
        else:
            high = middle - 1
    return (low, ends[low]) if low else None


def _pull(scratch: msgpack.Unpacker, batch: list[Any], wanted: int) -> bool:
    """Pull objects into ``batch`` until it holds ``wanted`` or the bytes run out; False if the
    Unpacker refused an object (over a limit, malformed, an unhashable map key, ...): that ends the
    run before it, and the general path names the problem."""
    try:
        batch.extend(islice(scratch, wanted - len(batch)))
    except Exception:  # noqa: BLE001 - whatever msgpack raises for bytes it cannot take
        return False
    return True


def variable_run(buf: bytes, at: int, sizes: dict[int, int], limits: Limits) -> tuple[VariableRun, int] | None:
    """A run of variable-size ``onNext`` frames, for one Id or several, starting at ``buf[at]``."""
    sid_field = shortest_uint_at(buf, at + 1)
    if sid_field is None or buf[at] != 0x08 or sid_field[0] > ID_MAX or sid_field[0] in sizes:
        return None  # the first frame is no plain one: not worth a scratch Unpacker
    scratch = msgpack.Unpacker(
        read_size=min(FIRST_WINDOW, len(buf) - at + 1),  # no 1 MiB buffer up front for an attempt
        raw=False,
        use_list=False,
        strict_map_key=False,
        max_buffer_size=len(buf) - at + 1,
        max_bin_len=limits.max_element,
        max_str_len=limits.max_string,
        max_array_len=limits.max_array,
        max_map_len=limits.max_array,
        max_ext_len=limits.max_element,
    )
    window = FIRST_WINDOW
    fed = min(len(buf), at + window)
    scratch.feed(buf[at:fed])
    items: list[bytes] = []
    ids: list[int] = []
    batch_frames = MIN_FRAMES
    accepted = 0  # bytes of the accepted batches
    while True:
        wanted = 3 * batch_frames
        batch: list[Any] = []
        refused = not _pull(scratch, batch, wanted)
        while len(batch) < wanted and fed < len(buf) and not refused:
            window = min(window * 4, MAX_WINDOW)
            upto = min(len(buf), fed + window)
            scratch.feed(buf[fed:upto])
            fed = upto
            refused = not _pull(scratch, batch, wanted)
        whole = len(batch) - len(batch) % 3
        shortest = _shortest_frames(batch, sizes) if len(batch) == wanted else None
        # tell() is exact after a whole batch; once the feed ran out it also
        # counts the header of an object cut off, so a short batch is checked
        # by parsing its bytes again instead.
        if shortest is None or scratch.tell() - accepted != shortest:
            # The run ends inside this batch (another frame, a wider encoding, an
            # object the Unpacker refused, the end of the feed): keep the frames
            # before the first that differs, if they prove plain.
            keep = _shortest_prefix(buf, at + accepted, batch[:whole], sizes)
            if keep:
                accepted += keep[1]
                items.extend(batch[2 : 3 * keep[0] : 3])
                ids.extend(batch[1 : 3 * keep[0] : 3])
            break
        accepted += shortest
        items.extend(batch[2::3])
        ids.extend(batch[1::3])
        batch_frames = min(batch_frames * 2, MAX_BATCH)
    if len(items) < MIN_FRAMES:
        return None
    first = ids[0]
    mixed = ids if ids.count(first) != len(ids) else None
    return VariableRun(subscriber=first, frames=len(items), elements=len(items), items=items, ids=mixed), accepted


class RunFinder:
    """Looks for element runs at the frame boundaries of one decoder, backing off after misses.

    Misses in a row skip 0, 1, 3, 7, ... boundaries before the next attempt: an
    odd frame now and then costs one attempt, traffic with no runs in it almost
    none.  A run shorter than ``STRONG_RUN`` frames counts as a miss here (it is
    still used), so traffic of many short runs settles on the frame-by-frame path.  The
    backoff carries over from one feed to the next: a connection keeps its kind of traffic
    across reads, and a capture read segment by segment (a few frames each, no run worth
    an attempt) would otherwise pay for an attempt in every segment: check-pcap on RS-IO
    traffic spent a fifth of its time there.  A miss at the end of a feed (a frame cut off)
    costs at most one skipped boundary in a flood, whose next attempt finds its run.
    """

    __slots__ = ("sizes", "limits", "skip", "backoff")

    def __init__(self, sizes: dict[int, int], limits: Limits) -> None:
        self.sizes = sizes  # the decoder's elementSize per Id, shared, not copied
        self.limits = limits
        self.skip = 0
        self.backoff = 0

    def find(self, chunk: bytes, at: int) -> tuple[ElementRun, int] | None:
        """A run starting at ``chunk[at]``, a frame boundary, with the bytes it covers; or None."""
        if self.skip:
            self.skip -= 1
            return None
        code = chunk[at] if at < len(chunk) else 0
        if code != 0x08 and code != 0x0B:
            return None
        found: tuple[ElementRun, int] | None = fixed_run(chunk, at, self.sizes, self.limits.max_frame)
        if found is None and code == 0x08:
            found = variable_run(chunk, at, self.sizes, self.limits)
        if found is None or found[0].frames < STRONG_RUN:
            # A miss, or a run too short to have paid for finding it.
            self.skip = self.backoff
            self.backoff = min(2 * self.backoff + 1, 1023)
        else:
            self.backoff = 0
        return found
