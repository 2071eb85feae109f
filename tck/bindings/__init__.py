"""The wire bindings, one subpackage each: ``rsio`` (RS-IO), ``rsocket`` (RSocket), ``ditto`` (Eclipse Ditto).

Theory of operation.  A binding carries the one Reactive Streams contract over its own wire,
and everything that knows that wire lives in its subpackage: the frames and codecs of each
wire profile, the judge (the binding's model of a connection, fed every decoded frame of
either side, mapping frames onto the contract's signals), the sans-IO endpoint, the scenario
adapter, the fuzz programs, and the view of its rules in the catalogue (``rsio_tck.catalogue``).
Each subpackage exposes ``BINDING``, an object that meets the ``Binding`` protocol of
``rsio_tck.binding``; the rest of the kit obtains it through ``get_binding(name)`` and calls
only what that protocol declares, so no neutral module imports a binding
(``tests/test_binding_seam.py`` walks the imports and holds them to that).  The reference
peer's side of each binding lives under ``reference_peer/``.
"""
