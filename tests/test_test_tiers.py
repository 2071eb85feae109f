"""The two tiers of the kit's own tests: ``make test`` and the slow tier ``make interop`` runs after it.

Tests slow by nature (markers ``hostile`` and ``slow``) may leave ``make test`` only for a tier that CI
runs: these tests hold the Makefile and the CI script to that, so no test falls between the two.  And a
test marked ``no_cover`` runs untraced in the processes it starts too (``tests/conftest.py``).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _make_n(target: str) -> str:
    """What ``make -n target`` prints (the lines it would run; those calling $(MAKE) are dry runs as well)."""
    return subprocess.run(["make", "-n", "--no-print-directory", target, "STAMP=", "PY=python"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True).stdout


def _dry_run(target: str) -> list[list[str]]:
    """The pytest command lines ``make -n target`` would run, split into words."""
    return [shlex.split(line) for line in _make_n(target).splitlines() if " -m pytest " in line]


def _marker_expression(command: list[str]) -> str:
    return command[command.index("-m", command.index("pytest")) + 1]


def test_make_test_runs_everything_but_the_slow_tier_and_make_interop_runs_that_tier() -> None:
    (test,) = _dry_run("test")
    (slow,) = _dry_run("test-slow")
    tier = _marker_expression(slow)
    assert _marker_expression(test) == f"not ({tier})"
    assert set(tier.split(" or ")) == {"hostile", "slow"}
    interop = _make_n("interop")
    assert "make --no-print-directory test-slow" in interop  # and, dry run as well, the tier's own pytest line:
    assert f'-m "{tier}"' in interop
    ci = (ROOT / ".ci" / "run").read_text().split()
    assert ci.index("test") < ci.index("interop") and "make" in ci


def test_every_marker_of_the_tier_is_registered(pytestconfig: pytest.Config) -> None:
    (slow,) = _dry_run("test-slow")
    registered = {line.split(":", 1)[0] for line in pytestconfig.getini("markers")}
    assert set(_marker_expression(slow).split(" or ")) <= registered


@pytest.mark.no_cover
def test_a_no_cover_test_starts_its_children_untraced() -> None:
    # Under `make test` (--cov) coverage's .pth file would start the tracer in this child but for the fixture.
    child = subprocess.run([sys.executable, "-c", "import sys; print('coverage' in sys.modules, sys.gettrace())"],
                           capture_output=True, text=True, timeout=60, check=True)
    assert child.stdout.split() == ["False", "None"]
