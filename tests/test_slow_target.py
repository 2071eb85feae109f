"""A target too slow to judge is said once, and a budget that runs out judges nothing (issue 27).

A scenario's waits measure silence: bytes that keep coming stretch them, within the scenario's
budget.  A step whose budget runs out while bytes still come proves nothing against the target
(error, "not judged"), and it, or a frame that trickled in for longer than the signal timeout,
sets off a probe of the target's *pace*: the liveness probe's answer whole within a bound of total
time.  A target that misses it answered too slowly to judge: said once, the rest not run, exit 3.
A live target, even one writing a byte at a time within the bound, passes the probe and the run goes on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from hostile_target import HostileTarget
from typer.testing import CliRunner

from rsio_tck.binding import get_binding
from rsio_tck.bindings.rsio.wire.frames import OnComplete, OnNext, OnSubscribe, ServerHello
from rsio_tck.bindings.rsocket.frames import Keepalive
from rsio_tck.cli import app
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.gate import ExitCode
from rsio_tck.report.schema import check_run_dir
from rsio_tck.scenarios import ScenarioResult, Verdict
from rsio_tck.scenarios.liveness import PACE_FACTOR, TargetWatch, probe

SUBSET = "DITTO-001 or DITTO-002 or DITTO-003"  # three streaming scenarios that wait for the target's answer


def _results(reports: Path) -> dict[str, dict[str, Any]]:
    (run_dir,) = reports.iterdir()
    return {entry["id"]: entry for entry in map(json.loads, (run_dir / "results.jsonl").read_text().splitlines())}


def test_a_trickling_target_is_not_judged_and_said_once_to_be_too_slow(tmp_path: Path) -> None:
    # The hostile Ditto peer's huge-length mode answers every connection with a line that never ends, two
    # bytes a second: the first scenario's wait runs out of its 3 s budget with bytes still arriving.
    reports = tmp_path / "reports"
    with HostileTarget("ditto", "huge-length", "tcp", max_seconds=120) as url:
        result = CliRunner().invoke(app, ["run", "--binding", "ditto", "--target", url, "-k", SUBSET, "--jobs", "1",
                                          "--scenario-budget", "3", "--signal-timeout", "1", "--report-dir",
                                          str(reports), "--quiet"])
    assert result.exit_code == int(ExitCode.UNRUNNABLE), result.output
    said = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(said) == 1, result.output
    results = _results(reports)
    ran = sorted(results)
    first, rest = ran[0], ran[1:]
    assert said[0].startswith(f"error: the target answered too slowly to judge during {first}: after its budget "
                              "ran out, a fresh connection"), said
    assert said[0].endswith(f"; {len(rest)} scenario(s) after it not judged (error)"), said
    assert results[first]["verdict"] == "error" and results[first]["violations"] == [], results[first]
    assert "not judged: " in results[first]["reason"] and "budget ran out (bytes were still arriving" \
        in results[first]["reason"], results[first]["reason"]
    assert results[first]["target_stopped"]["slow"] is True
    for later in rest:
        assert results[later]["verdict"] == "error" and results[later]["violations"] == []
        assert results[later]["reason"] == f"not run: the target answered too slowly to judge during {first}"

    (run_dir,) = reports.iterdir()
    report = json.loads((run_dir / "report" / "report.json").read_text())
    assert report["stopped"]["what"] == "answered too slowly to judge"
    assert report["stopped"]["after"] == "after its budget ran out"
    index = (run_dir / "report" / "index.html").read_text()
    assert "The target answered too slowly to judge during" in index and "target too slow here" in index
    assert check_run_dir(run_dir) == []


@asynccontextmanager
async def _paced_server(answer: bytes, pace: float = 0.0, *, hold: bool = True) -> AsyncIterator[str]:
    """A server that reads the probe, writes ``answer`` (one byte every ``pace`` s; 0: at once), then keeps the
    connection open until the client closes it (``hold``) or closes it."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read(1024)  # the probe's opening
            pieces = [answer[i:i + 1] for i in range(len(answer))] if pace else [answer]
            for piece in pieces:
                writer.write(piece)
                await writer.drain()
                if pace:
                    await asyncio.sleep(pace)  # the target's pace: what the probe measures, not a synchronisation
            while hold and await reader.read(1024):
                pass
        except ConnectionError:
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        await server.wait_closed()


def _keepalive_answer() -> bytes:
    """An RSocket server's correct answer to the liveness probe's KEEPALIVE with R."""
    return get_binding("rsocket").encoder("rsocket-1.0").encode(Keepalive(respond=False))


def test_a_pace_probe_bounds_total_time_where_a_liveness_probe_bounds_silence() -> None:
    async def both() -> tuple[str | None, str | None]:
        # 17 bytes: about 1.7 s in all, never 0.5 s silent
        async with _paced_server(_keepalive_answer(), pace=0.1, hold=False) as url:
            alive = await probe(url, "rsocket", "rsocket-1.0", 0.5)
            paced = await probe(url, "rsocket", "rsocket-1.0", 0.5, pace=True)
        return alive, paced

    alive, paced = asyncio.run(both())
    assert alive is None  # bytes kept coming: the answer was awaited until it was whole
    assert paced is not None and paced.startswith(
        "a fresh connection's answer to SETUP, then KEEPALIVE with R did not come whole within 0.5 s ("), paced


