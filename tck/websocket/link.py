"""One side of a WebSocket connection carrying a binding's byte stream (sans-IO), and a passive observer.

``WebSocketLink(role, framing, ...)`` wraps the ``websockets`` sans-IO protocol of
that role.  ``receive_data(bytes)`` returns the binding's byte stream those bytes
completed (messages unwrapped by ``framing.incoming``); ``send(stream bytes)``
queues the binding's stream as messages (``framing.outgoing``); ``data_to_send()``
gives the raw bytes to write, ``b""`` meaning "end the TCP stream" (websockets'
convention).  The client sends the opening handshake at once and queues the
stream until the server accepted it; the server answers the handshake itself
(404 for another path).  ``opened`` says the handshake completed.

Failures never raise out of ``receive_data``: ``failure`` (a ``WebSocketError``)
is set once, the close frame with its RFC 6455 code is queued, and nothing more
is read.  Codes: 1002 a malformed frame (websockets' parser: reserved bits or
opcodes, a server's unmasked or a client's masked frame, bad fragmentation),
1003 a message of the wrong type for the binding, 1007 a text message that is
not UTF-8 or a message the binding cannot take, 1009 a message over
``framing.max_message`` (judged on the frame header, before the payload is read) or in more
than ``MAX_MESSAGE_FRAMES`` frames; 1008 more than ``MAX_CONTROL_IN_A_ROW`` pings or
pongs in a row (a ping flood).

``Observer(framing)`` reads both directions of a connection relayed unchanged (the
proxy): a server protocol reads the client's bytes, a client protocol the server's
(given the key of the observed request, so it checks the server's accept header);
whatever they would write is dropped.  ``held`` is what it keeps of messages not yet
whole, both directions: the frame each parser is reading and each message being joined.
"""

from __future__ import annotations

import codecs
import logging
from typing import Any

from websockets.client import ClientProtocol
from websockets.exceptions import InvalidHandshake, PayloadTooBig
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from ..errors import ProtocolViolation, Side
from .framing import Framing, WebSocketError

# Frames one message may come in.  RFC 6455 sets no limit, so this is the kit's, as ``max_message`` is: a
# sender that cuts its largest message (16 MiB) in 1 KiB fragments stays under it, and a peer that sends a
# message in 10^6 one-byte continuation frames (each one a websockets ``Frame`` to parse) is closed with
# 1009 ("too big to process") after this many, in milliseconds, not after a minute of parsing.
MAX_MESSAGE_FRAMES = 16_384

# Control frames (pings, pongs) in a row with no data frame between.  RFC 6455 sets no limit; each costs a
# websockets ``Frame`` to parse and a pong to write, so a peer flooding pings (256 KiB a read, 2 bytes a
# ping: over 100,000 frames, seconds of parsing in one call) is closed with 1008 after this many.  Bytes are
# fed to the parser in ``FEED_SLICE`` pieces, so no more than about this many are parsed before it is seen.
MAX_CONTROL_IN_A_ROW = 4096
FEED_SLICE = 8 * 1024

LOG = logging.getLogger("rsio_tck.websocket")
LOG.setLevel(logging.WARNING)  # websockets logs every close at INFO


def too_big(framing: Framing, message: str) -> WebSocketError:
    """A message over ``framing.max_message`` (1009): it breaks the binding's size rule, the receiver's maximum
    (``framing.size_rule``, its side set by whoever judges it); with none, the limit is the kit's own, and what
    the peer does after the close is not charged (``kit_limit``)."""
    rule = framing.size_rule
    if rule is None:
        return WebSocketError(f"{message} (the kit's limit)", 1009, kit_limit=True)
    return WebSocketError(message, 1009, ProtocolViolation(rule=rule, side=None, message=message))


def _parser_too_big(framing: Framing, sender: str, exc: PayloadTooBig) -> WebSocketError:
    """websockets' parser refused a frame (its header, or the message so far) over ``framing.max_message``."""
    return too_big(framing, f"the {sender} sent a message over {framing.max_message} bytes ({_one_line(exc)})")


