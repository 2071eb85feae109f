"""Two sans-IO connections pumped into each other, for tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from rsio_tck.errors import Side
from rsio_tck.monitor import Monitor
from rsio_tck.protocol import Connection


@dataclass
class PeerPair:
    codec: str = "msgpack"
    client: Connection = field(init=False)
    server: Connection = field(init=False)
    monitor: Monitor = field(init=False)
    events: dict[Side, list[object]] = field(init=False)

    def __post_init__(self) -> None:
        self.client = Connection(Side.CLIENT, self.codec)
        self.server = Connection(Side.SERVER, self.codec)
        self.monitor = Monitor(self.codec)
        self.events = {Side.CLIENT: [], Side.SERVER: []}

    def conn(self, side: Side) -> Connection:
        return self.client if side is Side.CLIENT else self.server

    def pump(self, *, chunk: int = 0, max_rounds: int = 1000) -> None:
        """Move bytes both ways until neither side has anything to send."""
        for _ in range(max_rounds):
            moved = False
            for side in Side:
                data = self.conn(side).data_to_send()
                if not data:
                    continue
                moved = True
                self.monitor.observe(side, data)
                receiver = self.conn(side.peer)
                pieces = [data] if chunk <= 0 else [data[i : i + chunk] for i in range(0, len(data), chunk)]
                for piece in pieces:
                    self.events[side.peer].extend(receiver.receive_data(piece))
            if not moved:
                return
        raise AssertionError("peer pair did not settle")

    def take(self, side: Side) -> list[object]:
        """Events ``side`` received since the last take."""
        out, self.events[side] = self.events[side], []
        return out
