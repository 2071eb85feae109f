"""Reactive Streams semantics, independent of any wire encoding.

RS-IO, RSocket and Ditto streaming carry the same contract: subscribe, demand,
terminal signals, cancellation, Id reuse, reassembly of split elements.  This
package models that contract once, as data (the transition tables) plus small
named actions; a binding (``rsio_tck.bindings.<name>``) maps its frames onto these
signals.  Nothing here knows about bytes, sockets or clocks.
"""

from .demand import UNBOUNDED, Demand, saturating_add
from .signals import Signal
from .streams import StreamRecord, StreamState

__all__ = [
    "Demand",
    "Signal",
    "StreamRecord",
    "StreamState",
    "UNBOUNDED",
    "saturating_add",
]
