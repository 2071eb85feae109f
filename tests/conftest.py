"""How ``make test`` spreads the tests over pytest-xdist's workers.

Each test module stays on one worker, so a module-scoped fixture (a whole run of the
suite for the Wireshark tests, a built wheel) is made once, not once per worker.  The
modules that share the one Spark session and published corpus of ``pipeline_spark``
go to one worker together, so a single JVM starts and the corpus is published once.
The modules of ``BY_TEST`` share nothing costly between their tests (each starts its own
peer or target), so each of their tests is a unit of its own: a module of long tests
(the hostile targets' bounded runs, the self-checks) no longer runs on one worker alone.

Coverage's tracer (``make test``'s ``--cov``: coverage.py's CTracer through ``sys.settrace``, the only
tracer Python 3.11 has) more than doubles the CPU of a test that replays whole suites or hypothesis's
hundreds of examples.  Line coverage is the union of the lines run, so such a test, whose lines other tests
run too, is marked ``no_cover`` (pytest-cov's marker): it runs and asserts as before, with the tracer paused
in its worker (pytest-cov) and not started in the children it starts (here).  Leaving it out can only lower
the figure ``make test`` prints, never raise it, and docs/benchmarks.md has the comparison with everything
traced.

Workers take the units longest first (``LONGEST_FIRST``, from ``--durations`` beside two
busy loops): a long module started last would otherwise run on alone at the end.

This is a scheduler of its own (xdist's ``pytest_xdist_make_scheduler`` hook) rather
than ``--dist loadgroup`` with ``xdist_group`` marks: on pytest 9.2 loadgroup silently
stops grouping (pytest-xdist issue 1386).  Without xdist the hook is never called.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
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


# Modules whose tests share no module- or session-scoped state worth keeping on one worker: each test is a unit.
# (test_pytest_plugin's module-scoped embedded peer is a child process that starts in about a second; its tests
# take 40-90 s each.)  A module that gains a costly module-scoped fixture leaves this list.
BY_TEST = frozenset({"test_hostile_rsio", "test_hostile_ditto", "test_hostile_listen", "test_hostile_rsocket",
                     "test_hostile_proxy", "test_hostile_fuzz", "test_hostile_peer", "test_websocket_pcap",
                     "test_pytest_plugin", "test_selfcheck", "test_peer_ditto_selfcheck", "test_kit_violations",
                     "test_flood", "test_listen", "test_fuzz_live", "test_rsocket_fuzz_live"})
# Not test_ditto_scenarios: its count of scenarios run is taken from the suite test before it, on the same worker.

# Modules by the time of their longest unit, longest first (seconds from `--durations` of a whole run at load
# average 10-15, about three times a quiet machine's; a module of BY_TEST by its longest test); the rest follow in
# collection order.  A stale list only costs wall time, never a test.
LONGEST_FIRST = ("spark",  # about 900 s together (test_pipeline_cluster 160 s, test_site_browser's setup 128 s)
                 "tests/test_wireshark_rsocket.py",  # 340 s, one unit (a module-scoped full run per profile)
                 "tests/test_websocket_pcap.py",  # its full Ditto runs are in the slow tier; 15 s a test without them
                 "tests/test_selfcheck.py",  # 230 s (every RS-IO fault against the suite)
                 "tests/test_wireshark.py",  # 170 s, one unit (a module-scoped full run per codec)
                 "tests/test_peer_ditto_selfcheck.py",  # 160 s
                 "tests/test_hostile_ditto.py",  # 143 s
                 "tests/test_hostile_listen.py",  # 142 s
                 "tests/test_rsocket_runs.py",  # 135 s
                 "tests/test_rsocket_endpoint_owner.py",  # 108 s (hypothesis)
                 "tests/test_hostile_rsio.py",  # 98 s
                 *(f"tests/{p.parent.name}/{p.name}" for p in Path(__file__).parent.glob("*_binding/test_*.py")),
                 # ^ the fourth binding's tests (97 s + 49 s, one unit), found by their folder: no file outside it names it
                 "tests/test_flood.py",  # 94 s
                 "tests/test_hostile_rsocket.py",  # 92 s
                 "tests/test_pytest_plugin.py",  # 91 s
                 "tests/test_hostile_peer.py",  # 77 s
                 "tests/test_interop_ditto_client.py",  # 73 s
                 "tests/test_fuzz_machinery.py",  # 72 s
                 "tests/test_hostile_fuzz.py",  # 64 s
                 "tests/test_hostile_proxy.py",  # 64 s
                 "tests/test_docs_examples.py",  # 57 s
                 "tests/test_ditto_scenarios.py",  # 51 s
                 "tests/test_rsocket_fuzz_live.py",  # 48 s
                 "tests/test_kit_violations.py")  # 15-44 s a test (the id-choice matrix but random: slow tier)


@pytest.fixture(autouse=True)
def _children_untraced_under_no_cover(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-cov's ``no_cover`` pauses the tracer in the worker only: the reference peers, kits and command
    lines a test starts would still be traced, through the environment coverage's ``patch = subprocess``
    leaves for them (its .pth file starts coverage in any Python that finds these variables)."""
    if request.node.get_closest_marker("no_cover") is not None:
        for variable in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START"):
            monkeypatch.delenv(variable, raising=False)


def module_of(nodeid: str) -> str:
    """The test's module, or "spark" for the modules sharing a Spark session."""
    module = nodeid.split("::", 1)[0]
    return "spark" if PurePosixPath(module).stem in SPARK_MODULES else module


def scope_of(nodeid: str) -> str:
    """The unit a worker takes whole: the test itself for the modules of ``BY_TEST``, else ``module_of``."""
    return nodeid if PurePosixPath(nodeid.split("::", 1)[0]).stem in BY_TEST else module_of(nodeid)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first; a stable sort, so each module's own tests keep their order."""
    rank = {scope: position for position, scope in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(module_of(item.nodeid), len(rank)))
    for item in items:
        if scope_of(item.nodeid) == "spark" and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SPARK_TEST_TIMEOUT))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    # LoadScopeScheduling by default hands out the units with the most tests first (--loadscope-reorder), which
    # put the long one-test units (a whole run against a hostile target) last, behind hundreds of quick ones.
    config.option.loadscopereorder = False

    class ModuleScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _reschedule(self, node: Any) -> None:
            # xdist gives a worker another unit while it has up to two tests pending, so with one-test units a
            # worker held three long tests while another went idle at the end.  Here: the running test and the
            # next only (a worker needs its next test to finish the one it runs).
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) < 2:
                self._assign_work_unit(node)

    return ModuleScheduling(config, log)
