"""RSocket fuzz programs: hypothesis strategies over frame sequences a requester sends, legal and mutated.

Theory of operation.  Two levels, both plain data drawn by hypothesis, so both shrink:

- *Scripts* (``scripts(profile)``): what the kit, as the client (requester), writes on
  one connection: SETUP, then interactions on fresh odd stream ids (request-stream,
  request-response, fire-and-forget, request-channel in 1.0, the draft's
  request-subscription), REQUEST_N and CANCEL on streams still open, METADATA_PUSH,
  KEEPALIVE, fragmented requests (1.0).  A ``Script`` is legal (``rule`` None), or
  legal up to one *mutation* at its end, which breaks exactly the rule it names:
  a reused, even or zero stream id, request N = 0, a fragment chain broken by
  another frame, an unknown frame type (with the I flag: ignored, so still legal),
  a reserved bit, a length prefix shorter than a header, bytes after a frame's
  last field, METADATA_PUSH without M, a metadata length past the frame, a frame
  cut short by the end of the transport.  The malformed frames are built with the
  scapy layer (``scapy_layer.py``) from a legal frame by setting one field wrong.  ``script.wire(profile)`` is the bytes; a script decodes
  with the profile's codec and is judged by the binding's judge (tests hold both).
- *Programs* (``fuzz_programs(profile, reassembly_limit)``): the scenarios the
  binding-neutral fuzz engine (``rsio_tck.fuzz``) runs against a live target.
  Each is a few episodes whose every expectation holds for a conforming
  responder (bindings.md section 2 test publishers, through the contract steps
  ``subscribe``/``request``/``cancel`` the RSocket scenario adapter maps onto
  REQUEST_STREAM/REQUEST_N/CANCEL), and an ending: close quietly, or send a
  mutated script's last frame as raw bytes (``send_hex``), after which the oracle
  is "ERROR[CONNECTION_ERROR] on stream 0, close, and a fresh connection still
  works" -- or, for a mutation the responder must ignore, that the connection
  still serves a request.  A failing program, shrunk, is the regression scenario.

Rule IDs of the session level (stream ids, request N) are the binding's catalogue
entries (``rsio_tck.catalogue``); ``MUTATIONS`` names them in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from ...semantics.demand import saturating_add
from .fragments import fragment
from .frames import (
    REQUEST_N_MAX,
    Cancel,
    Decoded,
    Keepalive,
    MetadataPush,
    RequestChannel,
    RequestFnf,
    RequestN,
    RequestResponse,
    RequestStream,
    RequestSubscription,
    Setup,
)

V1, DRAFT = "rsocket-1.0", "reactivesocket-draft"
Draw = Any

# mutation kind -> the rule it breaks (None: the receiver must ignore it, so the script stays legal).
MUTATIONS: dict[str, str | None] = {
    "reused-id": "RS-STREAMID-3",  # a request on a stream id whose stream ended (cancelled, fire-and-forget)
    "in-use-id": "RS-STREAMID-4",  # a request on a stream id still in use
    "even-id": "RS-STREAMID-1",  # the client's request on an even stream id
    "zero-id": "RS-STREAMID-1",  # a request on stream 0
    "initial-n-zero": "RS-FLOW-1",  # REQUEST_STREAM with initial request N = 0
    "request-n-zero": "RS-FLOW-1",  # REQUEST_N with N = 0
    "fragments-broken": "RS-FRAG-1",  # a fragmented request interrupted by REQUEST_N or another request on its stream
    "unknown-type": "RS-FRAME-4",  # an unknown frame type without the I flag
    "unknown-type-ignored": None,  # the same with the I flag: ignored (RS-IGNORE-1)
    "reserved-bit": "RS-FRAME-3",  # the reserved bit before the stream id (the draft's before the length)
    "reserved-field-bit": "RS-FRAME-3",  # 1.0: the reserved bit of REQUEST_STREAM's 31-bit initial request N
    "short-length": "RS-FRAME-1",  # a length prefix announcing less than a frame header
    "trailing-bytes": "RS-FRAME-7",  # bytes after the last field of CANCEL or REQUEST_N
    "push-without-m": "RS-FRAME-9",  # METADATA_PUSH without the M flag
    "metadata-overrun": "RS-FRAME-5",  # 1.0: a metadata length past the end of the frame
    "truncated": "RS-FRAME-8",  # the transport ends inside the last frame
}
# Mutations a profile has no form for: the draft has no F flag on requests, its metadata
# overrun makes the frame ignored (RS-DRAFT-2, not a finding), and the kit's catalogue
# judges stream id parity on 1.0 only (seed 001 names no parity rule).
NOT_IN = {DRAFT: frozenset({"fragments-broken", "metadata-overrun", "reserved-field-bit", "even-id", "zero-id"})}
WIRE_MUTATIONS = frozenset({"unknown-type", "unknown-type-ignored", "reserved-bit", "reserved-field-bit",
                            "short-length", "trailing-bytes", "push-without-m", "metadata-overrun", "truncated"})


@dataclass(frozen=True)
class Script:
    """Frames the kit sends as a requester, then optional raw bytes (a mutation the codec cannot build)."""

    frames: tuple[Decoded, ...]
    tail: bytes = b""  # written after the frames: malformed or cut-off bytes
    kind: str = "legal"  # "legal" or a key of MUTATIONS
    open_streams: tuple[int, ...] = ()  # request-stream/channel ids still open after the legal part

    @property
    def rule(self) -> str | None:
        """The rule the script breaks (None: a conforming receiver must accept or ignore all of it)."""
        return None if self.kind == "legal" else MUTATIONS[self.kind]

    def wire(self, profile: str) -> bytes:
        from .profiles import get_profile

        encoder = get_profile(profile).encoder()
        return b"".join(encoder.encode(frame) for frame in self.frames) + self.tail


# -- legal sequences ---------------------------------------------------------------------------

names = st.sampled_from(("tck/range?count=3", "tck/infinite", "tck/error?after=1", "tck/large?size=300&count=2",
                         "tck/nothing", "bench"))
small_n = st.sampled_from((1, 2, 3, 16, REQUEST_N_MAX))
metadata = st.none() | st.sampled_from((b"", b"m", b"routing"))


@dataclass
class _State:
    profile: str
    next_id: int = 1
    in_use: list[int] = field(default_factory=list)  # streams not ended from the requester's point of view
    ended: list[int] = field(default_factory=list)  # cancelled, or fire-and-forget
    open_: list[int] = field(default_factory=list)  # request-stream/channel ids the requester may still signal
    sending: set[int] = field(default_factory=set)  # channels whose requester side has not completed

    def fresh(self, ends: bool = False) -> int:
        sid = self.next_id
        self.next_id += 2
        (self.ended if ends else self.in_use).append(sid)
        return sid


def _setup(profile: str) -> Setup:
    return Setup(major_version=1 if profile == V1 else 0, keepalive_interval=30_000, max_lifetime=90_000,
                 metadata_mime=b"application/octet-stream", data_mime=b"text/plain")


def _interaction(draw: Draw, state: _State) -> list[Decoded]:
    kinds = ["stream", "response", "fnf", "push", "keepalive"]
    kinds += ["channel", "fragmented"] if state.profile == V1 else ["subscription"]
    if state.open_:
        kinds += ["request-n", "cancel"]
    kind = draw(st.sampled_from(kinds))
    data = draw(names).encode()
    if kind == "stream":
        sid = state.fresh()
        state.open_.append(sid)
        return [RequestStream(stream_id=sid, initial_request_n=draw(small_n), metadata=draw(metadata), data=data)]
    if kind == "subscription":
        sid = state.fresh()
        state.open_.append(sid)
        return [RequestSubscription(stream_id=sid, initial_request_n=draw(small_n), data=data)]
    if kind == "channel":
        sid = state.fresh()
        state.open_.append(sid)
        complete = draw(st.booleans())
        if not complete:
            state.sending.add(sid)
        return [RequestChannel(stream_id=sid, initial_request_n=draw(small_n), complete=complete, data=b"tck/echo")]
    if kind == "response":
        return [RequestResponse(stream_id=state.fresh(), metadata=draw(metadata), data=data)]
    if kind == "fnf":
        return [RequestFnf(stream_id=state.fresh(ends=True), data=b"tck/fnf?key=" + draw(st.sampled_from((b"a", b"k"))))]
    if kind == "fragmented":
        sid = state.fresh()
        state.open_.append(sid)
        whole = RequestStream(stream_id=sid, initial_request_n=draw(small_n), metadata=draw(metadata),
                              data=data + b"&pad=" + b"x" * draw(st.integers(0, 40)))
        return list(fragment(whole, draw(st.integers(1, 16))))
    if kind == "push":
        return [MetadataPush(metadata=draw(st.sampled_from((b"x", b"routing"))))]
    if kind == "keepalive":
        return [Keepalive(respond=state.profile == V1, data=draw(st.sampled_from((b"", b"ka"))))]
    sid = draw(st.sampled_from(state.open_))
    if kind == "request-n":
        return [RequestN(stream_id=sid, request_n=draw(small_n))]
    state.open_.remove(sid)
    if sid not in state.sending:  # a channel stays in use while its requester side may still send
        state.in_use.remove(sid)
        state.ended.append(sid)
    return [Cancel(stream_id=sid)]


def _legal(draw: Draw, profile: str) -> tuple[list[Decoded], _State]:
    state = _State(profile)
    frames: list[Decoded] = [_setup(profile)]
    for _ in range(draw(st.integers(0, 6))):
        frames += _interaction(draw, state)
    return frames, state


# -- mutations --------------------------------------------------------------------------------


def _wire_mutation(draw: Draw, profile: str, kind: str, state: _State) -> bytes:
    """The raw bytes of a ``WIRE_MUTATIONS`` kind: a legal frame's scapy packet with one field set wrong
    (``scapy_layer``: every length and reserved bit is a field), or cut short."""
    from scapy.packet import Raw

    from .scapy_layer import PACKETS, from_frame

    framed = PACKETS[profile][0]
    sid = state.fresh()
    n = draw(small_n)
    if kind in ("unknown-type", "unknown-type-ignored"):
        codes = (0x00, 0x0F, 0x10, 0x20, 0x3E) if profile == V1 else (0x0000, 0x0005, 0x0017, 0x0100, 0xFFFE)
        flags = "I" if kind == "unknown-type-ignored" else 0
        return bytes(framed(stream_id=sid, frame_type=draw(st.sampled_from(codes)), flags=flags)
                     / Raw(draw(st.binary(max_size=8))))
    if kind == "metadata-overrun":
        pkt = from_frame(RequestStream(stream_id=sid, initial_request_n=n, metadata=b"m", data=b"tck/infinite"))
        pkt.payload.metadata_len = draw(st.integers(len(b"m" + b"tck/infinite") + 1, 2**24 - 1))
        return bytes(pkt)
    if kind == "reserved-field-bit":
        pkt = from_frame(RequestStream(stream_id=sid, initial_request_n=n, data=b"tck/infinite"))
        pkt.payload.reserved_initial_request_n = 1
        return bytes(pkt)
    if kind == "short-length":
        pkt = from_frame(RequestStream(stream_id=sid, initial_request_n=n, data=b"tck/infinite"), profile=profile)
        pkt.length = draw(st.integers(0, 5 if profile == V1 else 15))  # below the header (the draft's counts itself)
        return bytes(pkt)
    if kind == "trailing-bytes":
        frame = draw(st.sampled_from((Cancel(stream_id=sid), RequestN(stream_id=sid, request_n=n))))
        pkt = from_frame(frame, profile=profile)
        pkt.length = None
        return bytes(pkt / Raw(draw(st.binary(min_size=1, max_size=4))))
    if kind == "push-without-m":
        pkt = from_frame(MetadataPush(metadata=b"routing"), profile=profile)
        pkt.flags = 0
        return bytes(pkt)
    pkt = from_frame(RequestStream(stream_id=sid, initial_request_n=n, data=b"tck/infinite"), profile=profile)
    if kind == "reserved-bit":  # 1.0: before the stream id; the draft: before the frame length
        pkt.reserved = 1
        return bytes(pkt)
    raw = bytes(pkt)  # truncated
    return raw[: draw(st.integers(1, len(raw) - 1))]


def _session_mutation(draw: Draw, kind: str, state: _State) -> list[Decoded]:
    n = draw(small_n)
    if kind in ("reused-id", "in-use-id"):
        pool = state.ended if kind == "reused-id" else state.in_use
        return [RequestStream(stream_id=draw(st.sampled_from(pool)), initial_request_n=n, data=b"tck/infinite")]
    if kind in ("even-id", "zero-id"):
        sid = 0 if kind == "zero-id" else draw(st.sampled_from((2, 4, state.next_id + 1)))
        return [RequestStream(stream_id=sid, initial_request_n=n, data=b"tck/infinite")]
    if kind == "initial-n-zero":
        return [RequestStream(stream_id=state.fresh(), initial_request_n=0, data=b"tck/infinite")]
    if kind == "request-n-zero":
        sid = draw(st.sampled_from(state.open_)) if state.open_ else state.fresh()
        opening: list[Decoded] = [] if state.open_ else [RequestStream(stream_id=sid, initial_request_n=n,
                                                                       data=b"tck/infinite")]
        return [*opening, RequestN(stream_id=sid, request_n=0)]
    # fragments-broken: a fragmented request whose chain another frame on its stream breaks.
    sid = state.fresh()
    first = fragment(RequestStream(stream_id=sid, initial_request_n=n, data=b"tck/infinite&pad=xxxxxxxx"), 4)[0]
    breaker = draw(st.sampled_from((RequestN(stream_id=sid, request_n=1),
                                    RequestStream(stream_id=sid, initial_request_n=1, data=b"x"),
                                    RequestResponse(stream_id=sid, data=b"x"), RequestFnf(stream_id=sid, data=b"x"))))
    return [first, breaker]


@st.composite
def legal_scripts(draw: Draw, profile: str = V1) -> Script:
    frames, state = _legal(draw, profile)
    return Script(tuple(frames), open_streams=tuple(state.open_))


@st.composite
def mutated_scripts(draw: Draw, profile: str = V1, kinds: tuple[str, ...] | None = None) -> Script:
    """A legal script with one mutation at its end; ``kinds`` limits the mutations drawn."""
    frames, state = _legal(draw, profile)
    allowed = [k for k in (kinds or tuple(MUTATIONS)) if k not in NOT_IN.get(profile, ())]
    if not state.ended:
        allowed = [k for k in allowed if k != "reused-id"]
    if not state.in_use:
        allowed = [k for k in allowed if k != "in-use-id"]
    kind = draw(st.sampled_from(allowed))
    open_streams = tuple(state.open_)
    if kind in WIRE_MUTATIONS:
        return Script(tuple(frames), _wire_mutation(draw, profile, kind, state), kind, open_streams)
    return Script((*frames, *_session_mutation(draw, kind, state)), kind=kind, open_streams=open_streams)


def scripts(profile: str = V1) -> st.SearchStrategy[Script]:
    """Legal scripts and mutated ones, about half each."""
    return st.one_of(legal_scripts(profile), mutated_scripts(profile))


# -- programs for the fuzz engine ---------------------------------------------------------------


def _opened(sub: int) -> dict[str, Any]:
    """RSocket opens a stream with its request: the adapter's synthetic onSubscribe, taken at once."""
    return {"expect": {"onSubscribe": {"subscriber": sub}}}


