"""Wall time and peak RSS of ``rsio-tck run`` against the reference peer's hostile modes (issue 27).

For each (binding, transport, mode) the hostile peer (``rsio-peer --binding B --listen URL
--hostile MODE``, see ``tests/hostile_target.py``) serves every connection of one kit run of
the binding's whole default suite; the kit's own process is sampled with psutil
(``tests/flood_target.measure``).  Goal: every run ends in under 60 s, under 200 MB, exit 1
(failures) or 3 (the target stopped answering).  ``python -m benchmarks.bench_hostile
rsocket:tcp:garbage ...`` measures only the cells named (``B:T:MODE``; ``B`` or ``B:T`` for all
their modes).

Listen mode too (``listen:B:T:MODE``, all of ``LISTEN`` for ``listen``): ``rsio-tck run --listen`` over every
client test case of the binding, the client in each case ``rsio-peer --connect env --hostile MODE``
(``tests/hostile_roles.run_listen``, ``--client-timeout`` ``CLIENT_TIMEOUT``): a client that stalls in
every case is said once, in two cases' bounds.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 150.0  # seconds a measured run may take before it is killed
MB = 1024 * 1024
BINDINGS = ("rsio", "rsocket", "ditto")
COMMON = ("garbage", "flood", "huge-length", "silent", "slowloris", "half-close", "mid-frame-close")
WS_ONLY = ("ws-huge-frame", "ws-ping-flood", "ws-continuations", "ws-close-then-data")
OWN = {"rsio": ("endless-split", "unknown-next-flood"),
       "rsocket": ("endless-fragments", "keepalive-storm", "lease-storm"),
       "ditto": ("endless-line", "unclosed-json", "invalid-utf8", "deep-json", "unknown-next-flood")}


# The stalling clients whose whole listen run is measured, and the per-case time-out they get.
LISTEN = (("rsocket", "tcp", "silent"), ("rsocket", "tcp", "slowloris"), ("rsocket", "tcp", "keepalive-storm"),
          ("rsocket", "ws", "silent"), ("ditto", "tcp", "silent"), ("ditto", "ws", "slowloris"),
          ("rsio", "tcp", "silent"), ("rsio", "tcp", "slowloris"))
CLIENT_TIMEOUT = 20.0


def test_module(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def cells(only: list[str]) -> list[tuple[str, str, str]]:
    out = []
    for binding in BINDINGS:
        for transport in ("tcp", "ws"):
            for mode in COMMON + OWN[binding] + (WS_ONLY if transport == "ws" else ()):
                name = f"{binding}:{transport}:{mode}"
                if not only or any(name == o or name.startswith(o + ":") for o in only):
                    out.append((binding, transport, mode))
    return out


def kit_run(binding: str, url: str, report_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "rsio_tck.cli", "run", "--binding", binding, "--target", url,
            "--report-dir", str(report_dir), "--quiet", *extra]


def measure_cell(binding: str, transport: str, mode: str, report_dir: Path, *extra: str) -> object:
    flood, hostile = test_module("flood_target"), test_module("hostile_target")
    with hostile.HostileTarget(binding, mode, transport, max_seconds=LIMIT + 30) as url:
        return flood.measure(kit_run(binding, url, report_dir, *extra), LIMIT)


def listen_cells(only: list[str]) -> list[tuple[str, ...]]:
    """The listen cells named (``listen:B:T:MODE``; ``listen``: every cell of ``LISTEN``)."""
    named = [o.removeprefix("listen:") for o in only if o == "listen" or o.startswith("listen:")]
    return list(LISTEN) if "listen" in named else [tuple(name.split(":", 2)) for name in named]


def measure_listen(binding: str, transport: str, mode: str, report_dir: Path) -> object:
    roles = test_module("hostile_roles")
    return roles.run_listen(binding, transport, mode, report_dir, client_timeout=CLIENT_TIMEOUT)[0]


def _row(figures: dict[str, float], name: str, measured: object) -> None:
    ended = str(measured.returncode) if measured.returncode is not None else f"KILLED at {LIMIT:g} s"  # type: ignore[attr-defined]
    wall, peak = measured.wall, measured.peak_rss / MB  # type: ignore[attr-defined]
    binding, transport, mode = name.split(":")[-3:]
    role = "listen" if name.startswith("listen:") else "run"
    print(f"  {role:6s} {binding:8s} {transport:9s} {mode:20s} {wall:7.1f} {peak:8.1f}  {ended}", flush=True)
    figures[f"{name}:seconds"] = wall
    figures[f"{name}:peak_mb"] = peak


def main(only: list[str] | None = None) -> dict[str, float]:
    only = only or []
    targets = [o for o in only if o != "listen" and not o.startswith("listen:")]
    figures: dict[str, float] = {}
    print(f"  {'role':6s} {'binding':8s} {'transport':9s} {'mode':20s} {'wall s':>7s} {'peak MB':>8s}  exit")
    with tempfile.TemporaryDirectory(prefix="rsio-bench-hostile-") as tmp:
        if targets or not only:
            for number, (binding, transport, mode) in enumerate(cells(targets)):
                _row(figures, f"{binding}:{transport}:{mode}",
                     measure_cell(binding, transport, mode, Path(tmp) / str(number)))
        for number, (binding, transport, mode) in enumerate(listen_cells(only or ["listen"])):
            _row(figures, f"listen:{binding}:{transport}:{mode}",
                 measure_listen(binding, transport, mode, Path(tmp) / f"listen-{number}"))
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
