"""The RSocket model of one connection: both parties, the SETUP, keepalive, lease, errors and resumption.

Theory of operation: the judge (``judge.py``) hands every whole frame (fragments
already reassembled) and its sender to ``ConnectionModel``.  Connection frames
(SETUP, KEEPALIVE, LEASE, ERROR, METADATA_PUSH, RESUME, RESUME_OK, EXT and the
draft's SETUP_ERROR) are judged here; stream frames go on to ``interactions.py``,
which holds the streams and maps them onto the contract's table.  Every broken
rule is appended to ``found`` (MUST and SHOULD alike, the catalogue says which),
attributed to the side that broke it; nothing raises, so judging always goes on.

Obligations that a later frame settles are kept as state: the server owes an
ERROR for a bad first frame (RS-SETUP-9) or an unsupported version (RS-SETUP-6)
and an answer to a RESUME (RS-RESUME-6), a receiver owes ERROR[CONNECTION_ERROR]
after an invalid metadata length (RS-ERROR-8), a party owes the answer to a
KEEPALIVE with R (RS-KEEPALIVE-3).
``close`` reports those still owed when a side's transport ends.  Time comes with
the data (``t``, seconds, from the observer); the model holds no clock.  A time of
0 (or less) means "no time given": an event at such a time starts no deadline, so
a trace without times, or one mixing untimed and timed data, judges nothing by time.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from itertools import islice

from ...catalogue import RULES, Level
from ...errors import ProtocolViolation, Side
from .frames import (
    APPLICATION_ERROR,
    CANCELED,
    CONNECTION_CLOSE,
    CONNECTION_ERROR,
    ERROR_CODE_NAMES,
    INVALID,
    INVALID_SETUP,
    REJECTED,
    REJECTED_RESUME,
    REJECTED_SETUP,
    STREAM_ID_MAX,
    UNSUPPORTED_SETUP,
    Error,
    Ext,
    Keepalive,
    Lease,
    MetadataPush,
    Resume,
    ResumeOk,
    Setup,
    SetupError,
)

SETUP_CODES = frozenset({INVALID_SETUP, UNSUPPORTED_SETUP, REJECTED_SETUP, REJECTED_RESUME})
CONNECTION_CODES = SETUP_CODES | {CONNECTION_ERROR, CONNECTION_CLOSE}
STREAM_CODES = frozenset({APPLICATION_ERROR, REJECTED, CANCELED, INVALID})
SETUP_REFUSALS = frozenset({INVALID_SETUP, UNSUPPORTED_SETUP, REJECTED_SETUP})
# Violations whose frame the receiver must ignore (Handling the Unexpected): they give the receiver
# no protocol error to answer, so its ERROR on stream 0 after them still breaks RS-UNEXPECTED-1/-2.
IGNORED_VIOLATIONS = frozenset({"RS-SETUP-2", "RS-SETUP-3", "RS-ERROR-4", "RS-PUSH-1", "RS-STREAM-2", "RS-STREAMID-4"})
MAX_IGNORABLE = 1024  # ignorable frames remembered per receiver (RS-UNEXPECTED-1); more are not needed to judge
# KEEPALIVE answers a party owes that are remembered (their data and time, RS-KEEPALIVE-3); beyond them, answers
# owed are only counted, and judged again once the count is paid: a storm of KEEPALIVEs with R at a receiver that
# answers none (or is minutes behind) would otherwise hold a record of every one, without bound.
MAX_KEEPALIVES_OWED = 65_536


def error_code_reserved(code: int) -> bool:
    """Codes no one may send (RS-ERROR-3): 0, the ones reserved for future protocol use, 0xFFFFFFFF."""
    if code in CONNECTION_CODES or code in STREAM_CODES:
        return False
    return code <= 0x300 or code == 0xFFFFFFFF


@dataclass(slots=True)
class KeepaliveOwed:
    data: bytes
    t: float
    reported: bool = False


@dataclass(slots=True)
class Party:
    role: Side
    frames_sent: int = 0
    first_sent: bool = False  # it has sent a frame
    setups: int = 0
    resumed: bool = False  # client: opened with RESUME
    awaiting_resume_ok: bool = False  # client: RESUME sent, RESUME_OK not yet
    resume_ok_sent: bool = False  # server
    accepted: bool = False  # server: sent something other than a setup refusal (the connection is accepted)
    ended: int | None = None  # the code of its ERROR on stream 0 that ends the connection
    ended_reported: bool = False
    owes: str | None = None  # the rule by which it owes an ERROR on stream 0
    keepalive_owed: deque[KeepaliveOwed] = field(default_factory=deque)
    owed_in_order: bool = True  # keepalive_owed's times never decrease (known times, seen in order)
    owed_uncounted: int = 0  # answers owed past MAX_KEEPALIVES_OWED, all asked after those in keepalive_owed
    owed_reported: int = 0  # of keepalive_owed, the ones reported overdue (while in order: the first so many)
    last_alive_t: float | None = None  # client: its SETUP or last KEEPALIVE (None: no time known)
    last_position: int = 0
    lease_sent: bool = False
    lease_left: int | None = None  # as requester: requests left under the peer's last LEASE (None: none yet)
    lease_at: float = 0.0  # as requester: when the peer's last LEASE was seen (0 or less: no time given)
    lease_ttl: float = 0.0  # as requester: the seconds that LEASE is valid for from then
    last_stream_id: int = 0  # as requester
    ignored_stream_id: int = 0  # as requester: its last request the receiver must ignore (RS-IGNORE-2; RS-r)
    wrapped: bool = False  # as requester: it has used the max stream id (RS-a: reuse allowed from then on)
    ignorable: dict[int, str] = field(default_factory=dict)  # frames it received that it must ignore: stream -> rule
    closed: bool = False  # its transport ended
    push_unanswered: bool = False  # it received a METADATA_PUSH and has sent nothing since (RS-TCK-8)
    must_broken: int = 0  # MUST violations found against it (but those of frames the receiver must ignore)

    def lease_until(self, *, clocked: bool = False) -> float:
        """When the peer's last LEASE expires.  An observer's time of 0 means "no time given", so a LEASE
        seen then never expires (``clocked=False``, the judge's reading); a party with a clock of its own
        (an endpoint, whose clock may start at 0) reads ``lease_at`` as a time like any other, as the
        spec's "TTL from time of reception" says (``clocked=True``)."""
        if self.lease_at <= 0 and not clocked:
            return float("inf")
        return self.lease_at + self.lease_ttl


class ConnectionModel:
    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.draft = profile == "reactivesocket-draft"
        self.major = 0 if self.draft else 1
        self.parties = {side: Party(side) for side in Side}
        self.setup: Setup | None = None
        self.lease = False  # the SETUP set L
        self.resume = False  # resumption negotiated (a SETUP with a token) or a RESUME connection
        self.lifetime = 0.0  # the SETUP's max lifetime in seconds (0: unknown)
        self.found: list[ProtocolViolation] = []

    # -- reporting ---------------------------------------------------------------------

    def report(self, rule: str, side: Side, message: str) -> None:
        if RULES[rule].level is Level.MUST and rule not in IGNORED_VIOLATIONS:
            self.parties[side].must_broken += 1
        self.found.append(ProtocolViolation(rule=rule, side=side, message=f"{message}; rule: {RULES[rule].title}"))

    def report_violation(self, violation: ProtocolViolation) -> None:
        """A violation found below the model (the reassembler's), already attributed."""
        if violation.side is not None and RULES[violation.rule].level is Level.MUST:
            self.parties[violation.side].must_broken += 1
        self.found.append(violation)

    def ignorable(self, receiver: Side, stream_id: int, rule: str) -> None:
        """``receiver`` got a frame it must ignore; an ERROR answering it breaks ``rule``."""
        seen = self.parties[receiver].ignorable
        if len(seen) < MAX_IGNORABLE:
            seen.setdefault(stream_id, rule)

    # -- every frame ---------------------------------------------------------------------

    def before(self, sender: Side, frame: object, wire_name: str, stream_id: int) -> None:
        """What every frame is judged on first: its place in the connection's opening and closing."""
        party = self.parties[sender]
        client = self.parties[Side.CLIENT]
        party.frames_sent += 1
        if party.push_unanswered and not (isinstance(frame, Error) and stream_id == 0):
            party.push_unanswered = False  # it went on after the METADATA_PUSH
        if party.ended is not None and not party.ended_reported:
            party.ended_reported = True
            self.report("RS-ERROR-5", sender, f"{sender} sent {wire_name} after its ERROR["
                        f"{ERROR_CODE_NAMES.get(party.ended, hex(party.ended))}] on stream 0")
        if sender is Side.SERVER:
            if not client.first_sent and not party.first_sent:
                self.report("RS-SETUP-10", sender, f"server sent {wire_name} before the client's first frame")
            if party.owes in ("RS-SETUP-9", "RS-SETUP-6"):
                refusal = isinstance(frame, SetupError) or (
                    isinstance(frame, Error) and stream_id == 0
                    and (frame.error_code == INVALID_SETUP if party.owes == "RS-SETUP-9"
                         else frame.error_code in SETUP_REFUSALS))
                if not refusal:
                    why = ("the client's first frame was not SETUP or RESUME on stream 0"
                           if party.owes == "RS-SETUP-9" else "the client's SETUP has a version it does not speak")
                    self.report(party.owes, sender, f"server sent {wire_name} where it owed the setup refusal: {why}")
                party.owes = None
            elif party.owes == "RS-RESUME-6" and not isinstance(frame, Keepalive):
                if not (isinstance(frame, ResumeOk) or isinstance(frame, Error) and stream_id == 0):
                    self.report("RS-RESUME-6", sender, f"server sent {wire_name} before answering the client's RESUME")
                party.owes = None
            if not isinstance(frame, (Keepalive, Error, SetupError)):
                party.accepted = True  # a LEASE, a request, a response: the server took the SETUP
        elif not party.first_sent:
            self._first_client_frame(frame, wire_name, stream_id)
        elif party.awaiting_resume_ok:
            party.awaiting_resume_ok = False  # reported once; what follows is judged as usual
            self.report("RS-RESUME-2", sender, f"client sent {wire_name} after RESUME, before RESUME_OK")
        party.first_sent = True

    def _first_client_frame(self, frame: object, wire_name: str, stream_id: int) -> None:
        server = self.parties[Side.SERVER]
        if isinstance(frame, (Setup, Resume)) and stream_id == 0:
            return
        if not isinstance(frame, (Setup, Resume)):
            self.report("RS-SETUP-1", Side.CLIENT, f"client's first frame is {wire_name}, not SETUP or RESUME")
        server.owes = server.owes or "RS-SETUP-9"

    # -- connection frames -----------------------------------------------------------------

    def setup_frame(self, sender: Side, frame: Setup, t: float) -> None:
        party = self.parties[sender]
        if sender is Side.SERVER:
            self.report("RS-SETUP-3", sender, "server sent SETUP")
            self.ignorable(Side.CLIENT, 0, "RS-UNEXPECTED-2")
            return
        party.setups += 1
        if frame.stream_id != 0:
            self.report("RS-SETUP-4", sender, f"SETUP on stream {frame.stream_id}")
        if party.setups > 1 or party.resumed:
            self.report("RS-SETUP-2", sender, "client sent a second SETUP" if party.setups > 1
                        else "client sent SETUP after RESUME")
            self.ignorable(Side.SERVER, 0, "RS-UNEXPECTED-2")
            return
        self.setup = frame
        self.lease = frame.lease
        self.resume = self.resume or frame.resume_token is not None
        self.lifetime = frame.max_lifetime / (1e9 if self.draft else 1e3)
        party.last_alive_t = t if t > 0 else None
        if frame.keepalive_interval <= 0 or frame.max_lifetime <= 0:
            self.report("RS-SETUP-5", sender, f"SETUP with keepalive interval {frame.keepalive_interval} "
                        f"and max lifetime {frame.max_lifetime}")
        for what, mime in (("metadata", frame.metadata_mime), ("data", frame.data_mime)):
            if not mime or mime.endswith(b"\0"):
                self.report("RS-SETUP-7", sender, f"SETUP's {what} MIME type {mime!r} is empty or null-terminated")
            elif not mime.isascii():
                self.report("RS-SETUP-8", sender, f"SETUP's {what} MIME type {mime!r} is not US-ASCII")
        if frame.major_version > self.major:  # a lower version the server may accept (Cross version compatibility)
            server = self.parties[Side.SERVER]
            if not server.first_sent and server.owes is None:
                server.owes = "RS-SETUP-6"

    def keepalive_frame(self, sender: Side, frame: Keepalive, t: float) -> None:
        party, peer = self.parties[sender], self.parties[sender.peer]
        if frame.stream_id != 0:
            self.report("RS-KEEPALIVE-1", sender, f"KEEPALIVE on stream {frame.stream_id}")
        if sender is Side.CLIENT:
            party.last_alive_t = t if t > 0 else None
        if self.draft:
            # Seed 001: no R flag; the server answers every client KEEPALIVE.
            if sender is Side.CLIENT:
                self._owe(peer, frame.data, t)
            elif party.keepalive_owed or party.owed_uncounted:
                self._answered(party)
        elif frame.respond:
            self._owe(peer, frame.data, t)
        elif party.keepalive_owed or party.owed_uncounted:
            owed = self._answered(party)
            if owed is not None and frame.data != owed.data:
                self.report("RS-KEEPALIVE-3", sender, f"{sender}'s KEEPALIVE answer carries {len(frame.data)} bytes "
                            f"of data that do not echo the {len(owed.data)} bytes of the KEEPALIVE it answers")
        elif sender is Side.CLIENT:
            self.report("RS-KEEPALIVE-4", sender, "client initiated a KEEPALIVE without the R flag")
        if self.resume:
            if frame.last_received_position < party.last_position:
                self.report("RS-KEEPALIVE-5", sender, f"KEEPALIVE position {frame.last_received_position} is below "
                            f"{sender}'s previous {party.last_position}")
            party.last_position = max(party.last_position, frame.last_received_position)

    @staticmethod
    def _owe(party: Party, data: bytes, t: float) -> None:
        owed = party.keepalive_owed
        if party.owed_uncounted or len(owed) >= MAX_KEEPALIVES_OWED:
            party.owed_uncounted += 1  # after the ones counted only: the answers keep their order
            return
        if t <= 0 or (owed and t < owed[-1].t):
            party.owed_in_order = False  # a time unknown or out of order: ``tick`` reads the whole queue from now on
        owed.append(KeepaliveOwed(data, t))

    @staticmethod
    def _answered(party: Party) -> KeepaliveOwed | None:
        """The oldest answer ``party`` owed, now given: its record, or None for one only counted."""
        if party.keepalive_owed:
            owed = party.keepalive_owed.popleft()
            party.owed_reported -= owed.reported
            return owed
        party.owed_uncounted -= 1
        return None

    def lease_frame(self, sender: Side, frame: Lease, t: float) -> None:
        party, peer = self.parties[sender], self.parties[sender.peer]
        if frame.stream_id != 0:
            self.report("RS-LEASE-1", sender, f"LEASE on stream {frame.stream_id}")
        if not self.lease:
            self.report("RS-LEASE-2", sender, "LEASE on a connection whose SETUP did not set the L flag")
        party.lease_sent = True
        peer.lease_left = frame.number_of_requests  # the last LEASE overrides the previous ones
        peer.lease_at, peer.lease_ttl = t, frame.ttl / (1e9 if self.draft else 1e3)

    def lease_request(self, sender: Side, stream_id: int, wire_name: str, t: float) -> bool:
        """A request (its first fragment) under lease; True when its responder must reject it (RS-LEASE-5)."""
        if not self.lease:
            return False
        party = self.parties[sender]
        if party.lease_left is None:
            self.report("RS-LEASE-4", sender, f"{wire_name} on stream {stream_id} before any LEASE from the peer")
            return True
        if party.lease_left <= 0:
            self.report("RS-LEASE-4", sender, f"{wire_name} on stream {stream_id} with no request left in the lease")
            return True
        party.lease_left -= 1
        until = party.lease_until()
        if t > until:  # never for a LEASE seen with no time
            self.report("RS-LEASE-4", sender, f"{wire_name} on stream {stream_id} {t - until:.3f} s "
                        "after the lease expired")
        return False

    def error_frame(self, sender: Side, frame: Error | SetupError) -> None:
        """The connection-level judgement of an ERROR (any stream): code, data, and what it ends."""
        party, peer = self.parties[sender], self.parties[sender.peer]
        sid = frame.stream_id
        # The draft's SETUP_ERROR has its own code values; it is a setup refusal whatever its code.
        code = frame.error_code if isinstance(frame, Error) else INVALID_SETUP
        name = ERROR_CODE_NAMES.get(code, hex(code))
        if isinstance(frame, Error):
            if code in CONNECTION_CODES and sid != 0:
                self.report("RS-ERROR-1", sender, f"ERROR[{name}] on stream {sid}")
            if code in STREAM_CODES and sid == 0:
                self.report("RS-ERROR-2", sender, f"ERROR[{name}] on stream 0")
            if error_code_reserved(code):
                self.report("RS-ERROR-3", sender, f"ERROR with reserved code {code:#x}")
            if not self.draft:
                try:
                    frame.data.decode("utf-8")
                except UnicodeDecodeError:
                    self.report("RS-ERROR-6", sender, f"ERROR[{name}] data is not UTF-8")
                if frame.data.endswith(b"\0"):
                    self.report("RS-ERROR-7", sender, f"ERROR[{name}] data is null-terminated")
        if code in SETUP_CODES or isinstance(frame, SetupError):
            if sender is Side.CLIENT:
                self.report("RS-ERROR-4", sender, f"client sent ERROR[{name}], a setup error code")
                self.ignorable(Side.SERVER, 0, "RS-UNEXPECTED-2")
            elif party.accepted:
                self.report("RS-ERROR-4", sender, f"server sent ERROR[{name}] after it accepted the connection")
                self.ignorable(Side.CLIENT, 0, "RS-UNEXPECTED-2")
        if sender is Side.SERVER and peer.awaiting_resume_ok and code not in (CONNECTION_ERROR, REJECTED_RESUME):
            self.report("RS-RESUME-4", sender, f"server sent ERROR[{name}] during resumption")
        if sid != 0:
            return
        if party.push_unanswered:
            party.push_unanswered = False
            if code != CONNECTION_CLOSE and peer.must_broken == 0:
                self.report("RS-TCK-8", sender, f"{sender} answered a METADATA_PUSH with ERROR[{name}] on stream 0")
        if party.owes == "RS-ERROR-8" and code == CONNECTION_ERROR:
            party.owes = None
        elif (code != CONNECTION_CLOSE and party.ignorable and peer.must_broken == 0
              and party.owes is None and code not in SETUP_CODES):
            rule = next(iter(party.ignorable.values()))
            self.report(rule, sender, f"{sender} sent ERROR[{name}] on stream 0 after frames it must ignore, "
                        "with no protocol error of its peer to answer")
        if code != CONNECTION_CLOSE:
            party.ended = code

    def metadata_push_frame(self, sender: Side, frame: MetadataPush) -> None:
        if frame.stream_id != 0:
            self.report("RS-PUSH-1", sender, f"METADATA_PUSH on stream {frame.stream_id}")
            self.ignorable(sender.peer, frame.stream_id, "RS-UNEXPECTED-1")
        else:
            self.parties[sender.peer].push_unanswered = True

    def resume_frame(self, sender: Side, frame: Resume) -> None:
        party = self.parties[sender]
        if frame.stream_id != 0:
            self.report("RS-RESUME-5", sender, f"RESUME on stream {frame.stream_id}")
        if sender is Side.SERVER:
            self.report("RS-RESUME-1", sender, "server sent RESUME")
            return
        if party.frames_sent > 1:
            self.report("RS-RESUME-1", sender, "client sent RESUME after its first frame")
            return
        party.resumed = party.awaiting_resume_ok = True
        self.resume = True
        server = self.parties[Side.SERVER]
        if not server.first_sent and server.owes is None:
            server.owes = "RS-RESUME-6"  # RESUME_OK or an ERROR on stream 0 (its code: RS-RESUME-4)

    def resume_ok_frame(self, sender: Side, frame: ResumeOk) -> None:
        party, peer = self.parties[sender], self.parties[sender.peer]
        if frame.stream_id != 0:
            self.report("RS-RESUME-5", sender, f"RESUME_OK on stream {frame.stream_id}")
        if sender is Side.CLIENT:
            self.report("RS-RESUME-3", sender, "client sent RESUME_OK")
        elif not peer.resumed or party.resume_ok_sent:
            self.report("RS-RESUME-3", sender, "server sent RESUME_OK with no RESUME to answer"
                        if not peer.resumed else "server sent a second RESUME_OK")
        else:
            party.resume_ok_sent = True
            peer.awaiting_resume_ok = False

    def ext_frame(self, sender: Side, frame: Ext) -> None:
        if frame.extended_type <= 0:
            self.report("RS-FRAME-10", sender, f"EXT with Extended Type {frame.extended_type}")

    # -- time and closing ------------------------------------------------------------------

    def tick(self, t: float) -> None:
        """Time has reached ``t``: keepalives overdue by more than the max lifetime."""
        if self.lifetime <= 0:
            return
        client = self.parties[Side.CLIENT]
        if client.last_alive_t is None and client.first_sent and self.setup is not None:
            client.last_alive_t = t  # the first time known: the client's silence is measured from here
        if (client.last_alive_t is not None and t - client.last_alive_t > self.lifetime and client.ended is None
                and not client.closed):
            self.report("RS-KEEPALIVE-2", Side.CLIENT, f"client sent no KEEPALIVE for {t - client.last_alive_t:.3f} s, "
                        f"over the max lifetime {self.lifetime:.3f} s")
            client.last_alive_t = t
        for party in self.parties.values():
            if party.ended is not None or party.closed:
                continue  # a party that ended the connection owes no answer
            # In order, the ones reported are the first ``owed_reported``: skipped in C, not stepped through.
            in_order = party.owed_in_order
            for owed in islice(party.keepalive_owed, party.owed_reported if in_order else 0, None):
                if owed.t <= 0:
                    owed.t = t  # owed since a time unknown: measured from the first time known
                elif t - owed.t <= self.lifetime:
                    if in_order:
                        break  # the rest were owed later still: a keepalive storm's queue is not read each tick
                elif not owed.reported:
                    owed.reported = True
                    party.owed_reported += 1
                    self.report("RS-KEEPALIVE-3", party.role, f"{party.role} has not answered a KEEPALIVE for "
                                f"{t - owed.t:.3f} s, over the max lifetime {self.lifetime:.3f} s")

    def close(self, side: Side) -> None:
        party = self.parties[side]
        party.closed = True
        # A client may end its connection whenever it is done; a server closing on the client is an answer.
        if (party.push_unanswered and side is Side.SERVER and not self.parties[side.peer].closed
                and self.parties[side.peer].must_broken == 0):
            party.push_unanswered = False
            self.report("RS-TCK-8", side, f"{side} closed the connection after a METADATA_PUSH, sending nothing")
        if party.owes is not None:
            why = {"RS-SETUP-9": "without ERROR[INVALID_SETUP] for a connection opened by another frame",
                   "RS-SETUP-6": "without refusing a SETUP of a version it does not speak",
                   "RS-RESUME-6": "without answering the client's RESUME (RESUME_OK, or an ERROR such as REJECTED_RESUME)",
                   "RS-ERROR-8": "without ERROR[CONNECTION_ERROR] after a frame with an invalid metadata length"}
            self.report(party.owes, side, f"{side} closed {why[party.owes]}")
            party.owes = None
        server = self.parties[Side.SERVER]
        if self.lease and server.accepted and not party.lease_sent:
            party.lease_sent = True  # reported once
            self.report("RS-LEASE-3", side, f"{side} closed without ever sending LEASE on a connection whose "
                        "SETUP set the L flag")

    def wire_error(self, sender: Side, violation: ProtocolViolation) -> None:
        self.parties[sender].must_broken += 1
        receiver = self.parties[sender.peer]
        if violation.rule == "RS-FRAME-5" and receiver.owes is None and receiver.ended is None:
            receiver.owes = "RS-ERROR-8"


def max_stream_id(side: Side) -> int:
    """The highest stream id ``side`` can use as requester (2^31-1 odd for the client, 2^31-2 even for the server)."""
    return STREAM_ID_MAX if side is Side.CLIENT else STREAM_ID_MAX - 1
