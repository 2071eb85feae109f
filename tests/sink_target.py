"""A server that reads and drops whatever it is sent, for the proxy's bounded-memory tests.

Run as a script (``python tests/sink_target.py --transport ws --path /rsocket``): it listens on a free
loopback port, prints ``listening on URL`` and, on every connection, answers a WebSocket upgrade first
(ws:// only, with websockets' sans-IO server) and then reads and drops every byte until the peer closes,
never writing, never closing first.  A proxy in front of it relays a hostile client for as long as the
client writes, with nothing judged against the server (it sends nothing, so it owes and breaks nothing
the proxy could see), which is what the tests of the proxy's own memory need.

The process lives at most ``--max-seconds``; ``SinkTarget`` runs it as a child process and kills it on
exit, so a failing test cannot leave it running.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from listening_child import ListeningChild

READ_SIZE = 256 * 1024
UPGRADE_WAIT = 5.0  # seconds a ws:// client has to send its whole upgrade request


async def _upgrade(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """Answer the client's WebSocket upgrade; whether it was accepted (what came with it is dropped)."""
    from websockets.http11 import Request
    from websockets.server import ServerProtocol

    protocol = ServerProtocol()
    deadline = time.monotonic() + UPGRADE_WAIT
    while time.monotonic() < deadline:
        try:
            data = await asyncio.wait_for(reader.read(READ_SIZE), deadline - time.monotonic())
        except TimeoutError:
            return False
        if not data:
            return False
        protocol.receive_data(data)
        for event in protocol.events_received():
            if isinstance(event, Request):
                response = protocol.accept(event)
                protocol.send_response(response)
                writer.write(b"".join(protocol.data_to_send()))
                return response.status_code == 101
        if protocol.handshake_exc is not None:
            return False
    return False


async def main_async(transport: str, path: str, max_seconds: float) -> None:
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if transport == "tcp" or await _upgrade(reader, writer):
                while await reader.read(READ_SIZE):
                    pass
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"listening on {transport}://127.0.0.1:{port}{path if transport == 'ws' else ''}", flush=True)
    async with server:
        await asyncio.sleep(max_seconds)  # the process's own time cap, not synchronisation


class SinkTarget(ListeningChild):
    """``with SinkTarget("ws", "/rsocket") as url:`` the sink as a child process."""

    def __init__(self, transport: str = "tcp", path: str = "/", max_seconds: float = 300.0) -> None:
        super().__init__([sys.executable, __file__, "--transport", transport, "--path", path, "--max-seconds",
                          str(max_seconds)], "sink target")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("tcp", "ws"), default="tcp")
    parser.add_argument("--path", default="/")
    parser.add_argument("--max-seconds", type=float, default=300.0)
    args = parser.parse_args()
    asyncio.run(main_async(args.transport, args.path, args.max_seconds))


if __name__ == "__main__":
    main()
