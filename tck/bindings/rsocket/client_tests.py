"""RSocket's client test cases for listen mode (``rsio_tck.listen.cases`` says what a case is).

The binding declares them (``BINDING.client_tests()``); the kit's listen mode and self-check ask it.
"""

from __future__ import annotations

from ...listen.cases import ClientTest

CLIENT_TESTS: tuple[ClientTest, ...] = (
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
