"""rsio-tck: a conformance test kit for Reactive Streams carried over the network (RS-IO, RSocket, Eclipse Ditto).

Theory of operation.  One contract (subscribe / request / cancel, onSubscribe / onNext /
onComplete / onError, bounded demand, nothing after a terminal signal) is carried by several
wires, the *bindings* (``bindings``), each reached only through the seam of ``binding``.  The
kit judges every frame either side sends, in layers, bottom up:

- transports (``transport``, ``websocket``) move bytes; nothing above them does I/O;
- a binding's codec decodes the bytes into frames, and its judge applies each frame to the
  binding's model of the connection (over the neutral contract of ``semantics``), raising
  ``errors.ProtocolViolation(rule, side)`` with a rule of the catalogue (``catalogue``);
- the monitor (``monitor``) runs decoder and judge for both directions of one connection,
  online or over a recorded trace, and keeps the findings; ``protocol.Connection`` is the same
  judge behind a sans-IO endpoint, for code that speaks rather than watches;
- the modes drive connections and feed the monitor: YAML scenarios against a target
  (``scenarios``), the kit as server to a client under test (``listen``), the kit between two
  real parties (``proxy``), and property-based search (``fuzz``);
- what came out is written and read back as a run directory and its reports (``report``),
  bug reports (``findings``), and tables over many runs (``pipeline``).

The reference peer (``rsio_tck.reference_peer``) is a conforming implementation of every
binding with switchable faults: the default target, and the kit's own test of itself.
See docs/architecture.md for the path of one frame from socket to verdict.
"""

__version__ = "0.1.0"
SPEC_VERSION = "rsio-v0/1"
