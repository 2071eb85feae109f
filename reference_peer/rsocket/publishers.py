"""The test publishers of bindings.md §2 as RSocket serves them: names to sources of element bytes.

Names follow rsio-v0 §8 (parsed by ``rsio_tck.testpubs``); elements are the
decimal UTF-8 text of the integer (``tck/range``, ``tck/infinite``,
``tck/error``), the §8 byte pattern (``tck/large``) or K bytes big-endian
(``tck/fixed``).  RSocket adds ``tck/fnf?key=K`` (fire-and-forget counts),
``tck/fnf-count?key=K`` (one element: the count) and ``tck/echo`` (request-channel).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

from rsio_tck import testpubs
from rsio_tck.semantics.demand import UNBOUNDED

from ..sources import COMPLETE, End, FixedSource, LargeSource, QueueSource, Source


class CountingSource(Source):
    """``first, first+1, ...`` as decimal UTF-8 text; ``count`` None: without end."""

    def __init__(self, first: int, count: int | None, end: End = COMPLETE) -> None:
        self.next = first
        self.left = count
        self.final = end

    def available(self) -> int:
        return UNBOUNDED if self.left is None else self.left

    def take(self, n: int) -> list[bytes]:
        first = self.next
        self.next = first + n
        if self.left is not None:
            self.left -= n
        return [str(i).encode() for i in range(first, first + n)]

    def end(self) -> End | None:
        return self.final if self.left == 0 else None


@dataclass(frozen=True, slots=True)
class Opened:
    source: Source
    part: int | None = None  # tck/large?part=P: fragments carry at most P bytes


@dataclass(frozen=True, slots=True)
class Unknown:
    reason: str


@dataclass(frozen=True, slots=True)
class Echo:
    """tck/echo: a request-channel that sends back what it receives."""


@dataclass(frozen=True, slots=True)
class FnfCount:
    key: str


@dataclass(frozen=True, slots=True)
class SubscribeBack:
    spec: testpubs.SubscribeBack


Resolved = Opened | Unknown | Echo | FnfCount | SubscribeBack


def _key(query: str) -> str | None:
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query), errors="strict")
    except (ValueError, UnicodeDecodeError):
        return None
    params = dict(pairs)
    return params["key"] if len(pairs) == 1 and "key" in params else None


def resolve(data: bytes, counts: dict[str, int]) -> Resolved:
    """What the request whose data is ``data`` asks for."""
    try:
        name = data.decode("utf-8")
    except UnicodeDecodeError:
        return Unknown("the request's data is not UTF-8 text naming a publisher")
    path, _, query = name.partition("?")
    if path == "tck/echo":
        return Echo() if not query else Unknown(f"tck/echo takes no parameters: {name!r}")
    if path in ("tck/fnf", "tck/fnf-count"):
        key = _key(query)
        if key is None:
            return Unknown(f"{path} takes exactly one parameter, key: {name!r}")
        return FnfCount(key) if path == "tck/fnf-count" else Unknown("tck/fnf is served by fire-and-forget only")
    spec = testpubs.parse(name)
    if spec is None:
        return Unknown(f"no publisher {name!r}")
    if isinstance(spec, testpubs.Malformed):
        return Unknown(spec.reason)
    if isinstance(spec, testpubs.SubscribeBack):
        return SubscribeBack(spec)
    if isinstance(spec, testpubs.Range):
        return Opened(CountingSource(spec.start, spec.count))
    if isinstance(spec, testpubs.Infinite):
        return Opened(CountingSource(spec.start, None))
    if isinstance(spec, testpubs.Error):
        return Opened(CountingSource(0, spec.after, End(error=spec.message)))
    if isinstance(spec, testpubs.Fixed):
        return Opened(FixedSource(spec.size, spec.count))
    return Opened(LargeSource(spec.size, spec.count, spec.part), part=spec.part)


def count_fnf(data: bytes, counts: dict[str, int]) -> bool:
    """A fire-and-forget: ``tck/fnf?key=K`` counts one for K; anything else is dropped."""
    try:
        path, _, query = data.decode("utf-8").partition("?")
    except UnicodeDecodeError:
        return False
    key = _key(query) if path == "tck/fnf" else None
    if key is None:
        return False
    counts[key] = counts.get(key, 0) + 1
    return True


__all__ = ["CountingSource", "Echo", "FnfCount", "Opened", "QueueSource", "Resolved", "SubscribeBack", "Unknown",
           "count_fnf", "resolve"]
