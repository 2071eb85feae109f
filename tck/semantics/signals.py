"""The binding-neutral signals of the Reactive Streams contract."""

from __future__ import annotations

from enum import Enum


class Signal(Enum):
    # subscriber -> publisher
    SUBSCRIBE = "subscribe"
    REQUEST = "request"
    CANCEL = "cancel"
    # publisher -> subscriber
    ON_SUBSCRIBE = "onSubscribe"
    ON_NEXT = "onNext"  # one or more whole elements (packed frames carry several)
    PART = "part"  # a non-final part of a split element
    LAST_PART = "lastPart"  # the final part of a split element
    ON_COMPLETE = "onComplete"
    ON_ERROR = "onError"

    @property
    def from_subscriber(self) -> bool:
        return self in _FROM_SUBSCRIBER


# The signals a scenario names in ``send:`` and ``expect:`` on every binding (a split element's parts are
# a binding's own frames).
CONTRACT_WORDS: tuple[str, ...] = tuple(s.value for s in Signal if s not in (Signal.PART, Signal.LAST_PART))

_FROM_SUBSCRIBER = frozenset({Signal.SUBSCRIBE, Signal.REQUEST, Signal.CANCEL})