def _stream_episode(draw: Draw, sub: int) -> list[dict[str, Any]]:
    """Subscribe to ``tck/range`` and follow it through a demand plan (contract steps)."""
    count = draw(st.integers(0, 8))
    demands = draw(st.lists(st.sampled_from((1, 2, 3, 5, REQUEST_N_MAX)), min_size=1, max_size=3))
    steps: list[dict[str, Any]] = [{"send": {"subscribe": {"publisher": f"tck/range?count={count}", "subscriber": sub,
                                                           "initialDemand": demands[0]}}}, _opened(sub)]
    delivered = demand = 0
    for index, amount in enumerate(demands):
        if index:
            steps.append({"send": {"request": {"subscriber": sub, "demand": amount}}})
        demand = saturating_add(demand, amount)
        now = min(count, demand)
        done = now == count
        if now > delivered or done:
            steps.append({"expect_elements": {"subscriber": sub, "count": now - delivered,
                                              "then": "onComplete" if done else "nothing"}, "rule": "RS-TCK-1"})
        delivered = now
        if done:
            return steps
    steps += [{"send": {"cancel": {"subscriber": sub}}}, {"expect_silence": {"subscriber": sub}, "rule": "RS-FLOW-2"}]
    return steps


def _unknown_episode(draw: Draw, sub: int) -> list[dict[str, Any]]:
    name = draw(st.sampled_from(("tck/nothing", "tck/range?count=x", "other/name")))
    return [{"send": {"subscribe": {"publisher": name, "subscriber": sub, "initialDemand": 1}}}, _opened(sub),
            {"expect": {"onError": {"subscriber": sub}}, "rule": "RS-TCK-5"}]


