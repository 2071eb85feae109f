"""A second connection that watches an example from the side (ERR-3: other connections unaffected).

Before the example's own connection opens, the bystander completes a handshake;
after the example it must still carry a short ``tck/range`` stream.  A target
that takes every connection down on one connection's protocol error fails here,
which the in-scenario ``liveness`` step (a *fresh* connection) cannot see.
"""

from __future__ import annotations

from ....errors import Side
from ....scenarios.events import CONN
from ....scenarios.kit_session import KitSession
from ....transport import TargetError, open_target
from ..wire.frames import ClientHello, Goodbye, Subscribe


class Bystander:
    def __init__(self, target: str, codec: str, timeout: float) -> None:
        self.target, self.codec, self.timeout = target, codec, timeout
        self.session: KitSession | None = None

    async def open(self) -> bool:
        try:
            reader, writer = await open_target(self.target, self.timeout)
        except TargetError:
            return False
        self.session = KitSession(reader, writer, self.codec)
        self.session.start()
        await self.session.send_frames([ClientHello(version=0)])
        event = await self.session.next_event(CONN, self.timeout)
        return event is not None and event.kind == "serverHello"

    async def check(self) -> tuple[str, str] | None:
        """None when the bystander still works, else (rule, what went wrong).

        The bystander's own monitor names the rule when the target broke one on
        it; a closed or dead bystander is ERR-3; a stream that just stalls is TCK-1.
        """
        session = self.session
        if session is None:
            return None
        try:
            problem = await self._probe(session)
        except (OSError, RuntimeError) as exc:
            problem = ("ERR-3", f"another connection failed during the example: {type(exc).__name__}: {exc}")
        finally:
            await session.close("write")
            await session.shutdown()
        if problem is not None:
            broken = session.monitor.violations(Side.SERVER)
            if broken:
                return broken[0].rule, f"on another connection: {broken[0].message}"
        return problem

    async def _probe(self, session: KitSession) -> tuple[str, str] | None:
        if session.eof:
            return "ERR-3", "the target closed another, idle connection during the example"
        await session.send_frames([Subscribe(publisher="tck/range?count=1", subscriber=1, initial_demand=1)])
        for want in ("onSubscribe", "onNext", "onComplete"):
            event = await session.next_event(("kit", 1), self.timeout)
            if event is None or event.kind != want:
                got = "nothing" if event is None else event.kind
                rule = "ERR-3" if session.eof else "TCK-1"
                return rule, f"another connection's tck/range?count=1: expected {want}, got {got}"
        await session.send_frames([Goodbye(reason="bystander done")])
        await session.next_event(CONN, self.timeout)
        return None

