"""Wire bindings other than RS-IO live here, one subpackage each (``rsocket`` today).

A binding carries the one Reactive Streams contract over its own wire.  For now
each subpackage is a self-contained, sans-IO wire layer (frames, codecs per wire
profile, rule IDs); the binding seam that lets the monitor, the scenario engine
and the reference peer take a binding as a parameter comes in a later change
(issue 14), and nothing outside this package imports it yet.
"""
