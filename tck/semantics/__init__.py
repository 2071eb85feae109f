"""Reactive Streams semantics, independent of any wire encoding.

RS-IO, RSocket and Ditto streaming carry the same contract: subscribe, demand,
terminal signals, cancellation, Id reuse, reassembly of split elements.  This
package models that contract once, as data (the transition tables) plus small
named actions; a binding (``rsio_tck.bindings.<name>``) maps its frames onto these
signals.  Nothing here knows about bytes, sockets or clocks.

Theory of operation: ``streams`` holds the per-subscription states and the one transition
table, ``TRANSITIONS[(state, signal)]``, whose every entry names the rule it enforces;
``demand`` holds outstanding demand, saturating at a ceiling (``Demand.add``, ``UNBOUNDED``);
``signals`` names the contract's signals.  A binding's judge owns one ``StreamRecord`` per
subscription and applies each signal through the table; binding differences are options of
the table (a stream that opens with no onSubscribe frame, Ids never reused, the ceiling), not
copies of it.
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
