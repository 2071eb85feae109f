"""The wheel: one import name (rsio_tck), the suite and SPEC.md inside, and no Spark without the extra.

The wheel is built from a copy of the source tree (so the checkout gets no build/ or egg-info),
without build isolation when the installed setuptools can build wheels itself (``wheel`` is in
the dev extra), so no network is needed.  Installing it into a fresh virtual environment needs the package index and takes minutes;
that was done by hand (see docs/install.md) and is not repeated here.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Building takes about 15 s offline (with wheel, from the dev extra), 30 s when pip must isolate the build.
pytestmark = pytest.mark.timeout(60)


def _can_build_offline() -> bool:
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return importlib.util.find_spec("wheel") is not None or (major, minor) >= (70, 1)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "SPEC.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("tck", "reference_peer", "scenarios", "docs"):
        shutil.copytree(ROOT / name, source / name, symlinks=True, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    isolation = ["--no-build-isolation"] if _can_build_offline() else []
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation, "-w", str(out),
                            str(source)], capture_output=True, text=True, timeout=180)
    assert built.returncode == 0, built.stdout + built.stderr
    (path,) = out.glob("rsio_tck-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_installs_only_rsio_tck_with_the_suite_and_spec(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert {name.split("/")[0] for name in names} == {"rsio_tck", next(n for n in names if ".dist-info/" in n)
                                                     .split("/")[0]}
    for expected in ("rsio_tck/SPEC.md", "rsio_tck/rsio-v0.md", "rsio_tck/cli.py", "rsio_tck/gate.py",
                     *(f"rsio_tck/bindings/{b}/capabilities.schema.json" for b in ("rsio", "rsocket", "ditto")),
                     "rsio_tck/report/schemas/run.schema.json",
                     "rsio_tck/scenarios/schema.json", "rsio_tck/reference_peer/rsio/capabilities.json",
                     "rsio_tck/findings/templates/bug-report.md.j2"):
        assert expected in names, expected
    suite = sorted(n for n in names if n.startswith("rsio_tck/suite/") and n.endswith(".yaml"))
    assert suite == sorted(f"rsio_tck/suite/{p.name}" for p in (ROOT / "scenarios").glob("*.yaml"))
    assert wheel.read("rsio_tck/SPEC.md") == (ROOT / "SPEC.md").read_bytes()  # the file, not a symlink


def test_the_wheel_needs_no_spark_without_the_pipeline_extra(wheel: zipfile.ZipFile) -> None:
    metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    plain = [r for r in requires if "extra ==" not in r]
    assert plain and not any(r.startswith(("pyspark", "pyarrow", "pandas")) for r in plain), plain
    assert any(r.startswith("pyspark") and 'extra == "pipeline"' in r for r in requires), requires
    entry_points = wheel.read(next(n for n in wheel.namelist() if n.endswith("entry_points.txt"))).decode()
    assert "rsio-tck = rsio_tck.cli:main" in entry_points and "rsio = rsio_tck.pytest_plugin" in entry_points


def test_every_package_directory_is_listed_in_pyproject() -> None:
    """pyproject.toml lists packages by hand (the folders are mapped onto rsio_tck): a new one must be added."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    roots = {"tck": "rsio_tck", "reference_peer": "rsio_tck.reference_peer", "scenarios": "rsio_tck.suite"}
    found = set()
    for folder, name in roots.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *parts)))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
