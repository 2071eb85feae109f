"""Receiver limits, checked against every announced length before anything is allocated."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    # One element, whole (variable-size onNext) or one part of a split element.
    max_element: int = 16 * 1024 * 1024
    # Publisher names, goodbye reasons, error texts.
    max_string: int = 64 * 1024
    # Extension lists in hellos.
    max_array: int = 1024
    # onSubscribe.elementSize.
    max_element_size: int = 1024 * 1024
    # A whole frame; bounds onNextPacked (count * elementSize).
    max_frame: int = 64 * 1024 * 1024
    # Fixed-size streams whose elementSize a decoder remembers at once: above the fixed-size
    # subscriptions the receiver opens itself, so passing it is the sender's STR-4 (Decision s).
    max_streams: int = 65536
    # Bytes a subscriber reassembles for one split element (rsio-v0 section 6).
    max_reassembly: int = 64 * 1024 * 1024


DEFAULT_LIMITS = Limits()
