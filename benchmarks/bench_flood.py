"""Peak RSS and wall time of ``rsio-tck run`` (the whole default suite, default --jobs) under flood.

The flooding target (``tests/flood_target.py --mode whole``) answers the
handshake, then writes valid onNext frames for Id 1 as fast as the socket takes
them (issue 15: before the caps, 4.6 GB and no end).  The baseline, measured in
the same run, is the same command against the correct reference peer: the
figure is the kit's peak RSS under flood as a ratio of its peak RSS on a
correct target.  Only the kit's own process is counted (its pcap worker is
shown apart); the targets run in their own processes.  Goal: under 60 s and
under 200 MB.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from rsio_tck.embedded import EmbeddedPeer

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 180.0  # seconds a measured run may take before it is killed
MB = 1024 * 1024


def flood_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("flood_target", ROOT / "tests" / "flood_target.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["flood_target"] = module
    spec.loader.exec_module(module)
    return module


def kit_run(url: str, report_dir: Path) -> list[str]:
    return [sys.executable, "-m", "rsio_tck.cli", "run", "--target", url, "--report-dir", str(report_dir), "--quiet"]


def main() -> dict[str, float]:
    flood = flood_module()
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="rsio-bench-flood-") as tmp:
        with EmbeddedPeer() as url:
            base = flood.measure(kit_run(url, Path(tmp) / "base"), LIMIT)
        with flood.FloodTarget("whole", max_seconds=LIMIT + 30) as url:
            hit = flood.measure(kit_run(url, Path(tmp) / "flood"), LIMIT)
    for name, measured in (("reference peer", base), ("flooding target", hit)):
        ended = f"exit {measured.returncode}" if measured.returncode is not None else f"KILLED after {LIMIT:g} s"
        print(f"  {name:16s} {measured.wall:6.1f} s, peak RSS {measured.peak_rss / MB:6.1f} MB "
              f"(with its pcap worker {measured.peak_tree_rss / MB:6.1f} MB), {ended}")
    figures = {"base_seconds": base.wall, "base_peak_mb": base.peak_rss / MB,
               "flood_seconds": hit.wall, "flood_peak_mb": hit.peak_rss / MB}
    print(f"  under flood: peak RSS {hit.peak_rss / MB:.1f} MB = {hit.peak_rss / max(base.peak_rss, 1):.2f}x the "
          f"reference-peer run's; wall {hit.wall:.1f} s = {hit.wall / max(base.wall, 1e-9):.2f}x "
          "(goal: under 60 s and 200 MB)")
    return figures


if __name__ == "__main__":
    main()
