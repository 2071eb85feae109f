"""Ditto's client test cases for listen mode (``rsio_tck.listen.cases`` says what a case is).

The binding declares them (``BINDING.client_tests()``); the kit's listen mode and self-check ask it.
"""

from __future__ import annotations

from ...listen.cases import ClientTest

# Ditto (search profile): the kit plays Ditto's /ws/2 endpoint (listen mode on ws://HOST:PORT/ws/2, --profile
# search); the serving peer's search collection is eq(attributes/tck,N).  Every case opens with the client's
# search subscribe; the first carries the rules of that opening.  interop/ditto-client runs them all.
CLIENT_TESTS: tuple[ClientTest, ...] = (
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
