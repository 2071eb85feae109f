"""A child run to its end: output read with its tail kept, killed as a group at the time-out, never a hang.

The case that hung ``make interop`` on a loaded machine: a client that prints without pause (rsocket-py logs
a line per frame of a flood) and outlives the case's time-out.  With ``communicate()`` cancelled by the
time-out, nobody read its output any more, and Python 3.11's ``Process.wait()`` never returned.
"""

from __future__ import annotations

import asyncio
import os
import select
import sys

import pytest

from rsio_tck.child_process import REAP_TIMEOUT, run_to_end

pytestmark = pytest.mark.timeout(120)

# Prints numbered lines without pause (at most 10^8: the loop ends by itself), never exiting by itself first.
CHATTER = "import sys\nfor i in range(10**8):\n    sys.stdout.write(f'line {i}\\n')\n"
# Starts a grandchild that holds the output and lives on, prints its pid, and exits 0.
LEAVES_A_CHILD = ("import subprocess, sys\n"
                  "p = subprocess.Popen([sys.executable, '-c', 'import select; select.select([], [], [], 600)'])\n"
                  "print(p.pid, flush=True)\n")


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` has ended (or ends within ``seconds``): its pidfd becomes readable then.  A
    killed process closes its files before it is gone, so its output's end comes a moment before that."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], seconds)[0])
    finally:
        os.close(pidfd)


def test_a_child_that_prints_without_pause_past_its_time_out_is_killed_and_its_tail_kept() -> None:
    finished = asyncio.run(run_to_end([sys.executable, "-c", CHATTER], os.environ, timeout=1.0, keep=300))
    assert finished.code is None  # killed at the time-out
    assert not finished.output_left_open
    assert 0 < len(finished.output) <= 300
    assert finished.output.rstrip(b"\n").split(b"\n")[-1].startswith(b"line ")


def test_a_child_that_exits_gives_its_code_and_output() -> None:
    finished = asyncio.run(run_to_end([sys.executable, "-c", "print('hello'); raise SystemExit(3)"], os.environ,
                                      timeout=60.0, keep=1000))
    assert (finished.code, finished.output, finished.output_left_open) == (3, b"hello\n", False)


def test_a_grandchild_holding_the_output_is_killed_with_its_group_and_the_wait_is_bounded() -> None:
    finished = asyncio.run(run_to_end([sys.executable, "-c", LEAVES_A_CHILD], os.environ, timeout=60.0,
                                      keep=1000))
    assert finished.code == 0
    grandchild = int(finished.output.split()[0])
    assert not finished.output_left_open  # the group's kill closed it, within 2 x REAP_TIMEOUT
    assert _ends_within(grandchild, 10.0)
    assert REAP_TIMEOUT < 60.0
