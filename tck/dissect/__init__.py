"""Scapy layers by binding: the kit's captures and mutations reach a wire's layer through here.

Theory of operation.  Each binding owns its scapy layer (RS-IO's is
``rsio_tck.bindings.rsio.dissect``; RSocket's ``rsio_tck.bindings.rsocket.scapy_layer``)
and hands it out through ``binding.scapy_layer()``: an object (a module) with
``bind(port, profile)`` that makes ``rdpcap`` dissect TCP payloads to/from ``port`` as
that wire, plus whatever else the layer offers its binding-aware callers.  This
module only looks the hook up, so neutral code (the reports, ``check-pcap``) needs no
binding import; a binding without a layer is a one-line ``ValueError``.

Layers only build and dissect; nothing here sends or sniffs.
"""

from __future__ import annotations

from typing import Any

from ..binding import Binding, get_binding, profile_of


def scapy_layer(binding: Binding | str) -> Any:
    """The binding's scapy layer; ValueError (one line) if the binding has none."""
    chosen = get_binding(binding) if isinstance(binding, str) else binding
    hook = getattr(chosen, "scapy_layer", None)
    if hook is None:
        raise ValueError(f"binding {chosen.name!r} has no scapy layer")
    return hook()


def bind_layer(binding: Binding | str, port: int, profile: str | None = None) -> None:
    """Let ``rdpcap`` dissect TCP payloads to/from ``port`` as ``binding``'s frames of ``profile``."""
    chosen = get_binding(binding) if isinstance(binding, str) else binding
    layer = scapy_layer(chosen)
    bind = getattr(layer, "bind", None)
    if bind is None:
        raise ValueError(f"binding {chosen.name!r}: its scapy layer has no bind(port, profile)")
    bind(port, profile_of(chosen, profile))


__all__ = ["bind_layer", "scapy_layer"]
