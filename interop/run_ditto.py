"""The Ditto steps of ``make interop`` (called from ``run.py``'s main; runnable alone too).

1. Golden vectors: build ``interop/ditto-protocol`` (cached: ``build.sh`` runs Maven only when its
   sources changed), regenerate the vectors with Ditto's own adapters into the run's output directory,
   and check that the kit's codec reads each one and writes it back JSON-equal, and that they cover
   every message of both profiles.
2. The real client: build ``interop/ditto-client`` (ditto-client from Maven Central, cached), then
   ``rsio-tck run --binding ditto --profile search --listen ws://127.0.0.1:0/ws/2 --client-command
   interop/ditto-client/client``: the kit plays Ditto's ``/ws/2`` endpoint and judges the client's
   requests and cancels; its run directory is published (Spark pipeline) to ``site/ditto/`` of the
   output directory.  Skipped, saying why, while the kit has no Ditto binding or no WebSocket listen mode.

Usage: python interop/run_ditto.py [--out reports/interop] [--skip-build] [--no-client]
Exit 0 when every check passed (or was skipped with a reason), 1 when one failed, 3 when a build failed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DITTO_PROTOCOL = HERE / "ditto-protocol"
DITTO_CLIENT = HERE / "ditto-client"
DITTO_CLIENT_VERSION = "2.4.0"  # the newest ditto-client on Maven Central (later ones are on Eclipse's repository)
BUILD_TIMEOUT = 900
SUITE_TIMEOUT = 900


def check_vectors(path: Path) -> list[str]:
    """Problems with the golden vectors in ``path`` (empty: each reads and writes back JSON-equal, and
    together they hold every message kind of both profiles)."""
    from rsio_tck.bindings.ditto import MESSAGE_CLASSES, decode_message, encode_message
    from rsio_tck.errors import ProtocolViolation

    problems: list[str] = []
    kinds: set[type] = set()
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{path}: cannot read the vectors: {exc}"]
    for number, line in enumerate(lines, 1):
        try:
            message = decode_message(line)
        except ProtocolViolation as exc:
            problems.append(f"{path.name}:{number}: the kit's codec rejects it: {exc.rule}: {exc.message}")
            continue
        kinds.add(type(message))
        written = encode_message(message)
        if json.loads(written) != json.loads(line):
            problems.append(f"{path.name}:{number}: written back differently: {written}")
        elif decode_message(written) != message:
            problems.append(f"{path.name}:{number}: what the kit writes reads back as another message")
    missing = sorted(cls.__name__ for cls in set(MESSAGE_CLASSES.values()) - kinds)
    if missing:
        problems.append(f"{path.name}: no vector of {', '.join(missing)}")
    return problems


def up_to_date(product: Path, sources: list[Path]) -> bool:
    """Whether ``product`` exists and no source is newer (build.sh's own test for rebuilding)."""
    if not product.exists():
        return False
    built = product.stat().st_mtime
    return all(source.stat().st_mtime <= built for source in sources if source.is_file())


def golden(out: Path, *, build: bool = True) -> int:
    """Regenerate the vectors with Ditto's code into ``out`` and check them with the kit's codec."""
    vectors = out / "ditto-golden.jsonl"
    out.mkdir(parents=True, exist_ok=True)
    jar = DITTO_PROTOCOL / "target" / "ditto-protocol-golden-1.0.0.jar"
    cached = up_to_date(jar, [DITTO_PROTOCOL / "pom.xml", *sorted((DITTO_PROTOCOL / "src").rglob("*"))])
    if not build and not jar.exists():
        print("interop: ditto-protocol: not built and --skip-build given; golden vectors skipped", flush=True)
        return 0
    started = time.monotonic()
    try:
        ran = subprocess.run([str(DITTO_PROTOCOL / "build.sh"), str(vectors)], timeout=BUILD_TIMEOUT,
                             capture_output=True, text=True)
    except (subprocess.TimeoutExpired, OSError) as exc:
        print(f"interop: ditto-protocol: build failed: {exc}", flush=True)
        return 3
    took = time.monotonic() - started
    if ran.returncode != 0:
        tail = " | ".join((ran.stdout + ran.stderr).strip().splitlines()[-3:])
        print(f"interop: ditto-protocol: build or run failed (exit {ran.returncode}): {tail}", flush=True)
        return 3
    what = "ran (jar cached)" if cached else "built and ran"
    print(f"interop: ditto-protocol: {what} in {took:.1f} s -> {vectors}", flush=True)
    started = time.monotonic()
    problems = check_vectors(vectors)
    count = len(vectors.read_text("utf-8").splitlines())
    for problem in problems:
        print(f"interop: ditto golden: {problem}", flush=True)
    print(f"interop: ditto golden: {count - len(problems)}/{count} vectors round-trip in the kit's codec"
          f" ({time.monotonic() - started:.2f} s){'' if not problems else ': FAILED'}", flush=True)
    return 1 if problems else 0


def client_unavailable() -> str | None:
    """Why listen mode cannot play Ditto's /ws/2 endpoint in this kit yet (None: it can)."""
    from rsio_tck.binding import get_binding

    try:
        get_binding("ditto")
    except ValueError as exc:
        return f"the kit has no Ditto binding ({exc})"
    try:
        import rsio_tck.websocket  # noqa: F401  (the WebSocket transport of issue 17)
    except ImportError:
        return "the kit has no WebSocket transport (rsio_tck.websocket)"
    return None


def client_role(out: Path, *, build: bool = True) -> int:
    """ditto-client against the kit in listen mode on ws://.../ws/2 (the kit's output: OUT/logs/)."""
    from processes import build as build_fixture
    from processes import kit, say

    why = client_unavailable()
    if why is not None:
        say(f"ditto-client: skipped: {why}")
        return 0
    if build and build_fixture("ditto-client", out / "logs" / "build-ditto-client.log", BUILD_TIMEOUT) is None:
        return 3
    started = time.monotonic()
    log = out / "logs" / "client-ditto-client.log"
    code = kit("run", "--binding", "ditto", "--profile", "search", "--listen", "ws://127.0.0.1:0/ws/2",
               "--client-command", str(DITTO_CLIENT / "client"), "--name", f"ditto-client@{DITTO_CLIENT_VERSION}",
               "--baseline", str(DITTO_CLIENT / "baseline.txt"), "--report-dir", str(out / "client" / "ditto-client"),
               timeout=SUITE_TIMEOUT, log=log)
    say(f"ditto-client as client: {'matches its baseline' if code == 0 else f'exit {code} ({log})'}; "
        f"{time.monotonic() - started:.0f} s")
    return code


def publish(out: Path) -> int:
    """ditto-client's run directory as a site of its own (Spark pipeline), ``OUT/site/ditto/``."""
    from processes import kit, say

    runs, site = out / "client" / "ditto-client", out / "site" / "ditto"
    if not runs.is_dir():
        return 0
    code = kit("publish", str(runs), "--out", str(site), timeout=SUITE_TIMEOUT, log=out / "logs" / "publish-ditto.log")
    say(f"site ditto: {site / 'index.html' if code == 0 else f'FAILED (exit {code})'}")
    return code


def run(out: Path, *, build: bool = True, client: bool = True, publish_site: bool = True) -> int:
    """Every Ditto step; the worst exit code.  ``run.py`` publishes ditto-client's site with its own."""
    shutil.rmtree(out / "client" / "ditto-client", ignore_errors=True)  # the site shows this run
    codes = [golden(out / "ditto", build=build)]
    if client:
        codes.append(client_role(out, build=build))
        if publish_site:
            codes.append(publish(out))
    return max(codes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "interop", metavar="DIR")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--no-client", action="store_true")
    args = parser.parse_args()
    return run(args.out, build=not args.skip_build, client=not args.no_client)


if __name__ == "__main__":
    sys.exit(main())
