"""ndjson: a fourth wire binding, defined outside the kit, that proves the seam is complete.

Theory of operation.  The kit finds a binding by name in one registry (``rsio_tck.binding``);
this one is registered from outside, by the environment (``RSIO_TCK_BINDINGS=ndjson=ndjson_binding``,
with this folder's parent on ``PYTHONPATH``), so nothing of the kit names it.  The wire is
newline-delimited JSON: one object per line, ``{"op": ..., "id": ...}``, carrying the contract's
signals (``wire``).  The subscriber sends ``subscribe`` (with its initial demand), ``request`` and
``cancel``; the publisher sends ``next``, ``complete`` and ``error``.  onSubscribe has no line of its
own: a subscribe opens its subscription (``adapter``).  The package gives the kit everything
``rsio_tck.binding.Binding`` declares (``binding``): the codec and the judge (``wire``), the scenario
adapter (``adapter``), its own rule catalogue and the SPEC text that states it (``rules``,
``SPEC.md``), its capabilities format (``capabilities.schema.json``), and where its reference peer
lives (``peer``: a small server with four deliberate faults).  ``docs/guide/adding-a-binding.md``
walks through it.
"""

from __future__ import annotations

from .binding import BINDING

__all__ = ["BINDING"]
