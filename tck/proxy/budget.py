"""The proxy's budget: bytes its connections may hold at once, in total (one ``HeldBudget`` per proxy run).

Theory of operation: what grows with what a sender writes is held per connection, by the
pieces that own it: the monitor's decoders (a partial frame or line) and judge (RSocket's
reassembly), ``Monitor.held``; the WebSocket observer's parsers and the message being joined,
``Observer.held``; and the connection's traces (``_Recorder.size``).  Each is bounded per
connection by the binding's maxima, which a proxy must judge with (it cannot know its
receivers' limits): 16 MiB of one RSocket frame or Ditto line, 64 MiB of RSocket reassembly per
direction, 4 MiB of trace.  So a few hostile connections at once could hold hundreds of MB.

The relay reads the connection's total from those owners after each read it judged and hands it
to ``hold``; the budget keeps only what it needs to sum them, each connection's last count
(``_charged``) and the total, so no byte is counted twice and nothing is counted per byte (a
handful of attribute reads per read of up to 64 KiB).  When a connection's bytes take the total
past ``limit``, ``hold`` says so and the relay closes that connection at the kit's own limit: no
rule sets it, so nothing after is judged against either side and neither is charged for it, as
with the kit's WebSocket limits.  Traces are kept only while the total stays within half the
limit (``trace_room``), then cut with their truncation marker: recording is worth neither a
connection nor the room judging needs, so traces alone never close one.  The overshoot is at
most one read, and a connection's count is let go (``let_go``) when it ends and its monitor
lets go of what it held.
"""

from __future__ import annotations

# Bytes across all connections of one proxy run (``--max-held``): four frames of the binding's largest (16 MiB) in
# progress at once, and with the process's own (about 60 MB at 100 connections) and the allocator's overhead
# under issue 27's 200 MB: 100 hostile connections peaked at 161-172 MB (96 MiB: 198-221; 128 MiB: 241-265;
# docs/guide/limits.md, "The proxy's budget across connections").
DEFAULT_MAX_HELD = 64 * 1024 * 1024


class HeldBudget:
    def __init__(self, limit: int = DEFAULT_MAX_HELD) -> None:
        if limit < 1:
            raise ValueError(f"a budget of held bytes must be positive, not {limit}")
        self.limit = limit
        self.total = 0  # bytes held by every connection, as last counted
        self.peak = 0  # the most held at once
        self._charged: dict[int, int] = {}  # per connection: its count when last held

    def hold(self, connection: int, held: int) -> bool:
        """``connection`` holds ``held`` bytes now; whether the total is still within the limit."""
        total = self.total + held - self._charged.get(connection, 0)
        self._charged[connection] = held
        self.total = total
        if total > self.peak:
            self.peak = total
        return total <= self.limit

    def trace_room(self, size: int) -> bool:
        """Whether a trace record of ``size`` bytes may be kept: traces are kept while the total stays within half
        the limit, so that recording never leaves judging without room."""
        return self.total + size <= self.limit // 2

    def let_go(self, connection: int) -> None:
        """``connection`` holds nothing any more (it ended, and its monitor and traces were let go)."""
        self.total -= self._charged.pop(connection, 0)

    def describe(self) -> str:
        """The limit, in words, for the line of a connection closed at it."""
        return f"{_mib(self.limit)} held across connections (--max-held)"


def _mib(count: int) -> str:
    return f"{count / (1 << 20):g} MiB"
