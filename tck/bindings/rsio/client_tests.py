"""RS-IO's client test cases for listen mode (``rsio_tck.listen.cases`` says what a case is).

The binding declares them (``BINDING.client_tests()``); the kit's listen mode and self-check ask it.
"""

from __future__ import annotations

from ...listen.cases import ClientTest

CLIENT_TESTS: tuple[ClientTest, ...] = (
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
