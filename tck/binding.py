"""The binding seam: what a wire binding gives the binding-neutral kit.

Theory of operation.  The kit judges one contract (the Reactive Streams rules) carried
by several wires.  Everything that knows a wire lives in one package under
``rsio_tck.bindings.<name>``; that package exposes a module attribute ``BINDING``, an
object with the attributes and methods of ``Binding`` below.  The rest of the kit (the
monitor, ``Connection``, the scenario engine, the reference peer's shell, the fuzzer,
the dissector, the reports and the pipeline) receives a ``Binding`` and calls only what
this module declares, and never branches on a binding's name.  ``get_binding(name)`` is the only
way to obtain one: it imports the binding package by name when first asked, so no neutral module
imports a binding module (``tests/test_binding_seam.py`` walks the imports and holds them to that).
``REGISTRY`` is the one registry of bindings (``rsio_tck.binding_registry``, whose names this module
gives on): the kit's own, and those defined outside the kit, added by the environment variable
``RSIO_TCK_BINDINGS`` (read once, so the processes the kit starts know them too) or by
``register_binding``.  A binding declares where its reference peer and its
client program live, so the peer's shell, listen mode and the self-check find them here as well
(``docs/guide/adding-a-binding.md`` adds a fourth binding from outside, one defined under ``tests/``).

A binding provides, per wire *profile* (RS-IO: ``msgpack``/``varint``; RSocket:
``rsocket-1.0``/``reactivesocket-draft``; Ditto: ``streaming``/``search``):

- a codec: an incremental decoder (``feed``, ``eof``, ``salvaged``, ``held``: the bytes of a frame
  in progress; any chunking) and an encoder (``encode``);
- a judge per connection (``ConnectionJudge``): it applies each decoded frame of either side
  to the binding's model of the connection and reports every broken rule through a
  callback, mapping frames onto the contract's signals (one frame may carry several; the
  publisher may choose the subscription key);
- the scenario adapter (``ScenarioAdapter``): how the kit opens and closes a connection on
  this wire, how a contract step (``subscribe``, ``request``, ``cancel``) or a wire step
  becomes frames, and how a received frame becomes the contract events scenarios wait on;
- its rule catalogue (IDs in ``rsio_tck.catalogue.RULES``; a binding defined outside the kit brings its
  own rules and SPEC text: ``OWN_CATALOGUE_HOOKS``) and the translation of contract rule IDs (the
  stream table's) into its own;
- its capabilities file format (``CapabilitiesFormat``), its client test cases for listen mode, and
  where its reference peer and the peer's client program live (``peer_module``, ``client_program``);
- how a frame is described in transcripts and reports;
- its liveness probe (``LivenessProbe``): the cheapest exchange a target must answer, which the
  kit tries on a fresh connection after a scenario ended on a time-out, to tell a target that
  stopped answering altogether from one that missed one signal; and its pace probe (a
  ``LivenessProbe`` too, maybe the same exchange): one that no answer to the connection's opening
  satisfies, whose whole answer the kit awaits within a bound of total time after a scenario saw
  the target's bytes trickle, to tell a slow but live target from one too slow to judge;
- its part of a run's report: the lines that describe its wire (``report_notions``: the
  specification and profile, RS-IO's serverHello) and its wire statistics, tables computed
  from the run's recorded traffic (``report_statistics``); the report shows only these and
  only the binding's own rules (``rules``), so it never names another binding's notions.

All of this is sans-IO: bytes in, events out; no sockets, no clocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

# The registry's names, given on (``from rsio_tck.binding import get_binding``): the seam is one import.
from .binding_registry import (
    BINDING_NAMES,  # noqa: F401
    CONTRACT,  # noqa: F401
    DEFAULT_BINDING,  # noqa: F401
    ENVIRONMENT,  # noqa: F401
    OWN_CATALOGUE_HOOKS,  # noqa: F401
    REGISTRY,  # noqa: F401
    binding_names,  # noqa: F401
    get_binding,  # noqa: F401
    register_binding,  # noqa: F401
)
from .errors import ProtocolViolation, Side

if TYPE_CHECKING:
    from .findings.terms import BugReportTerms
    from .listen.cases import ClientTest
    from .monitor.trace import TraceRecord
    from .wireshark import Dissector


# A judge reports each broken rule through this: (violation, frame index or None, frame or None).
Found = Callable[[ProtocolViolation, "int | None", Any], None]
# A judge shows each frame it judges through this, when asked: (index, sender, t, frame).
Keep = Callable[[int, Side, float, Any], None]


Cell = str | int | float  # a statistics table's cell: numbers stay numbers in report.json


@dataclass(frozen=True)
class WireTable:
    """One table of a run's wire statistics, as a binding computes it from the recorded traffic.

    A binding returns only tables that have rows (the report leaves an empty one out), and no cell is
    None: a measure with nothing to measure is left out, or shown as text that says so."""

    id: str  # stable, for report.json and the page's anchor: "frames-by-type"
    title: str  # "Frames by type"
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    note: str = ""  # one line under the title: what is counted, and how

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "note": self.note, "columns": list(self.columns),
                "rows": [list(row) for row in self.rows]}


class Decoder(Protocol):
    salvaged: list[Any]  # after a failed feed: the frames that feed completed before the bad bytes

    @property
    def held(self) -> int:
        """Bytes kept toward a frame not yet whole (a partial frame or line): what a sender can make it hold."""
        ...

    def feed(self, data: bytes) -> list[Any]: ...

    def eof(self) -> None: ...


class Encoder(Protocol):
    def encode(self, frame: Any) -> bytes: ...


class ConnectionJudge(Protocol):
    """The binding's model of one connection, judging both sides (monitor and endpoints)."""

    model: Any  # the binding's own model of the connection, for binding-aware callers
    keep: Keep | None  # settable: the monitor switches frame keeping on or off after construction

    @property
    def held(self) -> int:
        """Bytes kept toward frames not yet whole, both sides (RSocket's reassembly; 0 for a judge that joins none)."""
        ...

    def let_go(self, side: Side) -> None:
        """Nothing more of ``side``'s frames will be judged (its direction is dead, or the connection is over):
        drop what is kept toward its frames not yet whole.  Its findings and the model stay."""
        ...

    def judge(self, sender: Side, frames: Iterable[Any], t: float, index: int, found: Found) -> int:
        """Apply ``frames`` sent by ``sender``, numbered from ``index``; return the next index."""
        ...

    def wire_error(self, sender: Side, violation: ProtocolViolation) -> ProtocolViolation | None:
        """``sender``'s bytes could not be decoded; the violation, attributed to ``sender``
        (None: the binding cannot tell whether it is one, and reports nothing)."""
        ...

    def close(self, side: Side) -> list[ProtocolViolation]:
        """``side``'s transport ended; the obligations the close broke."""
        ...


