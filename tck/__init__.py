"""rsio-tck: the conformance test kit for Reactive Streams IO (RS-IO)."""

__version__ = "0.1.0"
SPEC_VERSION = "rsio-v0/1"