def _stretched(scenario_id: str, seconds: float) -> ScenarioResult:
    return ScenarioResult(id=scenario_id, title="", rules=("RS-FLOW-2",), level="MUST", verdict=Verdict.FAIL,
                          stretched=seconds)


def test_a_slow_frame_sets_off_a_pace_probe_that_a_live_target_passes() -> None:
    async def settle(url: str) -> TargetWatch:
        watch = TargetWatch(url, "rsocket", "rsocket-1.0", 5.0)
        result = _stretched("RSFLOW-001", 3.2)
        await watch.settle(result)
        assert result.verdict is Verdict.FAIL and result.stopped is None  # the verdict is the scenario's own
        return watch

    with EmbeddedPeer(binding="rsocket") as url:
        watch = asyncio.run(settle(url))
    assert watch.probes == 1 and watch.stop is None


def test_a_slow_frame_from_a_target_that_answers_too_slowly_stops_the_run() -> None:
    async def settle() -> tuple[TargetWatch, ScenarioResult, ScenarioResult]:
        # A bound of 0.3 s a probe (0.6 s of pace), against an answer of 17 bytes at 0.1 s a byte.
        async with _paced_server(_keepalive_answer(), pace=0.1, hold=False) as url:
            watch = TargetWatch(url, "rsocket", "rsocket-1.0", 0.3)
            slow = _stretched("RSFLOW-001", 3.2)
            await watch.settle(slow)
            later = ScenarioResult(id="RSFLOW-002", title="", rules=("RS-FLOW-2",), level="MUST",
                                   verdict=Verdict.PASS)
            watch.not_run(later)
        return watch, slow, later

    watch, slow, later = asyncio.run(settle())
    assert watch.stop is not None and watch.stop.slow and watch.stop.during == "RSFLOW-001"
    assert watch.stop.after == "after a frame that took 3.2 s to arrive"
    assert f"within {0.3 * PACE_FACTOR:g} s" in watch.stop.why
    assert slow.verdict is Verdict.FAIL and slow.stopped is watch.stop  # judged on its frames: it keeps its verdict
    assert later.verdict is Verdict.ERROR
    assert later.reason == "not run: the target answered too slowly to judge during RSFLOW-001"


# -- RS-IO's pace probe: one element of tck/range, on the probe's own Id -------------------------------------

ELEMENT_PROBE = "clientHello, then subscribe(tck/range?count=1, Id 2, demand 1)"


def _rsio(*frames: Any) -> bytes:
    encoder = get_binding("rsio").encoder("msgpack")
    return b"".join(encoder.encode(frame) for frame in frames)


def test_the_rsio_pace_probe_is_answered_by_its_own_subscription_only() -> None:
    # At once: the serverHello, a whole stream on Id 1 (the Id a hostile slowloris trickles onNext on) and the
    # probe's own onSubscribe; none of them is the element the probe asked for.
    others = _rsio(ServerHello(version=0), OnSubscribe(subscriber=1), OnNext(subscriber=1, element=b"\x00"),
                   OnComplete(subscriber=1), OnSubscribe(subscriber=2))
    element = _rsio(OnNext(subscriber=2, element=b"\x00"))

    async def both() -> tuple[str | None, str | None, str | None]:
        async with _paced_server(others) as url:
            alive = await probe(url, "rsio", "msgpack", 0.5)
            unanswered = await probe(url, "rsio", "msgpack", 0.5, pace=True)
        async with _paced_server(others + element) as url:
            answered = await probe(url, "rsio", "msgpack", 0.5, pace=True)
        return alive, unanswered, answered

    alive, unanswered, answered = asyncio.run(both())
    assert alive is None  # the liveness probe asks only for the handshake
    assert unanswered is not None and unanswered.startswith(
        (f"a fresh connection got no answer to {ELEMENT_PROBE} within 0.5 s",
         f"a fresh connection's answer to {ELEMENT_PROBE} did not come whole within 0.5 s")), unanswered
    assert answered is None


def test_an_rsio_target_answering_a_byte_at_a_time_passes_the_pace_probe_within_its_bound() -> None:
    # 13 bytes at 0.05 s a byte: the element is whole after about 0.55 s, and no silence lasts 0.05 s.
    answer = _rsio(ServerHello(version=0), OnSubscribe(subscriber=2), OnNext(subscriber=2, element=b"\x00"),
                   OnComplete(subscriber=2))

    async def three() -> tuple[str | None, str | None, str | None]:
        async with _paced_server(answer, pace=0.05) as url:
            steady = await probe(url, "rsio", "msgpack", 2.0, pace=True)
            alive = await probe(url, "rsio", "msgpack", 0.3)
            too_slow = await probe(url, "rsio", "msgpack", 0.3, pace=True)
        return steady, alive, too_slow

    steady, alive, too_slow = asyncio.run(three())
    assert steady is None
    assert alive is None  # its serverHello is whole within 0.15 s
    assert too_slow is not None and too_slow.startswith(
        f"a fresh connection's answer to {ELEMENT_PROBE} did not come whole within 0.3 s ("), too_slow
