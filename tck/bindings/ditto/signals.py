"""Which Reactive Streams signal each Ditto streaming action carries.

A module of its own so that the binding (``binding.py``) and the report
(``report.py``) share it without importing each other.
"""

from __future__ import annotations

# Ditto's actions as the contract's signals (bindings.md §3), for pipeline rows and the report.
SIGNAL_OF = {"subscribeForPersistedEvents": "subscribe", "subscribe": "subscribe", "request": "request",
             "cancel": "cancel", "created": "onSubscribe", "next": "onNext", "complete": "onComplete",
             "failed": "onError"}
