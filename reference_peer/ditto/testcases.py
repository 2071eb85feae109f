"""The Ditto reference peer as the client of listen mode: performs the Ditto client test cases (search).

Usage: RSIO_URL=ws://127.0.0.1:PORT/ws/2 RSIO_TESTCASE=NAME \\
    python -m rsio_tck.reference_peer.ditto.testcases [--profile search] [--fault NAME]...

The same cases as ``interop/ditto-client`` (``rsio_tck.listen.cases``): one search
subscription against the endpoint in ``RSIO_URL`` (``ws://`` or ``wss://``: one
text message per Ditto Protocol message, with the ``websockets`` library;
``tcp://``: one JSON line each), one line printed per signal ('next tck:thing-0 ...',
'complete', 'cancel', 'error CODE'); exit 0 when the case went as expected, 1 when
not, 127 for a case it does not know.  Its client faults (``--fault`` or the
comma-separated ``RSIO_PEER_FAULTS``) make it break the subscriber's rules, so the
self-check can see listen mode catch them:

- ``client-request-unannounced`` (DITTO-SUB-7): its first request names a subscriptionId
  no ``created`` announced (then the right one);
- ``client-request-after-cancel`` (DITTO-SUB-8): once the subscription is over, it cancels
  it and then still requests a page;
- ``client-demand-zero`` (DITTO-DEM-3): its first request asks for 0 pages.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from typing import Any

from rsio_tck.bindings.ditto import (
    Decoded,
    SearchCancel,
    SearchComplete,
    SearchCreated,
    SearchFailed,
    SearchNext,
    SearchRequest,
    SearchSubscribe,
    decode_websocket_text,
    encode_message,
)
from rsio_tck.semantics.demand import UNBOUNDED

from .faults import FAULTS

TIMEOUT = 20.0  # seconds for one case
UNSUPPORTED = 127
MAX = UNBOUNDED
# name -> (filter, page size, first request, then per page (0: none), cancel after this many pages (0: never))
CASES: dict[str, tuple[str, int, int, int, int]] = {
    "search-pages": ("eq(attributes/tck,10)", 3, 1, 1, 0),
    "search-all": ("eq(attributes/tck,12)", 5, MAX, 0, 0),
    "search-stream": ("eq(attributes/tck,7)", 2, 2, 1, 0),
    "search-cancel": ("eq(attributes/tck,100)", 5, 1, 1, 2),
    "search-empty": ("eq(attributes/tck,0)", 5, 1, 1, 0),
    "search-failed": ("eq(attributes/tck,3)", 0, 1, 1, 0),
}


class Link:
    """One connection: text messages (ws://) or JSON lines (tcp://)."""

    def __init__(self) -> None:
        self.ws: Any = None
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self, url: str) -> None:
        if url.startswith(("ws://", "wss://")):
            import ssl

            from websockets.asyncio.client import connect

            context = None
            if url.startswith("wss://"):
                context = ssl.create_default_context()
                if "insecure=1" in url:
                    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            self.ws = await connect(url.split("?", 1)[0], ssl=context, additional_headers={
                "Authorization": "Basic dGNrOnRjaw=="}, open_timeout=TIMEOUT)
            return
        if not url.startswith("tcp://"):
            raise ValueError(f"RSIO_URL {url!r}: give ws://HOST:PORT/ws/2, wss://... or tcp://HOST:PORT")
        host, _, port = url[len("tcp://"):].rstrip("/").rpartition(":")
        self.reader, self.writer = await asyncio.open_connection(host.strip("[]"), int(port), limit=1 << 24)

    async def send(self, message: Decoded) -> None:
        text = encode_message(message)
        if self.ws is not None:
            await self.ws.send(text)
        else:
            assert self.writer is not None
            self.writer.write(text.encode() + b"\n")
            await self.writer.drain()

    async def receive(self) -> Any:
        if self.ws is not None:
            text = await self.ws.recv()
        else:
            assert self.reader is not None
            line = await self.reader.readline()
            if not line:
                raise ConnectionError("the endpoint closed the connection")
            text = line.decode()
        return decode_websocket_text(text if isinstance(text, str) else text.decode())

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        elif self.writer is not None:
            self.writer.close()