class _Messages:
    """Joins data frames into messages and unwraps them with the framing; the first failure sticks.

    A byte-stream framing (``framing.stream``: RS-IO's) joins nothing: each data frame's bytes are the
    binding's stream as they arrive, so a message in a million one-byte continuations is read, and
    judged, at its first bytes, not after the last (the message is still bounded by ``max_message``).
    """

    def __init__(self, framing: Framing, sender: str) -> None:
        self.framing = framing
        self.sender = sender  # who sent the frames, for messages: "client", "server", "peer"
        self.stream = bool(getattr(framing, "stream", False))
        self.size = 0  # bytes of the message in progress (a stream framing keeps none of them)
        self.kind: Opcode | None = None
        # The message in progress, one buffer: a list of frames' bytes costs ~40 bytes a frame on top (a message
        # in 10^6 one-byte continuations was 40 MB before its size was even checked).
        self.parts = bytearray()
        self.frames = 0  # frames of the message in progress
        self.control_in_a_row = 0  # pings and pongs since the sender's last data frame
        self.text = codecs.getincrementaldecoder("utf-8")()

    def frame(self, frame: Frame) -> bytes | WebSocketError:
        opcode = frame.opcode
        if opcode in (Opcode.PING, Opcode.PONG):
            self.control_in_a_row += 1
            if self.control_in_a_row > MAX_CONTROL_IN_A_ROW:
                return WebSocketError(f"the {self.sender} sent more than {MAX_CONTROL_IN_A_ROW} pings or pongs in a "
                                      "row, with no message between (the kit's limit; RFC 6455 sets none)", 1008,
                                      kit_limit=True)
            return b""
        self.control_in_a_row = 0
        if opcode in (Opcode.TEXT, Opcode.BINARY):
            self.kind = opcode
            self.frames = 0
            want = Opcode.TEXT if self.framing.message_type == "text" else Opcode.BINARY
            if opcode is not want:
                got = "text" if opcode is Opcode.TEXT else "binary"
                message = (f"the {self.sender} sent a {got} message; this binding carries "
                           f"{self.framing.message_type} messages only")
                rule = self.framing.rule
                violation = ProtocolViolation(rule=rule, side=None, message=message) if rule else None
                return WebSocketError(message, 1003, violation)
        elif opcode is not Opcode.CONT or self.kind is None:
            return b""
        if self.kind is Opcode.TEXT:
            try:
                self.text.decode(frame.data, final=frame.fin)
            except UnicodeDecodeError as exc:
                return WebSocketError(f"the {self.sender} sent a text message that is not UTF-8 "
                                      f"({exc.reason} at byte {exc.start} of a frame)", 1007)
        # websockets' sans-IO parser checks ``max_size`` per frame only: the whole message is checked here,
        # before its bytes are kept, so continuation frames cannot grow it past the framing's limit (1009).
        self.size += len(frame.data)
        if self.size > self.framing.max_message:
            return too_big(self.framing, f"the {self.sender} sent a message of more than {self.framing.max_message} "
                                         "bytes in continuation frames")
        self.frames += 1
        if self.frames > MAX_MESSAGE_FRAMES:
            return WebSocketError(f"the {self.sender} sent a message in more than {MAX_MESSAGE_FRAMES} frames (the "
                                  "kit's limit; RFC 6455 sets none)", 1009, kit_limit=True)
        if self.stream:
            kind = self.kind
            if frame.fin:
                self.kind, self.size = None, 0
            return self._incoming(bytes(frame.data), kind)
        self.parts += frame.data
        if not frame.fin:
            return b""
        data, kind, self.kind, self.size = bytes(self.parts), self.kind, None, 0
        self.parts.clear()
        self.text.reset()
        return self._incoming(data, kind)

    def _incoming(self, data: bytes, kind: Opcode | None) -> bytes | WebSocketError:
        try:
            return self.framing.incoming(data.decode() if kind is Opcode.TEXT else data)
        except ProtocolViolation as violation:
            return WebSocketError(f"the {self.sender} sent a message the binding cannot take: {violation}",
                                  1007, violation)


def _one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__
    if cause is not None and str(cause):
        text = f"{text}: {cause}"
    return " ".join(text.split())