@dataclass(frozen=True)
class CapabilitiesFormat:
    """A binding's capabilities file: how a target says what it serves (``rsio_tck.capabilities`` reads it).

    The file is a JSON or YAML object holding ``version_key`` (RS-IO's, for example:
    ``"rsio_capabilities": 1``), valid against ``schema``; the values under each key of ``token_keys`` are the
    target's capability tokens, each with that key's prefix (``"codecs": ["varint"]`` is the token ``codec:varint``).  ``everything`` is what a
    target that gave no file is assumed to serve (its profiles as ``codec:`` tokens among them)."""

    version_key: str
    schema: Path  # the binding's own JSON Schema of the file: package data of its package, so a wheel has it
    token_keys: Mapping[str, str]
    everything: tuple[str, ...]


class Binding(Protocol):
    name: str
    title: str  # the protocol's name in reports and the published site: "RSocket"
    profiles: tuple[str, ...]  # the first is the default
    profile_word: str  # what the binding calls a profile in scenarios and messages: "codec" (RS-IO), "profile"
    rule_prefixes: tuple[str, ...]  # the catalogue areas this binding owns, e.g. ("RS-",)
    # Where its reference peer lives: the dotted module of the peer (``PEER``, or the stream-shaped entry
    # point: ``rsio_tck.reference_peer.peer_binding``), and of the peer's client program for listen mode
    # (``python -m MODULE --profile P [--fault NAME]``; None: the peer has none).
    peer_module: str
    client_program: str | None

    def scenario_adapter(self, profile: str, options: dict[str, Any] | None = None) -> ScenarioAdapter:
        """A fresh scenario adapter for one connection (``ScenarioAdapter`` below; ``options``: ``limits``).
        Its ``features`` are what the binding offers contract scenarios (``needs:``)."""
        ...

    def capabilities_format(self) -> CapabilitiesFormat:
        """The binding's capabilities file format, and the capabilities a target without a file has."""
        ...

    def client_tests(self) -> Sequence[ClientTest]:
        """Listen mode's client test cases (``rsio_tck.listen.cases.ClientTest``), in order; may be empty."""
        ...

    def decoder(self, profile: str, limits: Any = None) -> Decoder: ...

    def liveness_frames(self) -> tuple[type, ...]:
        """The frame classes that only show their sender is alive (RSocket's KEEPALIVE), never the progress of a
        stream: a relay that bounds a peer by silence (listen mode) does not count them as progress, or a peer
        storming them would hold a case to its time-out.  Empty for a binding with none."""
        ...

    def encoder(self, profile: str, limits: Any = None) -> Encoder: ...

    def judge(self, profile: str, limits: Any = None, *, contract: bool = True, keep: Keep | None = None) -> ConnectionJudge:
        """A fresh judge for one connection.  ``contract``: also judge the test publishers'
        contract; ``keep``: called with (index, sender, t, frame) for every frame judged."""
        ...

    def describe(self, frame: Any) -> str: ...

    # -- seam (H1): the sans-IO endpoint behind ``rsio_tck.protocol.Connection`` -----------
    def endpoint(self, role: Side, profile: str, limits: Any = None, **options: Any) -> Any:
        """A fresh endpoint for ``role`` (``send``, ``send_raw``, ``data_to_send``,
        ``receive_data``, ``receive_eof``, ``state``, ``error``: ``rsio_tck.protocol.Endpoint``);
        ``options`` are the binding's own (RS-IO: ``strict_peer``, ``tolerate``)."""
        ...
    # -- end seam (H1) ---------------------------------------------------------------------

    def contract_rule(self, rule: str) -> str:
        """The binding's ID for a contract rule of the stream table (itself when the binding keeps it)."""
        ...

    def liveness_probe(self, profile: str) -> LivenessProbe:
        """A fresh probe of whether the target still answers (after a scenario ended on a time-out)."""
        ...

    def pace_probe(self, profile: str) -> LivenessProbe:
        """A fresh probe of the target's pace (after a scenario ran out of budget with bytes still arriving, or
        had a frame that trickled in slowly): an exchange that no answer to the connection's opening satisfies
        (RS-IO: a stream's first signal), so that a target whose answer to the opening is prompt and whose
        other frames trickle cannot pass it on that answer alone.  A binding whose liveness probe already is
        such an exchange gives that one."""
        ...

    def rules(self) -> list[str]:
        """The IDs of the binding's own rules (``rsio_tck.catalogue.RULES``, ``rule_prefixes``), in catalogue order."""
        ...

    def report_notions(self, run: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(label, text) lines a run's report shows about the wire, from ``run`` (run.json): the profile
        and the specification it follows, and whatever else the binding has (RS-IO: the target's hello)."""
        ...

    def report_statistics(self, profile: str, traces: Iterable[Sequence[TraceRecord]]) -> list[WireTable]:
        """The run's wire statistics from its traces (one per connection, as recorded): only tables
        with rows (``rsio_tck.report.traffic.decoded`` decodes a trace the way the monitor does)."""
        ...


class LivenessProbe(Protocol):
    """The cheapest exchange a target must answer on a fresh connection; sans-IO, one per probe.

    The kit opens a connection, sends ``opening()``, and feeds ``answered`` every frame the target
    sends until one returns True (the target still answers) or a bounded time passes (it stopped):
    RS-IO's clientHello (serverHello), RSocket's SETUP then KEEPALIVE with R (KEEPALIVE), Ditto's
    subscribe (created).  ``asks`` names the exchange in messages ("SETUP, then KEEPALIVE with R").
    A pace probe has the same shape: RS-IO's clientHello then a subscribe to ``tck/range`` with demand 1
    (that subscription's first element or terminal signal, or a goodbye); RSocket's and Ditto's are
    their liveness probes, which no answer to the connection's opening satisfies.
    """

    asks: str

    def opening(self) -> list[Any]:
        """The frames the probe sends on its fresh connection."""
        ...

    def answered(self, frame: Any) -> bool:
        """Whether ``frame``, received from the target, answers the probe (any answer: a refusal too)."""
        ...


def profile_of(binding: Binding, profile: str | None) -> str:
    """``profile`` checked against the binding's (None: its default); ValueError names the choices."""
    if profile is None:
        return binding.profiles[0]
    if profile not in binding.profiles:
        raise ValueError(f"binding {binding.name!r} has no profile {profile!r}; "
                         f"choose one of {', '.join(binding.profiles)}")
    return profile


def contract_rules(binding: Binding, rules: Mapping[str, Any] | Iterable[str]) -> list[str]:
    """Contract rule IDs as the binding reports them."""
    return [binding.contract_rule(rule) for rule in rules]


# -- seam (H1): optional hooks -------------------------------------------------------------------
# The neutral tools look these up with getattr and give a one-line error naming the binding
# when one is missing; a binding provides those its tools need (RS-IO has all of them).
#   scapy_layer() -> module with bind(port, profile)         rsio_tck.dissect, check-pcap, pcaps
#   fuzz_programs(profile, reassembly_limit) -> strategy      rsio_tck.fuzz.engine (programs = scenario dicts)
#   fuzz_bystander(target, profile, timeout) -> bystander     rsio_tck.fuzz.engine (async open(), async check())
#   row_fields(frame) -> (type, id, payload bytes, elements)  rsio_tck.pipeline.framing (frame rows)
#   fingerprint(frame, encoder) -> dict | None                rsio_tck.report.rundir (run.json's fingerprint.hello)
#   synthetic_corpus() -> module                              rsio_tck.pipeline.bulk (RS-IO only)
#   websocket_framing(profile) -> framing                     rsio_tck.websocket (ws:// and wss:// URLs)
#   wireshark_dissector() -> Dissector (Lua file, filter name) rsio_tck.wireshark (rsio-tck wireshark, tshark)
#   bug_report_terms() -> BugReportTerms                    rsio_tck.findings (what a bug report says of the
#       protocol: the specification's name, the profile and transport of the environment line, the document
#       cited by line and the issue template whose headings a report uses; without it: plain_terms)
OPTIONAL_HOOKS = ("scapy_layer", "fuzz_programs", "fuzz_bystander", "row_fields", "fingerprint", "synthetic_corpus",
                  "websocket_framing", "wireshark_dissector", "bug_report_terms")


class OptionalHooks(Protocol):
    """The optional hooks' signatures (``OPTIONAL_HOOKS``); a binding has any subset of them."""

    def scapy_layer(self) -> Any: ...

    def fuzz_programs(self, profile: str, reassembly_limit: int | None = None) -> Any: ...

    def fuzz_bystander(self, target: str, profile: str, timeout: float) -> Any: ...

    def row_fields(self, frame: Any) -> tuple[str, int | None, int, int]: ...

    def fingerprint(self, frame: Any, encoder: Any) -> dict[str, Any] | None: ...

    def synthetic_corpus(self) -> Any: ...

    def websocket_framing(self, profile: str, limits: Any = None) -> Any: ...

    def wireshark_dissector(self) -> Dissector: ...

    def bug_report_terms(self) -> BugReportTerms: ...


def hooks_of(binding: Binding) -> OptionalHooks:
    """``binding`` seen through the optional hooks' signatures, for a caller that knows (``hasattr``) or
    requires (an AttributeError is its one-line error) that the binding has the hook it calls."""
    return cast("OptionalHooks", binding)


# -- end seam (H1) -------------------------------------------------------------------------------

# -- the scenario adapter (the scenario engine's side of the seam) ------------------------------
# Key of a scenario inbox: ("conn", None) for the connection, ("sub", None) for the target's
# subscribes, ("kit", x) for one of the kit's subscriptions, ("target", x) for one of the target's;
# x is whatever the adapter keys streams by (RS-IO: the subscriber Id; RSocket: the stream id).
ScenarioKey = tuple[str, "int | None"]


class ScenarioAdapter(Protocol):
    """One scenario connection's translation between the step language and one wire; stateful, sans-IO.

    ``binding.scenario_adapter(profile, options)`` makes one per connection (``options``:
    ``limits``).  The engine sends what ``frames``/``opening``/``goodbye`` return, records
    the events ``sent`` and ``received`` return into its inboxes, and writes ``replies`` (the
    frames the binding answers by itself, such as RSocket's keepalive answer) after each read.
    Events are ``(key, Event)`` pairs (``rsio_tck.scenarios.events.Event``): ``kind`` is a
    contract name (``onSubscribe``, ``onNext``...) or a wire name (``serverHello``,
    ``KEEPALIVE``...), ``frame`` the wire name of the frame that carried it, ``fields`` the
    names scenarios match on.

    Optional: ``in_flight(key, event) -> bool``, for a binding whose cancel lets events already sent
    arrive however late (Ditto: SPEC.md decision DITTO-g): ``expect_silence`` lets such events of a
    subscription the kit cancelled pass, and the binding's judge bounds them by the demand granted.
    Optional: ``session_limits``, the binding's limits the whole session judges with (its decoder and
    monitor too), when the binding's defaults are larger than a kit connection may hold (RSocket:
    64 MiB of reassembly per direction, capped at the session's ``REASSEMBLY_MAX_BYTES``).
    Optional: ``attach(judge, kit, target)``, called once with the connection's judge (the monitor's
    ``ConnectionJudge``) and the sides of the kit and the target: the judge has judged each received frame
    before ``received`` sees it, so an adapter reads what the judge keeps (RSocket: its reassembly)
    instead of keeping a copy.
    """

    binding: Binding
    profile: str
    features: frozenset[str]  # what contract scenarios may need (``needs:``), e.g. "initial-demand-zero"
    # The words a scenario's ``send:``/``expect:`` entry may name on this binding: the contract's signals
    # (``semantics.signals.CONTRACT_WORDS``) and the binding's own frames; the scenario schema's enum is their union.
    frame_words: tuple[str, ...]
    opens_with_reply: bool  # the kit waits for the target's answer to ``opening()`` (RS-IO's serverHello)
    goodbye_kinds: frozenset[str]  # connection events that are the target's goodbye
    quiet_kinds: frozenset[str]  # events that are not signals (hellos, keepalives): silence ignores them
    reply_awaited: bool  # the kit's goodbye is answered (RS-IO: goodbye for goodbye, BYE-2)
    fast_type: type | None  # the frame class ``fast_element`` may take (floods of elements)
    # The kit decodes with the decoder's ``feed_runs``: ``received`` also takes runs of element frames (a value
    # with ``frames`` and ``frames_slice``, standing for that many frames), and answers them in bulk.
    takes_runs: bool
    keepalive_every: float  # seconds between the kit's own ``keepalive()`` frames; 0: none
    error: str | None  # set when received data went past a kit limit (reassembly): the scenario fails
    truncated: dict[str, str]  # store -> why a record was cut (the runner reports it)

    def opening(self) -> list[Any]:
        """The frames the kit sends to open a connection (RS-IO clientHello; RSocket SETUP)."""
        ...

    def check_opening(self, event: Any) -> tuple[str, str] | None:
        """None if ``event`` (the first connection event, or None) is the right answer to the
        opening; else (rule, expectation) for the failure."""
        ...

    def frames(self, name: str, fields: dict[str, Any]) -> list[Any]:
        """The frames one ``send:`` entry names: a contract signal or one of the binding's frames,
        fields already resolved.  ValueError (one line) for a name or field the binding lacks."""
        ...

    def sent(self, frames: list[Any], index: int) -> list[tuple[ScenarioKey, Any]]:
        """Events implied by what the kit sent (RSocket: subscribe opens the stream: onSubscribe)."""
        ...

    def received(self, frame: Any, index: int) -> list[tuple[ScenarioKey, Any]]:
        """The inbox events of one received frame (fragments joined with the binding's reassembly)."""
        ...

    def fast_element(self, frame: Any, index: int) -> tuple[ScenarioKey, Any] | None:
        """For a frame of ``fast_type``: (key, onNext event) when it is one plain whole element
        that changes no adapter state; None sends it through ``received``."""
        ...

    def replies(self) -> list[Any]:
        """Frames the binding answers by itself, owed since the last call (RSocket: KEEPALIVE with R)."""
        ...

    def keepalive(self) -> list[Any]:
        """The frames the kit sends every ``keepalive_every`` seconds (RSocket's client KEEPALIVE)."""
        ...

    def barrier(self, token: bytes) -> list[Any]:
        """Frames the target answers only after it has read what the kit sent before them, carrying
        ``token`` (RSocket: KEEPALIVE with R, whose answer echoes its data); [] for a binding that has
        none.  ``barrier_answered(token)`` says when the answer came.  Steps prove absence with it:
        what the target wrote before reading the barrier arrives before the answer."""
        ...

    def barrier_answered(self, token: bytes) -> bool:
        """True once the target answered the ``barrier(token)`` the kit sent (each token answers once)."""
        ...

    def key(self, name: str, fields: dict[str, Any]) -> ScenarioKey:
        """The inbox an expectation of ``name`` with ``fields`` (resolved) waits on."""
        ...

    def kit_key(self, subscriber: Any) -> ScenarioKey: ...

    def target_key(self, subscriber: Any) -> ScenarioKey: ...

    def element(self, value: int) -> bytes:
        """The test publishers' element bytes for integer ``value`` (RS-IO msgpack; RSocket decimal text)."""
        ...

    def element_value(self, data: bytes) -> int | None:
        """The integer a test publisher's element holds (any encoding the binding allows), or None."""
        ...

    def goodbye(self, reason: str) -> list[Any]:
        """The frames of the kit's orderly close before it closes the transport (may be none)."""
        ...

    def kit_closing(self, model: Any) -> bool:
        """The kit has already begun closing (``model``: the monitor's model of the connection)."""
        ...

    def kit_owes_goodbye(self, model: Any) -> bool:
        """The kit owes the target an answer to its goodbye or error before closing."""
        ...

    def target_extensions(self, model: Any) -> list[Any]:
        """Extension ids the target declared (RS-IO serverHello), for ``skip_if_target_extensions``."""
        ...
