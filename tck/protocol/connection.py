"""A sans-IO connection for either role, on any binding: bytes in, events out.

Theory of operation (after wsproto's ``WSConnection``): ``Connection`` is a thin
shell.  It asks the binding (``rsio_tck.binding.get_binding``) for an *endpoint*
(``binding.endpoint(role, profile, limits, **options)``) and delegates to it; all
protocol knowledge (the handshake, the close, the stream table, reassembly, what
to ignore) lives in the binding's endpoint, judged by the same ``ConnectionJudge``
model the monitor uses.  The I/O layer hands received bytes to ``receive_data``
and gets events back (the binding's frames, and the events of ``events.py``); it
calls ``send`` with frames and writes whatever ``data_to_send`` returns.  No
sockets, no clocks.

``Connection(role, "varint", limits, strict_peer=..., tolerate=...)`` is RS-IO's
call as it always was: the second argument is the wire profile (for RS-IO, the
codec), the binding defaults to RS-IO, and keyword options go to the endpoint.
Whatever else an endpoint offers (RS-IO's ``outstanding``, ``send_elements``,
``model`` ...) is reached through the shell unchanged, for binding-aware callers.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..binding import DEFAULT_BINDING, Binding, get_binding, profile_of
from ..errors import ProtocolViolation, Side
from .events import ConnectionState, Event


class Endpoint(Protocol):
    """What ``binding.endpoint(...)`` returns (the seam: ``Binding.endpoint`` in ``tck/binding.py``; docs/bindings/adding.md)."""

    state: ConnectionState
    error: ProtocolViolation | None

    def send(self, frame: Any, *, check: bool = True) -> None: ...

    def send_raw(self, data: bytes) -> None: ...

    def data_to_send(self) -> bytes: ...

    def receive_data(self, data: bytes) -> list[Event]: ...

    def receive_eof(self) -> list[Event]: ...


class Connection:
    def __init__(
        self,
        role: Side,
        profile: str | None = None,
        limits: Any = None,
        *,
        binding: str | Binding = DEFAULT_BINDING,
        **options: Any,
    ) -> None:
        chosen = get_binding(binding) if isinstance(binding, str) else binding
        self.binding = chosen
        self.profile = profile_of(chosen, profile)
        self.role = role
        self.endpoint: Endpoint = chosen.endpoint(role, self.profile, limits, **options)

    # The neutral interface, delegated explicitly (the hot paths: no __getattr__ lookup).

    def send(self, frame: Any, *, check: bool = True) -> None:
        """Queue ``frame``.  ``check=False`` sends even what breaks a rule (faults)."""
        self.endpoint.send(frame, check=check)

    def send_raw(self, data: bytes) -> None:
        """Queue bytes that bypass codec and model: for malformed-input faults and tests."""
        self.endpoint.send_raw(data)

    def data_to_send(self) -> bytes:
        return self.endpoint.data_to_send()

    def receive_data(self, data: bytes) -> list[Event]:
        return self.endpoint.receive_data(data)

    def receive_eof(self) -> list[Event]:
        return self.endpoint.receive_eof()

    @property
    def state(self) -> ConnectionState:
        return self.endpoint.state

    @state.setter
    def state(self, value: ConnectionState) -> None:  # a fault forcing the state (reference peer)
        self.endpoint.state = value

    @property
    def error(self) -> ProtocolViolation | None:
        return self.endpoint.error

    def __getattr__(self, name: str) -> Any:
        # Only reached for what the shell does not define: the binding's own extras.
        if name in _OWN:
            raise AttributeError(name)
        return getattr(self.endpoint, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # Faults replace parts of the endpoint (RS-IO's assembler, the state) through the shell.
        if name in _OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self.endpoint, name, value)


_OWN = frozenset({"binding", "profile", "role", "endpoint"})