class WebSocketLink:
    def __init__(self, role: Side, framing: Framing, *, uri: str = "", path: str | None = None) -> None:
        self.role = role
        self.framing = framing
        self.path = path  # the server's path (None: any); the client's request names its own
        peer = "server" if role is Side.CLIENT else "client"
        self.ws: ClientProtocol | ServerProtocol
        if role is Side.CLIENT:
            self.ws = ClientProtocol(parse_uri(uri), max_size=framing.max_message, logger=LOG)
            self.ws.send_request(self.ws.connect())
        else:
            self.ws = ServerProtocol(max_size=framing.max_message, logger=LOG)
        self.messages = _Messages(framing, peer)
        self.peer = peer
        self.opened = False
        self.request_path: str | None = None
        self.failure: WebSocketError | None = None
        self.close_received = False  # the peer's close frame came (its stream ended)
        # The last bytes received went toward a message not yet whole (a frame the parser still holds, or a
        # data frame without FIN): what the session's silence clock counts, though no stream came of them.
        self.partial = False
        self._waiting = bytearray()  # the stream sent before the handshake completed

    # -- receiving ---------------------------------------------------------------------

    def receive_data(self, data: bytes) -> bytes:
        if self.failure is not None:
            return b""
        if len(data) <= FEED_SLICE:
            self.ws.receive_data(data)
            return self._events()
        out = bytearray()
        partial = False
        for start in range(0, len(data), FEED_SLICE):  # a slice at a time: a flood is seen before all is parsed
            self.ws.receive_data(data[start:start + FEED_SLICE])
            out += self._events()
            partial = partial or self.partial
            if self.failure is not None:
                break
        self.partial = partial and not out
        return bytes(out)

    def receive_eof(self) -> bytes:
        if self.ws.state is not State.CLOSED:
            self.ws.receive_eof()
        out = self._events()
        if self.failure is None and not self.close_received and not self.opened:
            self.failure = WebSocketError(f"the {self.peer} ended the connection during the opening handshake")
        return out

    def _events(self) -> bytes:
        out = bytearray()
        events = self.ws.events_received()
        # No event: the bytes wait in the parser as part of a frame.  A ping or pong alone is not toward a message.
        self.partial = self.opened and not events
        for event in events:
            if isinstance(event, Request):
                self._answer(event)
            elif isinstance(event, Response):
                self._accepted(event)
            elif isinstance(event, Frame) and self.failure is None:
                if event.opcode is Opcode.CLOSE:
                    self.close_received = True
                    continue
                if event.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT) and not event.fin:
                    self.partial = True
                got = self.messages.frame(event)
                if isinstance(got, WebSocketError):
                    self._fail(got)
                else:
                    out += got
        exc = self.ws.parser_exc or self.ws.handshake_exc
        if isinstance(exc, EOFError) and self.opened:
            exc = None  # TCP ended without a Close frame (1006): the binding's stream ends, as on TCP
        if isinstance(exc, PayloadTooBig) and self.failure is None:
            self.failure = _parser_too_big(self.framing, self.peer, exc)
        elif exc is not None and self.failure is None:
            sent = self.ws.close_sent
            code = sent.code if sent is not None else None
            kind = "a malformed WebSocket frame" if self.opened else "a failed WebSocket opening handshake"
            self.failure = WebSocketError(f"{kind} from the {self.peer}: {_one_line(exc)}", code)
        return bytes(out)

    def _answer(self, request: Request) -> None:
        assert isinstance(self.ws, ServerProtocol)
        self.request_path = request.path
        wanted = self.path
        if wanted and request.path.split("?", 1)[0] != wanted:
            response = self.ws.reject(404, f"no WebSocket endpoint at {request.path}; try {wanted}\n")
            self.failure = WebSocketError(f"the client asked for {request.path}, not {wanted} (HTTP 404)")
        else:
            response = self.ws.accept(request)
        self.ws.send_response(response)
        if response.status_code == 101:
            self._open()
        elif self.failure is None:
            self.failure = WebSocketError(f"the client's opening handshake failed: HTTP {response.status_code} "
                                          f"{_one_line(self.ws.handshake_exc or Exception(response.reason_phrase))}")

    def _accepted(self, response: Response) -> None:
        if self.ws.handshake_exc is None:  # accepted (a frame read with it may have failed the link since)
            self._open()
        elif self.failure is None:
            why = _one_line(self.ws.handshake_exc or InvalidHandshake("refused"))
            self.failure = WebSocketError(f"the server refused the WebSocket opening handshake: "
                                          f"HTTP {response.status_code} {response.reason_phrase}: {why}")

    def _open(self) -> None:
        self.opened = True
        if self._waiting:
            waiting, self._waiting = bytes(self._waiting), bytearray()
            self.send(waiting)

    def _fail(self, failure: WebSocketError) -> None:
        self.failure = failure
        if self.ws.state is State.OPEN and failure.close_code:
            self.ws.fail(failure.close_code, str(failure.args[0])[:120])

    # -- sending -----------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Queue the binding's stream bytes as messages (before the handshake: once it completes)."""
        if not data:
            return
        if not self.opened:
            self._waiting += data
            return
        if self.ws.state is not State.OPEN:
            return  # closing: RFC 6455 allows no more data frames
        text = self.framing.message_type == "text"
        for message in self.framing.outgoing(data):
            if text:
                self.ws.send_text(message.encode() if isinstance(message, str) else message)
            else:
                self.ws.send_binary(message.encode() if isinstance(message, str) else message)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Start the closing handshake (or, before the handshake completed, end the TCP stream)."""
        if self.ws.state is State.OPEN:
            self.ws.send_close(code, reason)
        elif self.ws.state is State.CONNECTING and not self.ws.eof_sent:
            self.ws.send_eof()

    def data_to_send(self) -> list[bytes]:
        return self.ws.data_to_send()

    @property
    def closed(self) -> bool:
        return self.ws.state is State.CLOSED


class Observer:
    """Both directions of a WebSocket connection relayed unchanged: the binding's stream per sender."""

    def __init__(self, framing: Framing, path: str | None = None) -> None:
        self.framing = framing
        self.server_side = ServerProtocol(max_size=framing.max_message, logger=LOG)  # reads the client's bytes
        self.client_side = ClientProtocol(parse_uri("ws://observer/"), max_size=framing.max_message, logger=LOG)
        self.messages = {Side.CLIENT: _Messages(framing, "client"), Side.SERVER: _Messages(framing, "server")}
        self.failure: dict[Side, WebSocketError] = {}
        self.path = path
        self.ended: set[Side] = set()

    def feed(self, sender: Side, data: bytes) -> bytes:
        if sender in self.failure or sender in self.ended:
            return b""
        ws: Any = self.server_side if sender is Side.CLIENT else self.client_side
        ws.receive_data(data)
        out = bytearray()
        for event in ws.events_received():
            if isinstance(event, Request):
                self.client_side.key = event.headers.get("Sec-WebSocket-Key", "")
                self.server_side.send_response(self.server_side.accept(event))
            elif isinstance(event, Frame):
                if event.opcode is Opcode.CLOSE:
                    self.ended.add(sender)
                    break
                got = self.messages[sender].frame(event)
                if isinstance(got, WebSocketError):
                    self.failure[sender] = got
                    break
                out += got
        exc = ws.parser_exc or ws.handshake_exc
        name = "client" if sender is Side.CLIENT else "server"
        if isinstance(exc, PayloadTooBig) and sender not in self.failure:
            self.failure[sender] = _parser_too_big(self.framing, name, exc)
        elif exc is not None and sender not in self.failure:
            self.failure[sender] = WebSocketError(f"the {name} sent bytes that are not WebSocket: {_one_line(exc)}")
        self.server_side.data_to_send()
        self.client_side.data_to_send()  # what the observers would answer is never sent
        return bytes(out)

    @property
    def held(self) -> int:
        """Bytes kept toward messages not yet whole, both directions: the bytes each parser holds (a frame in
        progress, up to ``framing.max_message``) and each message being joined from its frames."""
        return (len(self.server_side.reader.buffer) + len(self.client_side.reader.buffer)
                + len(self.messages[Side.CLIENT].parts) + len(self.messages[Side.SERVER].parts))

    def past_a_limit(self, sender: Side) -> bool:
        """Whether ``sender`` went past a limit of the kit's own (``MAX_CONTROL_IN_A_ROW``, ``MAX_MESSAGE_FRAMES``:
        its messages' ``WebSocketError.kit_limit``): a peer that then closes (as the kit's own endpoints do,
        with 1008 or 1009) owes nothing it owed before."""
        failure = self.failure.get(sender)
        return failure is not None and failure.kit_limit


def is_websocket_trace(records: list[Any]) -> bool:
    """Whether a connection's trace (``TraceRecord``s) opens with a WebSocket upgrade request."""
    first = next((r for r in records if r.data), None)
    return (first is not None and first.sender is Side.CLIENT and first.data.startswith(b"GET ")
            and b"upgrade: websocket" in first.data[:4096].lower())


def unwrap_trace(records: list[Any], framing_factory: Any) -> tuple[list[Any], list[str]]:
    """A WebSocket connection's raw trace as the binding's stream (what the monitor judges), and notes
    for a side whose WebSocket failed (its later bytes are left out)."""
    from ..monitor.trace import TraceRecord

    observer = Observer(framing_factory())
    out: list[Any] = []
    for record in records:
        if record.data is None:
            out.append(record)
            continue
        stream = observer.feed(record.sender, record.data)
        if stream:
            out.append(TraceRecord(t=record.t, sender=record.sender, data=stream))
    notes = [f"{side}: WebSocket: {failure}" for side, failure in observer.failure.items()]
    return out, notes
