"""How ``make test`` spreads the tests over pytest-xdist's workers.

Each test module stays on one worker, so a module-scoped fixture (a whole run of the
suite for the Wireshark tests, a built wheel) is made once, not once per worker.  The
modules that share the one Spark session and published corpus of ``pipeline_spark``
go to one worker together, so a single JVM starts and the corpus is published once.

Workers take the units longest first (``LONGEST_FIRST``, from ``--durations`` beside two
busy loops): a long module started last would otherwise run on alone at the end.

This is a scheduler of its own (xdist's ``pytest_xdist_make_scheduler`` hook) rather
than ``--dist loadgroup`` with ``xdist_group`` marks: on pytest 9.2 loadgroup silently
stops grouping (pytest-xdist issue 1386).  Without xdist the hook is never called.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# No per-example deadline: hypothesis's 200 ms default is a timing assertion, and beside two busy loops and three
# other workers examples took 275 ms and failed correct code.  Speed goals live in `make bench`, not in tests.
# Likewise the health check that times data generation.
settings.register_profile("rsio-tck", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("rsio-tck")

SPARK_MODULES = frozenset({"test_interrupted_run", "test_pipeline_cluster", "test_pipeline_faults", "test_pipeline_grid",
                           "test_pipeline_publish", "test_pipeline_realrun", "test_pipeline_tables",
                           "test_pipeline_targets", "test_site_browser"})
# pytest-timeout's bound for a test of the Spark modules without one of its own.  It is a hang guard, not a
# speed check, and it must never fire in the middle of a Spark call: the timeout interrupts py4j while it
# reads an answer, the shared session's connection is left out of step, and every later test of the worker
# fails on garbage ("SparkSession does not exist in the JVM", "'m'").  In a loaded run (two busy loops, four
# workers, more beside) the first test that started the JVM and ran a job took over 120 s, and 15 tests failed
# after it.  The modules take about 350 s together under that load; no single test comes near 900 s.
SPARK_TEST_TIMEOUT = 900


# Units by their measured time, longest first (seconds beside two busy loops, four workers); the rest follow
# in collection order.  A stale list only costs wall time, never a test.
LONGEST_FIRST = ("spark",  # about 350 s, and 250-300 s more (load average 8) since test_pipeline_cluster joined it
                 "tests/test_kit_violations.py",  # 532 s alone, load average 12 (every binding against each --ids)
                 "tests/test_wireshark_rsocket.py",  # 404 s
                 "tests/test_websocket_pcap.py",  # 398 s
                 "tests/test_wireshark.py",  # 328 s
                 "tests/test_pytest_plugin.py",  # 299 s
                 "tests/test_selfcheck.py",  # 227 s
                 "tests/test_flood.py",  # 150 s
                 "tests/test_peer_ditto_selfcheck.py",  # 130 s
                 "tests/test_ditto_scenarios.py")  # 97 s


def scope_of(nodeid: str) -> str:
    """The unit a worker takes whole: the test's module, or "spark" for the modules sharing a Spark session."""
    module = nodeid.split("::", 1)[0]
    return "spark" if PurePosixPath(module).stem in SPARK_MODULES else module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest units first; a stable sort, so each module's own tests keep their order."""
    rank = {scope: position for position, scope in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(scope_of(item.nodeid), len(rank)))
    for item in items:
        if scope_of(item.nodeid) == "spark" and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SPARK_TEST_TIMEOUT))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return ModuleScheduling(config, log)
