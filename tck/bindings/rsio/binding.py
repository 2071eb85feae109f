"""RS-IO as a ``Binding`` (see ``rsio_tck.binding``): its profiles are the two codecs of rsio-v0."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...catalogue import RULES

if TYPE_CHECKING:
    from ...binding import WireTable
    from ...monitor.trace import TraceRecord

# The capabilities file (rsio-v0 section 8): its tokens, and its schema, package data beside this module.
CODECS = ("msgpack", "varint")  # the two wire profiles
PUBLISHERS = ("tck/range", "tck/infinite", "tck/fixed", "tck/large", "tck/error", "tck/subscribe")
FEATURES = (
    "pack",  # tck/fixed uses onNextPacked
    "split",  # the target, as subscriber, joins split elements it receives (always required by rsio-v0)
    "split-on-request",  # tck/large honours part=P
    "subscribe:all",
    "subscribe:one",
    "subscribe:batch",
    "subscribe:cancel",
)
CAPABILITIES_SCHEMA = Path(__file__).with_name("capabilities.schema.json")


class RsioBinding:
    name = "rsio"
    title = "RS-IO"  # how reports and the published site name the protocol
    profiles = CODECS
    # Every area of the catalogue that is not another binding's belongs to RS-IO.
    rule_prefixes = ("HS-", "STR-", "DEM-", "ID-", "SPLIT-", "PACK-", "BYE-", "ERR-", "EXT-", "TCK-")
    # -- the seam's declarations (``rsio_tck.binding.Binding``) --
    profile_word = "codec"  # rsio-v0 calls its two profiles codecs
    peer_module = "rsio_tck.reference_peer.rsio"  # its reference peer
    client_program: str | None = None  # its peer's client program, for listen mode

    def capabilities_format(self) -> Any:
        from ...binding import CapabilitiesFormat

        return CapabilitiesFormat("rsio_capabilities", CAPABILITIES_SCHEMA,
                                  {"publishers": "", "features": "", "codecs": "codec:"},
                                  PUBLISHERS + FEATURES + tuple(f"codec:{c}" for c in CODECS))

    def client_tests(self) -> Any:
        from .client_tests import CLIENT_TESTS

        return CLIENT_TESTS

    def liveness_frames(self) -> tuple[type, ...]:
        return ()  # rsio-v0 has no keepalive frame
    # -- end of the seam's declarations --

    def decoder(self, profile: str, limits: Any = None) -> Any:
        from .wire import get_codec

        return get_codec(profile).decoder(limits)

    def encoder(self, profile: str, limits: Any = None) -> Any:
        from .wire import get_codec

        return get_codec(profile).encoder(limits)

    def judge(self, profile: str, limits: Any = None, *, contract: bool = True, keep: Any = None) -> Any:
        from .judge import RsioJudge

        return RsioJudge(contract=contract, keep=keep)

    def endpoint(self, role: Any, profile: str, limits: Any = None, **options: Any) -> Any:
        """RS-IO's sans-IO endpoint (options: ``strict_peer``, ``tolerate``)."""
        from .endpoint import RsioEndpoint

        return RsioEndpoint(role, profile, limits, **options)

    def scapy_layer(self) -> Any:
        """RS-IO's scapy layer (``bind(port, profile)``, ``from_frame``, ``dissect`` ...)."""
        from . import dissect

        return dissect

    def fuzz_programs(self, profile: str, reassembly_limit: int | None = None) -> Any:
        """The hypothesis strategy of RS-IO fuzz programs (scenarios) over ``profile``."""
        from .fuzz.program import programs

        return programs(profile, reassembly_limit)

    def fuzz_bystander(self, target: str, profile: str, timeout: float) -> Any:
        """A second connection watching each fuzz example (ERR-3)."""
        from .fuzz.bystander import Bystander

        return Bystander(target, profile, timeout)

    def fingerprint(self, frame: Any, encoder: Any) -> dict[str, Any] | None:
        """run.json's fingerprint of a target from its first frame: a serverHello's version,
        extensions and bytes (None for any other frame)."""
        from .wire.frames import ServerHello

        if not isinstance(frame, ServerHello):
            return None
        return {"version": frame.version, "extensions": list(frame.extensions), "hex": encoder.encode(frame).hex()}

    def row_fields(self, frame: Any) -> tuple[str, int | None, int, int]:
        """The pipeline's frame row of ``frame``: (type, subscriber Id, element bytes, elements)."""
        from .rows import row_fields

        return row_fields(frame)

    def synthetic_corpus(self) -> Any:
        """The module of RS-IO synthetic corpora for the pipeline (``synthetic_connection`` ...)."""
        from . import corpus

        return corpus

    def bug_report_terms(self) -> Any:
        """What a bug report says of RS-IO (``rsio_tck.findings.terms.BugReportTerms``): its specification is the
        kit's own, so no upstream document is linked by line, and no organisation's issue template applies."""
        from ...findings.terms import BugReportTerms

        return BugReportTerms(protocol="RS-IO", specification="the RS-IO specification", profile=self.profiles[0],
                              transport="TCP")

    def wireshark_dissector(self) -> Any:
        """RS-IO's Lua dissector (``rsio_tck.wireshark.Dissector``), package data of this package."""
        from importlib import resources
        from pathlib import Path

        from ...wireshark import Dissector

        return Dissector(binding=self.name, lua=Path(str(resources.files(__package__).joinpath("rsio.lua"))),
                         protocol="rsio", description="RS-IO, both codecs (msgpack, varint)")

    def websocket_framing(self, profile: str, limits: Any = None) -> Any:
        """Over WebSocket RS-IO is a byte stream in binary messages whose boundaries mean nothing."""
        from ...websocket.framing import StreamFraming

        return StreamFraming()

    def describe(self, frame: Any) -> str:
        from .wire import describe

        return describe(frame)

    def contract_rule(self, rule: str) -> str:
        return rule  # the stream table speaks RS-IO's rule IDs

    def scenario_adapter(self, profile: str, options: dict[str, Any] | None = None) -> Any:
        """The scenario engine's adapter for one connection (``rsio_tck.binding.ScenarioAdapter``)."""
        from .adapter import RsioScenarioAdapter

        return RsioScenarioAdapter(self, profile, (options or {}).get("limits"))

    def rules(self) -> list[str]:
        return [rule for rule in RULES if rule.startswith(self.rule_prefixes)]

    def report_notions(self, run: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The codec, the SPEC version and the target's serverHello (run.json's fingerprint), or that none was seen."""
        from .report import notions

        return notions(run)

    def report_statistics(self, profile: str, traces: Iterable[Sequence[TraceRecord]]) -> list[WireTable]:
        """The pipeline's wire statistics for the run (``report.py``), then frames by type."""
        from .report import wire_statistics

        return wire_statistics(self, profile, traces)

    def liveness_probe(self, profile: str) -> Any:
        """The handshake: clientHello, answered by serverHello (a goodbye refusing it is an answer too).

        Not the pace probe's element: a time-out is often a target missing a signal, the very fault the
        scenarios judge, and a probe that asked for a signal would take such a target for a stopped one
        and leave the rest of the suite not run; the handshake asks only whether the target answers at all."""
        return _HelloProbe()

    def pace_probe(self, profile: str) -> Any:
        """The handshake, then a subscribe to ``tck/range?count=1`` with demand 1 on Id ``_ElementProbe.ID``,
        answered by that subscription's first element (or a part of it) or its terminal signal, or by a
        goodbye.  Not the handshake alone: a server may send its serverHello before it reads anything
        (rsio-v0 section 3), so a target that trickles every other frame would pass on that."""
        return _ElementProbe()


