"""The conformance monitor: judges every frame of one connection, both directions, online or offline.

Theory of operation.  ``Monitor`` is given the bytes each side sent, in the order observed, with
their times.  It decodes each direction with the binding's incremental decoder and hands every
frame to the binding's per-connection judge, which reports each broken rule as a ``Finding``;
judging goes on after a violation, and a direction that stops decoding is dead while the other
is still judged.  The scenario runner, listen mode and the proxy feed it as bytes cross;
``check_trace`` feeds it a recorded trace (``trace``: JSON lines of timestamped bytes, with a
truncation marker where recording stopped), so a verdict can be reproduced from the run
directory alone.  The monitor holds no clock and no socket.
"""

from .monitor import Finding, Monitor
from .trace import TraceRecord, read_trace, write_trace

__all__ = ["Finding", "Monitor", "TraceRecord", "read_trace", "write_trace"]
