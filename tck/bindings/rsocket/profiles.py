"""RSocket's two wire profiles by name: ``rsocket-1.0`` and ``reactivesocket-draft``.

A module of its own so that the binding, the endpoint, the fuzzer and the scapy
layer reach a profile without importing the package's ``__init__`` (which
imports them back: an import cycle).
"""

from __future__ import annotations

from .codec import Profile

PROFILE_NAMES = ("rsocket-1.0", "reactivesocket-draft")


def get_profile(name: str) -> Profile:
    """The wire profile called ``name``; ValueError names the choices."""
    if name == "rsocket-1.0":
        from .v1 import RSocket10

        return RSocket10()
    if name == "reactivesocket-draft":
        from .draft import ReactiveSocketDraft

        return ReactiveSocketDraft()
    raise ValueError(f"unknown RSocket profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}")
