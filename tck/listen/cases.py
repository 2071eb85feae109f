"""The client test cases of listen mode, per binding.

A client program under test gets ``RSIO_URL`` (where the kit listens) and
``RSIO_TESTCASE`` (a name below), performs the test case with its own API, prints
one line per signal it received, and exits 0 when the test case went as expected,
1 when not, and 127 for a test case it does not support (as in
quic-interop-runner).  The kit judges every frame the client sends against the
rules each case cites, and against every other rule of the binding that the
client's frames touch.  ``interop/testcases.json`` is the same list for the
interop fixture programs; a test holds the two together.
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


_RSIO = (
    ClientTest(name="stream-range", binding="rsio",
               description="subscribe tck/range?count=10 with initialDemand 3, then request 3 each time 3 elements "
                           "have arrived; print the 10 elements and the completion",
               rules=("HS-1", "ID-1", "DEM-6", "STR-4", "BYE-2")),
    ClientTest(name="cancel-infinite", binding="rsio",
               description="subscribe tck/infinite with initialDemand 5, cancel after the fifth element, print them, "
                           "then say goodbye",
               rules=("STR-6", "STR-7", "DEM-6", "BYE-1")),
    ClientTest(name="large-split", binding="rsio",
               description="subscribe tck/large?size=100000&count=3 with initialDemand 3; the kit's server splits each "
                           "element; check each element's length and byte pattern",
               rules=("SPLIT-1", "SPLIT-3", "DEM-6")),
    ClientTest(name="error", binding="rsio",
               description="subscribe tck/error?after=2 with initialDemand 10; print the 2 elements and the error",
               rules=("STR-3", "STR-7", "DEM-6")),
)

_RSOCKET = (
    ClientTest(name="stream-range", binding="rsocket",
               description="request-stream tck/range?count=10 with initial request N=3, then request(3) each time 3 "
                           "elements have arrived; print the 10 elements and the completion",
               # Every case opens with the client's SETUP (and may keep the connection alive); this
               # one carries the rules of that opening, so a client that breaks them fails a case citing them.
               rules=("RS-SETUP-1", "RS-STREAMID-1", "RS-STREAMID-2", "RS-FLOW-1", "RS-SETUP-2", "RS-SETUP-4",
                      "RS-SETUP-5", "RS-SETUP-7", "RS-KEEPALIVE-4")),
    ClientTest(name="request-response", binding="rsocket",
               description="request-response tck/range?start=7&count=1; print the one element and exit",
               rules=("RS-SETUP-1", "RS-STREAMID-1", "RS-STREAMID-2", "RS-STREAM-4")),
    ClientTest(name="fnf", binding="rsocket",
               description="fire-and-forget tck/fnf?key=interop three times, then request-response "
                           "tck/fnf-count?key=interop until it answers 3, at most 10 times 0.2 s apart (a "
                           "responder may count asynchronously); print the last count (3)",
               rules=("RS-STREAMID-2", "RS-STREAMID-3")),
    ClientTest(name="channel-echo", binding="rsocket",
               description="request-channel whose first payload is tck/echo, then a, b, c and completion of the "
                           "outbound side; print the echoed a, b, c and the completion",
               rules=("RS-CHANNEL-1", "RS-CHANNEL-2", "RS-FLOW-1")),
    ClientTest(name="cancel-infinite", binding="rsocket",
               description="request-stream tck/infinite, take the first 5 elements (take/limit or an explicit "
                           "cancel), print them",
               rules=("RS-FLOW-1", "RS-STREAM-3")),
    ClientTest(name="large-fragmented", binding="rsocket",
               description="request-stream tck/large?size=100000&count=3 with N=3; the kit sends each element as "
                           "fragments; check each element's length and byte pattern",
               rules=("RS-FRAG-1", "RS-FLOW-1"), peer_options=("--mtu", "16384")),
    ClientTest(name="error", binding="rsocket",
               description="request-stream tck/error?after=2 with N=10; print the 2 elements and the error",
               rules=("RS-STREAM-3", "RS-ERROR-2")),
    ClientTest(name="keepalive", binding="rsocket",
               description="SETUP with a keepalive interval of 200 ms and a max lifetime of 2 s; stay idle for "
                           "2.5 s, then request-response tck/range?start=7&count=1; print the element",
               rules=("RS-KEEPALIVE-2", "RS-KEEPALIVE-4", "RS-KEEPALIVE-1")),
    ClientTest(name="metadata-push", binding="rsocket",
               description="metadata-push of the bytes 'tck', then request-response tck/range?count=1 to show the "
                           "connection is still up",
               rules=("RS-PUSH-1", "RS-FRAME-9")),
)

# Ditto (search profile): the kit plays Ditto's /ws/2 endpoint (listen mode on ws://HOST:PORT/ws/2, --profile
# search); the serving peer's search collection is eq(attributes/tck,N).  Every case opens with the client's
# search subscribe; the first carries the rules of that opening.  interop/ditto-client runs them all.
_DITTO = (
    ClientTest(name="search-pages", binding="ditto",
               description="search subscribe eq(attributes/tck,10) with size(3); request 1 page at a time; print "
                           "each page's thing ids (3, 3, 3, 1) and the completion",
               rules=("DITTO-SUB-7", "DITTO-DEM-3", "DITTO-SUB-8", "DITTO-SEARCH-1", "DITTO-SEARCH-2",
                      "DITTO-ENV-1", "DITTO-ENV-3", "DITTO-HDR-2", "DITTO-WS-1")),
    ClientTest(name="search-all", binding="ditto",
               description="search subscribe eq(attributes/tck,12) with size(5); one request for every page "
                           "(Long.MAX_VALUE); print the pages (5, 5, 2) and the completion",
               rules=("DITTO-DEM-3", "DITTO-SUB-7", "DITTO-SEARCH-2")),
    ClientTest(name="search-stream", binding="ditto",
               description="the client's own stream of things for eq(attributes/tck,7) with size(2) (its default "
                           "demand: 2 pages ahead, then 1 each); print the 7 thing ids",
               rules=("DITTO-SUB-7", "DITTO-SUB-8", "DITTO-DEM-3")),
    ClientTest(name="search-cancel", binding="ditto",
               description="search subscribe eq(attributes/tck,100) with size(5); request 1 page at a time, cancel "
                           "after the second; print the 10 thing ids",
               rules=("DITTO-SUB-8", "DITTO-SUB-7", "DITTO-SEARCH-3")),
    ClientTest(name="search-empty", binding="ditto",
               description="search subscribe eq(attributes/tck,0); request 1 page; print the completion "
                           "(no page)",
               rules=("DITTO-SUB-8", "DITTO-SUB-7", "DITTO-DEM-3")),
    ClientTest(name="search-failed", binding="ditto",
               description="search subscribe eq(attributes/tck,3) with size(0), which the endpoint rejects; request "
                           "1 page; print the error (failed after the first request)",
               rules=("DITTO-SUB-8", "DITTO-SUB-7")),
)

CLIENT_TESTS: tuple[ClientTest, ...] = _RSIO + _RSOCKET + _DITTO


def client_tests(binding: str, names: list[str] | None = None) -> list[ClientTest]:
    """The binding's client test cases (only ``names``, in that order, when given); ValueError for an unknown name."""
    mine = {case.name: case for case in CLIENT_TESTS if case.binding == binding}
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