async def run_case(url: str, case: str, faults: tuple[str, ...]) -> bool:
    filter_, size, first, then, cancel_after = CASES[case]
    link = Link()
    await link.open(url)
    try:
        return await _search(link, case, filter_, size, first, then, cancel_after, faults)
    finally:
        await link.close()


async def _search(link: Link, case: str, filter_: str, size: int, first: int, then: int, cancel_after: int,
                  faults: tuple[str, ...]) -> bool:
    cid = str(uuid.uuid4())
    await link.send(SearchSubscribe(headers={"correlation-id": cid}, filter=filter_, options=f"size({size})"))
    sid = None
    while sid is None:
        message = await link.receive()
        if isinstance(message, SearchCreated) and message.correlation_id == cid:
            sid = message.subscription_id

    async def request(demand: int) -> None:
        await link.send(SearchRequest(subscription_id=sid, demand=demand, headers={"correlation-id": str(uuid.uuid4())}))

    if "client-request-unannounced" in faults:
        await link.send(SearchRequest(subscription_id=f"{sid}-unannounced", demand=1))
    await request(0 if "client-demand-zero" in faults else first)
    pages: list[list[str]] = []
    end = ""
    while not end:
        message = await link.receive()
        if getattr(message, "subscription_id", None) != sid:
            continue
        if isinstance(message, SearchNext):
            pages.append([item.get("thingId", "?") for item in message.items if isinstance(item, dict)])
            print("next " + " ".join(pages[-1]), flush=True)
            if cancel_after and len(pages) == cancel_after:
                await link.send(SearchCancel(subscription_id=sid))
                print("cancel", flush=True)
                end = "cancelled"
            elif then:
                await request(then)
        elif isinstance(message, SearchComplete):
            print("complete", flush=True)
            end = "complete"
        elif isinstance(message, SearchFailed):
            print(f"error {message.error.error}", flush=True)
            end = "error"
    if "client-request-after-cancel" in faults:
        if end != "cancelled":
            await link.send(SearchCancel(subscription_id=sid))
        await request(1)
    things = [thing for page in pages for thing in page]
    total = {"search-pages": 10, "search-all": 12, "search-stream": 7, "search-cancel": 100}.get(case, 0)
    # Ditto's default order, sort(+thingId): the thingIds as strings (SPEC.md decision DITTO-l).
    due = sorted(f"tck:thing-{i}" for i in range(total))
    expected_end = {"search-cancel": "cancelled", "search-failed": "error"}.get(case, "complete")
    sizes_ok = all(len(page) <= max(size, 1) for page in pages)  # a page may hold fewer (decision DITTO-d)
    if case == "search-cancel":  # two pages, of at most 5 things each, then the cancel
        return end == expected_end and sizes_ok and len(things) <= 10 and things == due[:len(things)]
    return end == expected_end and sizes_ok and things == due


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="search", help="the binding's profile (the cases are search's)")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME")
    args = parser.parse_args(argv)
    faults = tuple(args.fault) + tuple(f for f in os.environ.get("RSIO_PEER_FAULTS", "").split(",") if f)
    unknown = [f for f in faults if f not in FAULTS or not f.startswith("client-")]
    if unknown:
        print(f"testcases: --fault {unknown[0]!r}: no such Ditto client fault", file=sys.stderr)
        return 2
    url, case = os.environ.get("RSIO_URL", ""), os.environ.get("RSIO_TESTCASE", "")
    if case not in CASES:
        print(f"unsupported test case {case!r}", flush=True)
        return UNSUPPORTED
    try:
        ok = asyncio.run(asyncio.wait_for(run_case(url, case, faults), TIMEOUT))
    except (OSError, ValueError, TimeoutError, ConnectionError) as exc:
        print(f"failed: {type(exc).__name__}: {exc}", flush=True)
        return 1
    except Exception as exc:  # the websockets library's own errors: one line, never a traceback
        print(f"failed: {type(exc).__name__}: {exc}", flush=True)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
