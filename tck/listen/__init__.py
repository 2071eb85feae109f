"""Listen mode: the kit as the server, judging real clients.

The kit listens; for each client test case it starts the client under test with
``RSIO_URL`` and ``RSIO_TESTCASE`` in its environment, serves it with the
binding's conforming reference peer behind the proxy relay, and judges every frame
the client sends with the binding's monitor.  ``cases`` says what a client test
case is (each binding declares its own); ``runner`` runs them.
"""

from .cases import ClientTest, client_tests
from .runner import run_client_tests

__all__ = ["ClientTest", "client_tests", "run_client_tests"]
