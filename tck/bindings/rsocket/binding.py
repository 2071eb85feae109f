"""RSocket as a ``Binding`` (see ``rsio_tck.binding``): two wire profiles, the RSocket judge, the RS-* rules.

Imports stay lazy (the codecs and the judge are loaded when first asked for), so
importing the package to reach ``BINDING`` is cheap and pulls in no other binding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...catalogue import RULES

if TYPE_CHECKING:
    from ...binding import WireTable
    from ...monitor.trace import TraceRecord

PROFILES = ("rsocket-1.0", "reactivesocket-draft")
# The capabilities file (bindings.md section 2): its tokens besides the profiles, and its schema, package data
# beside this module.
INTERACTIONS = ("request-response", "fire-and-forget", "request-stream", "request-channel", "metadata-push")
PUBLISHERS = ("tck/range", "tck/infinite", "tck/error", "tck/large", "tck/fnf", "tck/fnf-count", "tck/echo",
              "tck/subscribe")
FEATURES = ("fragmentation", "lease", "resume", "requester", "keepalive")
CAPABILITIES_SCHEMA = Path(__file__).with_name("capabilities.schema.json")


class RSocketBinding:
    name = "rsocket"
    title = "RSocket"  # how reports and the published site name the protocol
    profiles = PROFILES
    rule_prefixes = ("RS-",)
    # -- the seam's declarations (``rsio_tck.binding.Binding``) --
    profile_word = "profile"
    peer_module = "rsio_tck.reference_peer.rsocket"  # its reference peer
    client_program: str | None = "rsio_tck.reference_peer.rsocket.testcases"  # its peer's client program, for listen mode

    def capabilities_format(self) -> Any:
        from ...binding import CapabilitiesFormat

        return CapabilitiesFormat("rsocket_capabilities", CAPABILITIES_SCHEMA,
                                  {"publishers": "", "features": "", "interactions": "", "profiles": "codec:"},
                                  INTERACTIONS + PUBLISHERS + FEATURES + tuple(f"codec:{p}" for p in PROFILES))

    def client_tests(self) -> Any:
        from .client_tests import CLIENT_TESTS

        return CLIENT_TESTS

    def liveness_frames(self) -> tuple[type, ...]:
        from .frames import Keepalive

        return (Keepalive,)
    # -- end of the seam's declarations --

    def _profile(self, profile: str) -> Any:
        from .profiles import get_profile

        return get_profile(profile)

    def decoder(self, profile: str, limits: Any = None, *, length_prefix: bool = True) -> Any:
        """An incremental decoder; ``length_prefix=False`` for message transports (one frame per message)."""
        from .codec import RSocketLimits

        return self._profile(profile).decoder(limits if isinstance(limits, RSocketLimits) else None,
                                              length_prefix=length_prefix)

    def encoder(self, profile: str, limits: Any = None, *, length_prefix: bool = True) -> Any:
        from .codec import RSocketLimits

        return self._profile(profile).encoder(limits if isinstance(limits, RSocketLimits) else None,
                                              length_prefix=length_prefix)

    def judge(self, profile: str, limits: Any = None, *, contract: bool = True, keep: Any = None) -> Any:
        from .judge import RSocketJudge

        if profile not in PROFILES:
            raise ValueError(f"unknown RSocket profile {profile!r}; choose one of {', '.join(PROFILES)}")
        return RSocketJudge(profile, limits, contract=contract, keep=keep)

    def endpoint(self, role: Any, profile: str, limits: Any = None, **options: Any) -> Any:
        """RSocket's sans-IO endpoint (options: ``setup``, ``mtu``, ``length_prefix``, ``lease_grant``,
        ``enforce_lifetime``, ``now``)."""
        from .endpoint import Endpoint

        return Endpoint(role, profile, limits, **options)

    def scapy_layer(self) -> Any:
        """RSocket's scapy layer (``bind(port, profile)``, ``from_frame``, ``dissect_stream``)."""
        from . import scapy_layer

        return scapy_layer

    def fuzz_programs(self, profile: str, reassembly_limit: int | None = None) -> Any:
        """The hypothesis strategy of RSocket fuzz programs (requester scripts, legal or with one mutation)."""
        from .fuzz import fuzz_programs

        return fuzz_programs(profile, reassembly_limit)

    def fuzz_bystander(self, target: str, profile: str, timeout: float) -> Any:
        """No bystander: the RSocket catalogue has no rule about a connection's errors reaching other
        connections (RS-IO's ERR-3), so a second connection would judge nothing."""
        return _NoBystander()

    def row_fields(self, frame: Any) -> tuple[str, int | None, int, int]:
        """The pipeline's frame row of ``frame``: (type, stream id, data bytes, elements it carries)."""
        wire_name = getattr(frame, "wire_name", None)
        if wire_name is None:  # a PayloadRun: a frame has its wire name
            return "PAYLOAD", frame.stream_id, sum(map(len, frame.datas)), frame.count
        elements = 1 if getattr(frame, "next", False) and not getattr(frame, "follows", False) else 0
        return wire_name, getattr(frame, "stream_id", None), len(getattr(frame, "data", b"") or b""), elements

    def bug_report_terms(self) -> Any:
        """What a bug report says of RSocket (``rsio_tck.findings.terms.BugReportTerms``): Protocol.md, linked by
        line, and the rsocket organisation's issue template (``bug_report.py``)."""
        from .bug_report import TERMS

        return TERMS

    def wireshark_dissector(self) -> Any:
        """RSocket's Lua dissector (``rsio_tck.wireshark.Dissector``), package data of this package."""
        from importlib import resources
        from pathlib import Path

        from ...wireshark import Dissector

        return Dissector(binding=self.name, lua=Path(str(resources.files(__package__).joinpath("rsocket.lua"))),
                         protocol="rsocket", description="RSocket over TCP and WebSocket, both profiles (rsocket-1.0, reactivesocket-draft)")

    def websocket_framing(self, profile: str, limits: Any = None) -> Any:
        """One frame per binary message, no length prefix (``websocket.RSocketFraming``)."""
        from .codec import RSocketLimits
        from .websocket import RSocketFraming

        return RSocketFraming(self._profile(profile), limits if isinstance(limits, RSocketLimits) else None)

    def describe(self, frame: Any) -> str:
        from .runs import PayloadRun

        if isinstance(frame, PayloadRun):
            return f"PAYLOAD x{frame.count}(stream_id={frame.stream_id}, next=True)"
        from .frames import describe

        return describe(frame)

    def scenario_adapter(self, profile: str, options: dict[str, Any] | None = None) -> Any:
        """The scenario engine's adapter for one connection (``rsio_tck.binding.ScenarioAdapter``);
        ``options``: ``limits``, ``setup`` (SETUP fields replacing bindings.md's defaults)."""
        from .adapter import RSocketScenarioAdapter

        options = options or {}
        return RSocketScenarioAdapter(self, profile, options.get("limits"), options.get("setup"))

    def contract_rule(self, rule: str) -> str:
        """The RS-* rule for a contract rule of the stream table (SPEC.md, decision RS-i); other IDs unchanged."""
        from .interactions import CONTRACT_RULES

        return CONTRACT_RULES.get(rule, rule)

    def rules(self) -> list[str]:
        return [rule for rule in RULES if rule.startswith(self.rule_prefixes)]

    def report_notions(self, run: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The profile and the protocol it is (RSocket 1.0 or the ReactiveSocket draft); RSocket has no hello."""
        from .report import notions

        return notions(run)

    def report_statistics(self, profile: str, traces: Iterable[Sequence[TraceRecord]]) -> list[WireTable]:
        """Frames by type, fragmentation, credit per stream and keepalive round-trips (``report.py``)."""
        from .report import wire_statistics

        return wire_statistics(self, profile, traces)

    def liveness_probe(self, profile: str) -> Any:
        """SETUP, then KEEPALIVE with R (the draft has no R: its server answers every KEEPALIVE), answered by
        KEEPALIVE; an ERROR on stream 0 (SETUP refused) is an answer too."""
        from .adapter import RSocketScenarioAdapter

        if profile not in PROFILES:
            raise ValueError(f"unknown RSocket profile {profile!r}; choose one of {', '.join(PROFILES)}")
        return _KeepaliveProbe(RSocketScenarioAdapter(self, profile))

    def pace_probe(self, profile: str) -> Any:
        """The liveness probe: SETUP has no answer of its own, so only the KEEPALIVE answers, once the target
        read the probe."""
        return self.liveness_probe(profile)


class _KeepaliveProbe:
    def __init__(self, adapter: Any) -> None:
        self._adapter = adapter
        self.asks = "SETUP, then KEEPALIVE" + ("" if adapter.draft else " with R")

    def opening(self) -> list[Any]:
        return [*self._adapter.opening(), *self._adapter.keepalive()]

    def answered(self, frame: Any) -> bool:
        from .frames import Error, Keepalive

        # A KEEPALIVE with R is the target's own question, not the answer (a storm of them from a target that
        # never reads would otherwise pass for one); the draft has no R, and its server answers every KEEPALIVE.
        return (isinstance(frame, Keepalive) and not frame.respond
                or isinstance(frame, Error) and frame.stream_id == 0)


class _NoBystander:
    async def open(self) -> bool:
        return False

    async def check(self) -> tuple[str, str] | None:
        return None


BINDING = RSocketBinding()
