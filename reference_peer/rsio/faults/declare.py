"""The RS-IO peer's fault table, ``FAULT_TABLE``, and what its fault areas declare faults with.

``fault(name, rule, description)`` declares a fault on ``FAULT_TABLE`` (an RS-IO rule of
``rsio_tck.catalogue.RULES``); the area modules of this package (``closing``, ``connection``,
``streams``, ``subscriber``) call it when the package imports them.  The helpers encode
raw bytes for the session's codec, for the faults that write them (ERR-*).  This module
imports no area: the package's ``__init__`` gathers them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgpack

from rsio_tck.catalogue import RULES

from ...fault_model import Fault, FaultTable, first_time
from ..policy import Policy

if TYPE_CHECKING:
    from ..connection import RsioConnection
    from ..flows import Outflow

Base = Callable[..., Any]

FAULT_TABLE = FaultTable(Policy, RULES.__contains__, "a rule of the catalogue")
FAULTS: dict[str, Fault] = FAULT_TABLE.faults
fault = FAULT_TABLE.fault
build_policy = FAULT_TABLE.build_policy


def _once(flow: Outflow, mark: str) -> bool:
    """True the first time ``mark`` is asked for on ``flow``."""
    return first_time(flow.marks, mark)


def _uint(s: RsioConnection, value: int) -> bytes:
    if s.config.codec == "varint":
        from rsio_tck.bindings.rsio.wire.varint_codec import uvarint

        return uvarint(value)
    return msgpack.packb(value)


def _text(s: RsioConnection, payload: bytes) -> bytes:
    """A string field whose bytes are ``payload`` (valid UTF-8 or not)."""
    if s.config.codec == "varint":
        return _uint(s, len(payload)) + payload
    return bytes((0xA0 | len(payload),)) + payload if len(payload) < 32 else b"\xd9" + bytes((len(payload),)) + payload


def _element(flow: Outflow) -> bytes:
    return bytes(flow.element_size) if flow.element_size else msgpack.packb(0)
