"""A small real run directory for the report tests: a few scenarios against the embedded peer.

The peer runs with the ``dem-beyond-demand`` fault, so the run holds passes
(HS-001, DEM-003), failures of DEM-1 (DEM-001, DEM-002) and a skip (SPLIT-002:
the capabilities leave out ``tck/large``).  Pcaps are written inline.
"""

from __future__ import annotations

import asyncio
import atexit
import shutil
import tempfile
import time
from functools import cache
from pathlib import Path

from rsio_tck.capabilities import Capabilities
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.report import RunRecorder, build
from rsio_tck.scenarios import RunConfig, load_directory, run_suite

CHOSEN = ("HS-001", "DEM-001", "DEM-002", "DEM-003", "SPLIT-002")
RUN_ID = "20261123T000000000Z"


def make_run(parent: Path, fault: str = "dem-beyond-demand") -> Path:
    scenarios = [s for s in load_directory(None) if s.id in CHOSEN]
    everything = Capabilities.everything()
    caps = Capabilities(tokens=everything.tokens - {"tck/large"}, implementation="reference peer (faulty)")
    run_dir = parent / RUN_ID
    with EmbeddedPeer(faults=[fault] if fault else []) as url:
        recorder = RunRecorder(run_dir, target=url, codec="msgpack", started=time.time(), capabilities=caps,
                               pcap_workers=0)
        config = RunConfig(target=url, capabilities=caps, keep_trace=True)
        asyncio.run(run_suite(scenarios, config, jobs=4, on_result=recorder.add))
    recorder.finish(time.time(), len(scenarios))
    build(run_dir)
    return run_dir


@cache
def shared_run() -> Path:
    """One run for every report test module of this process (tests that change it work on a copy)."""
    parent = Path(tempfile.mkdtemp(prefix="rsio-report-test-"))
    atexit.register(shutil.rmtree, parent, True)
    return make_run(parent)