def _quiet_episode(draw: Draw, sub: int) -> list[dict[str, Any]]:
    """Frames a responder answers with nothing: fire-and-forget, metadata push."""
    if draw(st.booleans()):
        return [{"send": {"REQUEST_FNF": {"subscriber": sub, "data": "tck/fnf?key=fuzz"}}},
                {"expect_silence": {"window": 0.05}, "rule": "RS-FNF-1"}]
    return [{"send": {"METADATA_PUSH": {"metadata": "routing"}}},
            {"expect_silence": {"window": 0.05}, "rule": "RS-TCK-8"}]


EPISODES = (_stream_episode, _unknown_episode, _quiet_episode)


@st.composite
def _episode(draw: Draw, sub: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = draw(st.sampled_from(EPISODES))(draw, sub)
    return steps


@st.composite
def fuzz_programs(draw: Draw, profile: str = V1, reassembly_limit: int | None = None) -> dict[str, Any]:
    """One fuzz program: a scenario dict (without id/title) for the scenario loader.

    ``reassembly_limit`` is accepted for the engine's hook signature; RSocket programs
    send no fragmented payloads to the target, so it does not change what is drawn."""
    # ``codecs`` is RS-IO's; other bindings name their wire ``profiles`` (the scenario schema).
    scenario: dict[str, Any] = {"level": "MUST", "handshake": "auto", "goodbye": "auto", "binding": "rsocket",
                                "profiles": [profile]}
    steps: list[dict[str, Any]] = []
    for sub, block in enumerate(draw(st.lists(_episode(0), min_size=1, max_size=4)), start=1):
        # Episodes are drawn with a placeholder subscriber and numbered here, so a shrunk
        # program (fewer episodes) still numbers its subscribers 1, 2, ...
        steps += _renumber(block, sub)
    ending = draw(st.sampled_from(("quiet", "mutation")))
    if ending == "mutation":
        kinds = tuple(k for k in sorted(WIRE_MUTATIONS) if k not in NOT_IN.get(profile, ()))
        script = draw(mutated_scripts(profile, kinds=kinds))
        steps.append({"send_hex": script.tail.hex()})
        if script.rule is None:
            steps += _stream_episode_checked(len(steps))
        elif script.kind == "truncated":
            # Nothing can answer a frame that never ends: the kit half-closes, the target closes.
            steps += [{"close": "write"}, {"expect_close": {}, "rule": script.rule}, {"liveness": {}}]
            scenario.update(goodbye="none", kit_violations=[script.rule])
        else:
            # A malformed frame is a connection error: ERROR[CONNECTION_ERROR] on stream 0, then close.
            reaction = "RS-ERROR-8" if script.kind == "metadata-overrun" else script.rule
            steps += [{"expect_goodbye": {}, "rule": reaction}, {"expect_close": {}, "rule": reaction},
                      {"liveness": {}}]
            scenario.update(goodbye="none", kit_violations=[script.rule])
    scenario["steps"] = steps
    return scenario


def _renumber(block: list[dict[str, Any]], sub: int) -> list[dict[str, Any]]:
    def fix(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (sub if k == "subscriber" else fix(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return [fix(step) for step in block]


def _stream_episode_checked(salt: int) -> list[dict[str, Any]]:
    """After a frame the responder must ignore: the connection still serves a request."""
    sub = 1000 + salt
    return [{"send": {"subscribe": {"publisher": "tck/range?count=1", "subscriber": sub, "initialDemand": 1}}},
            _opened(sub),
            {"expect_elements": {"subscriber": sub, "count": 1, "then": "onComplete"}, "rule": "RS-IGNORE-1"}]

