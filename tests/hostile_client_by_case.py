"""Listen mode's client command for the hostile tests: one hostile mode per client test case.

``python tests/hostile_client_by_case.py BINDING MAX_SECONDS CASE=MODE... [-- PEER_OPTION...]`` reads
``RSIO_TESTCASE`` (set by the kit for each case) and becomes ``rsio-peer --binding BINDING --connect env
--hostile MODE`` (exec: one process, which the kit's time-outs reach), so one listen-mode run meets a
different hostile client in every case.  A case with no mode named exits 127 (the kit's skip).
"""

from __future__ import annotations

import os
import sys

UNSUPPORTED = 127


def main(argv: list[str]) -> int:
    binding, max_seconds, *rest = argv
    extra = rest[rest.index("--") + 1 :] if "--" in rest else []
    modes = dict(item.split("=", 1) for item in (rest[: rest.index("--")] if "--" in rest else rest))
    mode = modes.get(os.environ.get("RSIO_TESTCASE", ""))
    if mode is None:
        return UNSUPPORTED
    os.execv(sys.executable, [sys.executable, "-m", "rsio_tck.reference_peer", "--binding", binding, "--connect",
                              "env", "--hostile", mode, "--hostile-max-seconds", max_seconds, "-q", *extra])
    return 2  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
