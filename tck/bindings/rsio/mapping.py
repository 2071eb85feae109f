"""The RS-IO binding: how each RS-IO frame maps onto the Reactive Streams model.

This is the only place that knows both the RS-IO frames and the
binding-neutral signals of ``rsio_tck.semantics``.  A second binding (RSocket,
Ditto) writes its own module like this one and reuses the model, the monitor
and the scenario engine unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import Side
from ...semantics.signals import Signal
from ...semantics.streams import SignalArgs, Transition
from .model import ConnectionModel
from .wire.frames import (
    Cancel,
    ClientHello,
    Frame,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextLastPart,
    OnNextPacked,
    OnNextPart,
    OnSubscribe,
    Request,
    ServerHello,
    Subscribe,
)

# Stream frames: the signal each carries and how its fields become SignalArgs.
STREAM_SIGNALS: dict[type, tuple[Signal, Callable[[Any], SignalArgs]]] = {
    Subscribe: (Signal.SUBSCRIBE, lambda f: SignalArgs(amount=f.initial_demand)),
    Request: (Signal.REQUEST, lambda f: SignalArgs(amount=f.demand)),
    Cancel: (Signal.CANCEL, lambda f: SignalArgs()),
    OnSubscribe: (Signal.ON_SUBSCRIBE, lambda f: SignalArgs(element_size=f.element_size)),
    OnNext: (Signal.ON_NEXT, lambda f: SignalArgs(count=1)),
    OnNextPacked: (Signal.ON_NEXT, lambda f: SignalArgs(count=f.count, packed=True)),
    OnNextPart: (Signal.PART, lambda f: SignalArgs(element=f.element)),
    OnNextLastPart: (Signal.LAST_PART, lambda f: SignalArgs(element=f.element)),
    OnComplete: (Signal.ON_COMPLETE, lambda f: SignalArgs()),
    OnError: (Signal.ON_ERROR, lambda f: SignalArgs(text=f.error)),
}


def apply_frame(model: ConnectionModel, sender: Side, frame: Frame) -> Transition | None:
    """Judge one RS-IO frame sent by ``sender``; raises ProtocolViolation.

    Returns the stream transition a stream frame took (None for hellos and goodbyes).
    """
    kind = type(frame)
    if kind is OnNext and model.deliver_fast(sender, frame.subscriber, 1):  # type: ignore[union-attr]
        return None
    mapped = STREAM_SIGNALS.get(kind)
    if mapped is not None:
        signal, args = mapped
        return model.stream(sender, signal, frame.subscriber, args(frame))  # type: ignore[union-attr]
    if kind is ClientHello or kind is ServerHello:
        model.hello(sender, client_kind=kind is ClientHello, version=frame.version,  # type: ignore[union-attr]
                    extensions=frame.extensions)  # type: ignore[union-attr]
    elif kind is Goodbye:
        model.goodbye(sender, frame.reason)  # type: ignore[union-attr]
    else:
        raise TypeError(f"not an RS-IO frame: {frame!r}")
    return None
