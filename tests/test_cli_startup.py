"""The command line starts without the fuzz engine, which only ``rsio-tck fuzz`` needs."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_the_cli_imports_neither_hypothesis_nor_the_fuzz_engine() -> None:
    probe = ("import sys, rsio_tck.cli; "
             "print(sorted(m for m in ('hypothesis', 'rsio_tck.fuzz.engine', 'rsio_tck.fuzz.findings') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_fuzz_package_still_gives_its_names_and_refuses_others() -> None:
    import rsio_tck.fuzz as package
    from rsio_tck.fuzz.engine import FuzzConfig, fuzz
    from rsio_tck.fuzz.findings import write_findings

    assert (package.FuzzConfig, package.fuzz, package.write_findings) == (FuzzConfig, fuzz, write_findings)
    assert all(getattr(package, name) is not None for name in package.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        package.nothing  # noqa: B018
