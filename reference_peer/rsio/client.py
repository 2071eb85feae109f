"""The reference peer as an RS-IO client: performs the client test cases of listen mode.

Usage: RSIO_URL=tcp://127.0.0.1:PORT (or ws://HOST:PORT/PATH) RSIO_TESTCASE=NAME python -m rsio_tck.reference_peer.rsio.client

Like the interop fixture programs (interop/*/client*), it opens one connection,
performs the named test case (``rsio_tck.listen.cases``), prints one line per
signal it received ('next N', 'complete', 'error TEXT'; for tck/large 'next N bytes
ok|BAD'), says goodbye, and exits 0 when the case went as expected, 1 when not, and
127 for a test case it does not know.  It is the conforming client that lets
``make test`` cover listen mode; the protocol is the kit's sans-IO ``Connection``.
"""

from __future__ import annotations

import asyncio
import os
import sys

import msgpack

from rsio_tck.bindings.rsio.wire.frames import (
    Cancel,
    ClientHello,
    Goodbye,
    OnComplete,
    OnError,
    OnNext,
    OnNextPacked,
    Request,
    Subscribe,
)
from rsio_tck.errors import Side
from rsio_tck.protocol import Connection, ProtocolError
from rsio_tck.transport import TargetError, open_target

TIMEOUT = 10.0  # seconds for a whole test case


def _show(index: int, element: bytes, large: bool) -> str:
    if large:
        good = element == bytes((index + j) % 256 for j in range(len(element)))
        return f"next {len(element)} bytes {'ok' if good else 'BAD'}"
    return f"next {msgpack.unpackb(element)}"


# name -> (publisher, initialDemand, request batch or None, take (cancel after) or None, large, expected lines)
CASES = {
    "stream-range": ("tck/range?count=10", 3, 3, None, False, [f"next {i}" for i in range(10)] + ["complete"]),
    "cancel-infinite": ("tck/infinite", 5, None, 5, False, [f"next {i}" for i in range(5)]),
    "large-split": ("tck/large?size=100000&count=3", 3, None, None, True, ["next 100000 bytes ok"] * 3 + ["complete"]),
    "error": ("tck/error?after=2", 10, None, None, False, ["next 0", "next 1", "error"]),
}


async def perform(url: str, name: str) -> list[str]:
    publisher, initial, batch, take, large, _ = CASES[name]
    reader, writer = await open_target(url, TIMEOUT)  # tcp:// or ws:// (the binding's WebSocket framing)
    conn = Connection(Side.CLIENT, "msgpack")
    conn.send(ClientHello(version=0))
    conn.send(Subscribe(publisher=publisher, subscriber=1, initial_demand=initial))
    lines: list[str] = []
    count = 0
    done = False
    try:
        while True:
            writer.write(conn.data_to_send())
            await writer.drain()
            data = await asyncio.wait_for(reader.read(65536), TIMEOUT)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, ProtocolError):
                    lines.append(f"protocol error {event.violation.rule}")
                    done = True
                elements = (list(event.elements()) if isinstance(event, OnNextPacked)
                            else [event.element] if isinstance(event, OnNext) else [])
                for element in elements:
                    if done:
                        break  # elements in flight after our cancel are dropped, as rsio-v0 allows
                    lines.append(_show(count, element, large))
                    count += 1
                    if take is not None and count == take:
                        conn.send(Cancel(subscriber=1))
                        done = True
                    elif batch is not None and count % batch == 0:
                        conn.send(Request(subscriber=1, demand=batch))
                if isinstance(event, OnComplete | OnError) and not done:
                    lines.append("complete" if isinstance(event, OnComplete) else "error")
                    done = True
                if isinstance(event, Goodbye):
                    return lines
            if done and conn.state.name == "OPEN":
                conn.send(Goodbye(reason="test case done"))
    finally:
        writer.close()
    return lines


def main() -> int:
    name = os.environ.get("RSIO_TESTCASE", "")
    url = os.environ.get("RSIO_URL", "")
    if name not in CASES:
        print(f"unsupported test case {name!r}", file=sys.stderr)
        return 127
    if not url.startswith(("tcp://", "ws://", "wss://")):
        print(f"RSIO_URL must be tcp://HOST:PORT or ws://HOST:PORT/PATH, not {url!r}", file=sys.stderr)
        return 2
    try:
        lines = asyncio.run(perform(url, name))
    except (OSError, TimeoutError, TargetError) as exc:
        print(f"error: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    print("\n".join(lines), flush=True)
    return 0 if lines == CASES[name][5] else 1


if __name__ == "__main__":
    sys.exit(main())
