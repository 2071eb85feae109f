"""make test's worker scheduling (tests/conftest.py): every module that uses the shared Spark session is in the
one Spark unit, and every other module is a unit of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SPARK_MODULES, scope_of

TESTS = Path(__file__).resolve().parent


def test_every_module_using_the_shared_spark_session_is_scheduled_with_the_others() -> None:
    uses = re.compile(r"^\s*from pipeline_spark import", re.MULTILINE)
    users = {p.stem for p in TESTS.glob("test_*.py") if uses.search(p.read_text())}
    assert users and users == set(SPARK_MODULES)
    assert {scope_of(f"tests/{name}.py::test_x[a::b]") for name in users} == {"spark"}


def test_any_other_module_is_its_own_unit() -> None:
    assert scope_of("tests/test_websocket.py::test_a[x-y]") == "tests/test_websocket.py"
    assert scope_of("tests/test_websocket.py::TestA::test_b") == "tests/test_websocket.py"


def test_the_longest_units_are_real_units() -> None:
    # A renamed module would silently lose its place at the front.
    from conftest import LONGEST_FIRST

    assert all(unit == "spark" or (TESTS.parent / unit).is_file() for unit in LONGEST_FIRST)


def test_no_property_test_is_timed() -> None:
    from hypothesis import HealthCheck, settings

    current = settings.default
    assert current is not None and current.deadline is None
    assert HealthCheck.too_slow in current.suppress_health_check


def test_spark_tests_get_the_hang_guard_that_never_cuts_a_spark_call(request: pytest.FixtureRequest) -> None:
    # Collected in this session: every test of a Spark module carries SPARK_TEST_TIMEOUT (none sets its own),
    # and a test elsewhere, this one, keeps the ini default (120 s).
    from conftest import SPARK_TEST_TIMEOUT

    spark = [item for item in request.session.items if scope_of(item.nodeid) == "spark"]
    if not spark:
        pytest.skip("no test of a Spark module was collected in this session")
    for item in spark:
        marker = item.get_closest_marker("timeout")
        assert marker is not None and marker.args == (SPARK_TEST_TIMEOUT,), item.nodeid
    assert request.node.get_closest_marker("timeout") is None
