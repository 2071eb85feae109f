"""The conformance monitor: judges every frame of a connection, online or offline."""

from .monitor import Finding, Monitor
from .trace import TraceRecord, read_trace, write_trace

__all__ = ["Finding", "Monitor", "TraceRecord", "read_trace", "write_trace"]
