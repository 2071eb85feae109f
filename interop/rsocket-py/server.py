"""rsocket-py (PyPI rsocket 0.4.20) serving the kit's RSocket test publishers (bindings.md section 2).

Usage: python server.py PORT   (or RSIO_PORT=PORT; 0: any free port, printed); listens on 127.0.0.1 only.
Shaped like every interop server: parse the publisher name, one generator of
elements per publisher, then one handler per interaction.  Request-stream uses
rsocket-py's own StreamFromGenerator, which pulls from the generator only as
far as the requester's demand (that demand handling is what the kit tests).
"""

import asyncio
import itertools
import os
import sys
from collections import Counter
from urllib.parse import unquote

from reactivestreams.subscriber import Subscriber
from rsocket.helpers import create_error_future, create_future
from rsocket.payload import Payload
from rsocket.request_handler import BaseRequestHandler
from rsocket.rsocket_server import RSocketServer
from rsocket.streams.error_stream import ErrorStream
from rsocket.streams.stream_from_async_generator import StreamFromAsyncGenerator
from rsocket.streams.stream_from_generator import StreamFromGenerator
from rsocket.transports.tcp import TransportTCP

PARAMS = {"tck/range": {"start", "count"}, "tck/infinite": {"start"}, "tck/error": {"after", "message"},
          "tck/large": {"size", "count", "part"}, "tck/fnf": {"key"}, "tck/fnf-count": {"key"}, "tck/echo": set()}
FNF_COUNTS: Counter = Counter()  # fire-and-forget calls per key, for the whole server


class PublisherError(Exception):
    """tck/error's onError, or an unknown or malformed name: sent as ERROR[APPLICATION_ERROR]."""


def parse_name(text):
    """'tck/range?start=1&count=2' -> ('tck/range', {'start': '1', 'count': '2'}); PublisherError if not served."""
    path, _, query = text.partition("?")
    if path not in PARAMS:
        raise PublisherError(f"no test publisher {path!r}")
    params = {}
    for pair in query.split("&") if query else []:
        key, eq, value = pair.partition("=")
        if not eq or key not in PARAMS[path] or key in params:
            raise PublisherError(f"bad parameter {pair!r} for {path}")
        params[key] = unquote(value, errors="strict")
    return path, params


def number(params, key, default=None):
    value = params.get(key, default)
    if value is None or not str(value).lstrip("-").isdigit():
        raise PublisherError(f"parameter {key}={value!r} is not an integer")
    return int(value)


def large_element(index, size):
    """tck/large element ``index``: byte j is (index + j) mod 256."""
    return bytes((index + j) % 256 for j in range(size))


def fail(message):
    raise PublisherError(message)
    yield  # a generator, so the error comes in place of the next element


def elements(path, params):
    """An iterator over the publisher's elements as bytes; parameters are checked before it is returned."""
    if path == "tck/range":
        start, count = number(params, "start", 0), number(params, "count", 0)
        return (str(i).encode() for i in range(start, start + count))
    if path == "tck/infinite":
        return (str(i).encode() for i in itertools.count(number(params, "start", 0)))
    if path == "tck/large":
        size, count = number(params, "size"), number(params, "count", 0)
        return (large_element(i, size) for i in range(count))
    if path == "tck/error":
        after = number(params, "after", 0)
        return itertools.chain((str(i).encode() for i in range(after)), fail(params.get("message", "failed")))
    raise PublisherError(f"{path} is not a request-stream publisher")


def stream_of(path, params):
    """(Payload, is_complete) pairs, as StreamFromGenerator wants: the last element carries completion."""
    previous = None  # one element of look-ahead, to know which one is last
    try:
        for item in elements(path, params):
            if previous is not None:
                yield Payload(previous), False
            previous = item
    except PublisherError:
        if previous is not None:
            yield Payload(previous), False
        raise
    yield (None if previous is None else Payload(previous)), True


class EchoSubscriber(Subscriber):
    """The inbound half of tck/echo: queues each inbound payload, asks for one more after each is sent back."""

    def __init__(self):
        self.queue = asyncio.Queue()
        self.subscription = None
        self.inbound_done = False

    def on_subscribe(self, subscription):
        self.subscription = subscription
        subscription.request(1)

    def on_next(self, value, is_complete=False):
        self.queue.put_nowait(value)
        if is_complete:
            self.on_complete()

    def on_error(self, exception):
        self.on_complete()

    def on_complete(self):
        self.inbound_done = True
        self.queue.put_nowait(None)

    async def echoed(self):
        while (payload := await self.queue.get()) is not None:
            yield Payload(payload.data), False
            if not self.inbound_done:
                self.subscription.request(1)
        yield None, True


class Handler(BaseRequestHandler):
    async def request_stream(self, payload):
        try:
            path, params = parse_name(payload.data.decode())
            elements(path, params)  # checks the name and parameters before anything is sent
        except (PublisherError, UnicodeDecodeError) as exc:
            return ErrorStream(PublisherError(str(exc)))
        return StreamFromGenerator(lambda: stream_of(path, params))

    async def request_response(self, payload):
        try:
            path, params = parse_name(payload.data.decode())
            if path == "tck/fnf-count":
                return create_future(Payload(str(FNF_COUNTS[params.get("key", "")]).encode()))
            first = next(elements(path, params), None)
        except (PublisherError, UnicodeDecodeError) as exc:
            return create_error_future(PublisherError(str(exc)))
        # rsocket-py's request-response has no empty completion (None is not accepted): an empty
        # publisher answers an empty Payload, which rsocket-py sends as PAYLOAD[C] without N (NOTES.md).
        return create_future(Payload(first if first is not None else b""))

    async def request_fire_and_forget(self, payload):
        path, params = parse_name(payload.data.decode())
        if path == "tck/fnf":
            FNF_COUNTS[params.get("key", "")] += 1

    async def request_channel(self, payload):
        if payload.data != b"tck/echo":
            return ErrorStream(PublisherError(f"no channel publisher {payload.data!r}")), None
        inbound = EchoSubscriber()
        return StreamFromAsyncGenerator(inbound.echoed), inbound

    async def on_metadata_push(self, payload):
        """Ignored: the connection stays up."""


async def serve(port):
    def session(*connection):
        RSocketServer(TransportTCP(*connection), handler_factory=Handler)

    server = await asyncio.start_server(session, "127.0.0.1", port)
    port = server.sockets[0].getsockname()[1]  # the one the system chose when asked for port 0
    print(f"rsocket-py server listening on 127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1] if len(sys.argv) > 1 else os.environ["RSIO_PORT"])))
