"""How ``make test`` spreads the tests over pytest-xdist's workers (``--dist loadgroup``).

Each test module stays on one worker, so a module-scoped fixture (a whole run of the
suite for the Wireshark tests, a built wheel) is made once, not once per worker.  The
modules that share the one Spark session of ``pipeline_spark`` form one group, so a
single JVM starts.  Without xdist these marks do nothing.
"""

from __future__ import annotations

import pytest

SPARK_MODULES = frozenset({"test_pipeline_grid", "test_pipeline_publish", "test_pipeline_realrun",
                           "test_pipeline_tables", "test_pipeline_targets"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        module = item.module.__name__ if item.module is not None else item.nodeid.split("::", 1)[0]
        group = "spark" if module.rsplit(".", 1)[-1] in SPARK_MODULES else module
        item.add_marker(pytest.mark.xdist_group(group))
