"""Ditto as a ``Binding`` (see ``rsio_tck.binding``): two profiles, the Ditto judge, the DITTO-* rules.

Profiles: ``streaming`` (subscribeForPersistedEvents) and ``search`` (search/subscribe).
Both share the codec and the TCP line framing (one JSON text per line); the profile
decides what the scenario adapter sends.  Imports stay lazy, so importing the
package to reach ``BINDING`` pulls in no other binding.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...catalogue import RULES
from .signals import SIGNAL_OF

if TYPE_CHECKING:
    from ...binding import WireTable
    from ...monitor.trace import TraceRecord

PROFILES = ("streaming", "search")
# The capabilities file (bindings.md section 3): its publishers (tck/things: the search collection) besides the
# profiles, and its schema, package data beside this module (schemas/ holds Ditto's own, copied).
PUBLISHERS = ("tck/range", "tck/infinite", "tck/error", "tck/things")
CAPABILITIES_SCHEMA = Path(__file__).with_name("capabilities.schema.json")


class LineEncoder:
    """Messages (and the scenario adapter's raw lines) as TCP lines."""

    def encode(self, message: Any) -> bytes:
        raw = getattr(message, "raw_text", None)
        if raw is not None:
            return raw.encode("utf-8") + b"\n"
        from .framing import encode_line

        return encode_line(message)


class DittoBinding:
    name = "ditto"
    title = "Eclipse Ditto"  # how reports and the published site name the protocol
    profiles = PROFILES
    rule_prefixes = ("DITTO-",)
    # -- the seam's declarations (``rsio_tck.binding.Binding``) --
    profile_word = "profile"
    peer_module = "rsio_tck.reference_peer.ditto"  # its reference peer
    client_program: str | None = "rsio_tck.reference_peer.ditto.testcases"  # its peer's client program, for listen mode

    def capabilities_format(self) -> Any:
        from ...binding import CapabilitiesFormat

        return CapabilitiesFormat("ditto_capabilities", CAPABILITIES_SCHEMA, {"publishers": "", "profiles": "codec:"},
                                  PUBLISHERS + tuple(f"codec:{p}" for p in PROFILES))

    def client_tests(self) -> Any:
        from .client_tests import CLIENT_TESTS

        return CLIENT_TESTS

    def liveness_frames(self) -> tuple[type, ...]:
        return ()  # the Ditto protocol has no keepalive of its own (WebSocket's pings are the transport's)
    # -- end of the seam's declarations --

    def _check(self, profile: str) -> None:
        if profile not in PROFILES:
            raise ValueError(f"unknown Ditto profile {profile!r}; choose one of {', '.join(PROFILES)}")

    def decoder(self, profile: str, limits: Any = None) -> Any:
        from .codec import DittoLimits
        from .framing import LineDecoder

        self._check(profile)
        return LineDecoder(limits if isinstance(limits, DittoLimits) else None)

    def encoder(self, profile: str, limits: Any = None) -> Any:
        self._check(profile)
        return LineEncoder()

    def judge(self, profile: str, limits: Any = None, *, contract: bool = True, keep: Any = None) -> Any:
        from .judge import DittoJudge

        self._check(profile)
        return DittoJudge(profile, limits, contract=contract, keep=keep)

    def endpoint(self, role: Any, profile: str, limits: Any = None, **options: Any) -> Any:
        """Ditto's sans-IO endpoint (option: ``contract``, judge the test publishers too)."""
        from .endpoint import Endpoint

        self._check(profile)
        return Endpoint(role, profile, limits, **options)

    def describe(self, frame: Any) -> str:
        raw = getattr(frame, "raw_text", None)
        if raw is not None:
            return f"raw line {raw[:80]!r}"
        if not hasattr(frame, "topic"):
            return f"control message {str(frame)[:80]!r}"  # WebSocket's START-SEND-EVENTS and the like
        sid = getattr(frame, "subscription_id", None)
        name = f"{frame.profile} {frame.action}" if hasattr(frame, "action") else f"envelope {frame.topic}"
        details = [f"subscriptionId={sid!r}"] if sid is not None else []
        cid = getattr(frame, "correlation_id", None)
        if cid is not None:
            details.append(f"correlation-id={cid!r}")
        for attr in ("demand", "from_revision", "to_revision", "filter", "options", "status"):
            value = getattr(frame, attr, None)
            if value is not None:
                details.append(f"{attr}={value!r}")
        if hasattr(frame, "items"):
            details.append(f"items={len(frame.items)}")
        if hasattr(frame, "item"):
            details.append(f"item={json.dumps(frame.item)[:40]}")
        error = getattr(frame, "error", None)
        if error is not None:
            details.append(f"error={error.status} {error.error}")
        return f"{name}({', '.join(details)})"

    def row_fields(self, frame: Any) -> tuple[str, int | None, int, int]:
        """The pipeline's frame row: (type, id, value bytes, elements it carries).

        The type is the contract's signal name (``subscribe``, ``request``, ``cancel``, ``onSubscribe``,
        ``onNext``, ``onComplete``, ``onError``; ``envelope`` for other topics), so the pipeline's element
        and latency tables read Ditto rows as they read RS-IO's; the id is a stable 31-bit number of the
        subscriptionId (CRC-32), None for a subscribe, which names none."""
        from .codec import encode_message

        action = getattr(frame, "action", None)
        kind = SIGNAL_OF.get(action, "envelope") if action is not None else "envelope"
        sid = getattr(frame, "subscription_id", None)
        number = zlib.crc32(sid.encode("utf-8")) & 0x7FFFFFFF if isinstance(sid, str) else None
        elements = 1 if kind == "onNext" else 0
        size = 0
        if elements:
            payload = frame.items if hasattr(frame, "items") else frame.item
            size = len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        elif getattr(frame, "raw_text", None) is None:
            size = len(encode_message(frame).encode("utf-8"))
        return kind, number, size, elements

    def fuzz_programs(self, profile: str, reassembly_limit: int | None = None) -> Any:
        """The hypothesis strategy of Ditto fuzz programs (scenario step lists, legal or with one mutation)."""
        from .fuzz import fuzz_programs

        self._check(profile)
        return fuzz_programs(profile)

    def fuzz_bystander(self, target: str, profile: str, timeout: float) -> Any:
        """No bystander: no Ditto rule is about one connection's errors reaching another (the programs'
        mutation endings check a fresh connection with ``liveness`` instead)."""
        return _NoBystander()

    def bug_report_terms(self) -> Any:
        """What a bug report says of Ditto (``rsio_tck.findings.terms.BugReportTerms``): the Ditto Protocol,
        over WebSocket; no document is linked by line."""
        from ...findings.terms import BugReportTerms

        return BugReportTerms(protocol="Eclipse Ditto", specification="the Ditto Protocol specification",
                              profile=self.profiles[0], transport="WebSocket")

    def wireshark_dissector(self) -> Any:
        """Ditto's Lua dissector (``rsio_tck.wireshark.Dissector``), package data of this package."""
        from importlib import resources
        from pathlib import Path

        from ...wireshark import Dissector

        return Dissector(binding=self.name, lua=Path(str(resources.files(__package__).joinpath("ditto.lua"))),
                         protocol="ditto", description="Ditto streaming/search envelopes (WebSocket text messages, TCP lines): labels only")

    def websocket_framing(self, profile: str, limits: Any = None) -> Any:
        """One envelope per text message (``websocket.DittoFraming``); a binary message breaks DITTO-WS-1."""
        from .websocket import websocket_framing

        self._check(profile)
        return websocket_framing(profile, limits)

    def scenario_adapter(self, profile: str, options: dict[str, Any] | None = None) -> Any:
        """The scenario engine's adapter for one connection (``rsio_tck.binding.ScenarioAdapter``)."""
        from .adapter import DittoScenarioAdapter

        self._check(profile)
        return DittoScenarioAdapter(self, profile, (options or {}).get("limits"))

    def contract_rule(self, rule: str) -> str:
        """The DITTO-* rule for a contract rule of the stream table (SPEC.md, decision DITTO-b)."""
        from .judge import CONTRACT_RULES

        return CONTRACT_RULES.get(rule, rule)

    def rules(self) -> list[str]:
        return [rule for rule in RULES if rule.startswith(self.rule_prefixes)]

    def report_notions(self, run: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The profile and the Ditto protocol it is (streaming subscription or things-search); Ditto has no hello."""
        from .report import notions

        return notions(run)

    def report_statistics(self, profile: str, traces: Iterable[Sequence[TraceRecord]]) -> list[WireTable]:
        """Envelopes by signal and demand per subscription (``report.py``)."""
        from .report import wire_statistics

        return wire_statistics(self, profile, traces)

    def liveness_probe(self, profile: str) -> Any:
        """The profile's subscribe (search: one thing, ``size(1)``; streaming: revision 0 of ``tck/range``),
        which must be answered ``created`` (DITTO-SUB-1) before any demand; any message is an answer."""
        self._check(profile)
        return _SubscribeProbe(profile)

    def pace_probe(self, profile: str) -> Any:
        """The liveness probe: Ditto has no opening of its own, so only an answer to the subscribe answers it."""
        return self.liveness_probe(profile)


class _SubscribeProbe:
    CORRELATION_ID = "rsio-tck-liveness"

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.asks = "search/subscribe" if profile == "search" else "subscribeForPersistedEvents"

    def opening(self) -> list[Any]:
        from .messages import SearchSubscribe, SubscribeForPersistedEvents, Target

        headers = {"correlation-id": self.CORRELATION_ID}
        if self.profile == "search":
            return [SearchSubscribe(headers=headers, filter="eq(attributes/tck,1)", options="size(1)")]
        return [SubscribeForPersistedEvents(target=Target(namespace="tck", entity_name="range"), headers=headers,
                                            from_revision=0, to_revision=0)]

    def answered(self, frame: Any) -> bool:
        return hasattr(frame, "topic")  # a Ditto message (created, failed, an error response); not a control line


class _NoBystander:
    async def open(self) -> bool:
        return False

    async def check(self) -> tuple[str, str] | None:
        return None


BINDING = DittoBinding()
