"""The client test cases of listen mode: what one is; each binding declares its own.

A client program under test gets ``RSIO_URL`` (where the kit listens) and
``RSIO_TESTCASE`` (a case's name), performs the test case with its own API, prints
one line per signal it received, and exits 0 when the test case went as expected,
1 when not, and 127 for a test case it does not support (as in
quic-interop-runner).  The kit judges every frame the client sends against the
rules each case cites, and against every other rule of the binding that the
client's frames touch.  ``interop/testcases.json`` is the same list for the
interop fixture programs; a test holds the two together.  Each binding declares its
cases in its own package (``Binding.client_tests``: ``rsio_tck.bindings.rsio.client_tests``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientTest:
    name: str
    binding: str
    description: str
    rules: tuple[str, ...]  # rule IDs of the catalogue the case exercises on the client's side
    peer_options: tuple[str, ...] = ()  # options for the kit's serving peer (e.g. a small MTU)


def client_tests(binding: str, names: list[str] | None = None) -> list[ClientTest]:
    """The binding's client test cases (``Binding.client_tests``; only ``names``, in that order, when given);
    ValueError for an unknown name."""
    from ..binding import get_binding

    mine = {case.name: case for case in get_binding(binding).client_tests()}
    if not names:
        return list(mine.values())
    unknown = [name for name in names if name not in mine]
    if unknown:
        raise ValueError(f"unknown client test case {unknown[0]!r} for binding {binding}; "
                         f"choose from {', '.join(mine)}")
    return [mine[name] for name in names]


def result_id(binding: str, case: str) -> str:
    """The id of a client test case's result: ``CLIENT-rsocket-channel-echo``."""
    return f"CLIENT-{binding}-{case}"


def case_of_result(binding: str, result: str) -> str | None:
    """The client test case a listen-mode result is of (``CLIENT-rsocket-channel-echo``: ``channel-echo``)."""
    prefix = result_id(binding, "")
    return result.removeprefix(prefix) if result.startswith(prefix) else None