class _HelloProbe:
    asks = "clientHello"

    def opening(self) -> list[Any]:
        from .wire.frames import ClientHello

        return [ClientHello(version=0, extensions=())]

    def answered(self, frame: Any) -> bool:
        return True  # a server's first frame is its answer to the hello: serverHello, or a goodbye


class _ElementProbe:
    """One element asked for, right after the clientHello (optimistic sending, rsio-v0 section 3).  Only
    frames of the probe's own subscription answer it: whatever else the target sends (its serverHello, an
    onNext for an Id the probe never subscribed) is not the answer.  Its onSubscribe is not either: the
    answer is what the target owes once it served the demand, the element or, for a name it does not
    serve, the onError after the onSubscribe (section 8)."""

    # Any Id is the kit's to choose (section 4); not 1, the Id a stray onNext most likely names (the hostile
    # peer's slowloris trickles onNext on Id 1 from the start): its element must not pass for the answer.
    ID = 2
    PUBLISHER = "tck/range?count=1"
    asks = f"clientHello, then subscribe({PUBLISHER}, Id {ID}, demand 1)"

    def opening(self) -> list[Any]:
        from .wire.frames import ClientHello, Subscribe

        return [ClientHello(version=0, extensions=()),
                Subscribe(publisher=self.PUBLISHER, subscriber=self.ID, initial_demand=1)]

    def answered(self, frame: Any) -> bool:
        from .wire.frames import Goodbye, OnComplete, OnError, OnNext, OnNextLastPart, OnNextPacked, OnNextPart

        if isinstance(frame, Goodbye):
            return True  # a refusal (a version it does not speak, a subscribe it takes for an error) answers
        answers = (OnNext, OnNextPacked, OnNextPart, OnNextLastPart, OnComplete, OnError)
        return isinstance(frame, answers) and frame.subscriber == self.ID


BINDING = RsioBinding()
