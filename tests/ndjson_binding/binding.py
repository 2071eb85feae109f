"""ndjson as a ``rsio_tck.binding.Binding``: everything the binding-neutral kit asks of a wire.

One profile (``lines``).  The binding keeps its own rules (``catalogue``, ``areas``, ``spec_text``:
a binding defined outside the kit does not edit the kit's SPEC.md), names its reference peer
(``peer_module``) and its capabilities format (``capabilities_format``), and has no client test
cases and no client program (its peer serves the server role only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rsio_tck.binding import CapabilitiesFormat, WireTable

from . import rules
from .adapter import NdjsonScenarioAdapter
from .wire import LineDecoder, LineEncoder, Message, NdjsonJudge

HERE = Path(__file__).resolve().parent
PROFILES = ("lines",)
PUBLISHERS = ("tck/range", "tck/infinite", "tck/error")


class NdjsonBinding:
    name = "ndjson"
    title = "ndjson (the seam's test binding)"
    profiles = PROFILES
    profile_word = "profile"
    rule_prefixes = (rules.PREFIX,)
    peer_module = f"{__package__}.peer"
    client_program: str | None = None

    def _check(self, profile: str) -> None:
        if profile not in PROFILES:
            raise ValueError(f"unknown ndjson profile {profile!r}; choose one of {', '.join(PROFILES)}")

    # -- the wire ------------------------------------------------------------------------------

    def decoder(self, profile: str, limits: Any = None) -> LineDecoder:
        self._check(profile)
        return LineDecoder()

    def encoder(self, profile: str, limits: Any = None) -> LineEncoder:
        self._check(profile)
        return LineEncoder()

    def judge(self, profile: str, limits: Any = None, *, contract: bool = True, keep: Any = None) -> NdjsonJudge:
        self._check(profile)
        return NdjsonJudge(keep)

    def describe(self, frame: Any) -> str:
        details = ", ".join(f"{k}={v!r}" for k, v in frame.to_json().items() if k != "op")
        return f"{frame.op}({details})"

    def endpoint(self, role: Any, profile: str, limits: Any = None, **options: Any) -> Any:
        raise ValueError("the ndjson binding has no sans-IO endpoint (rsio_tck.protocol.Connection)")

    # -- scenarios, capabilities, client tests, peer --------------------------------------------

    def scenario_adapter(self, profile: str, options: dict[str, Any] | None = None) -> NdjsonScenarioAdapter:
        self._check(profile)
        return NdjsonScenarioAdapter(self, profile)

    def capabilities_format(self) -> CapabilitiesFormat:
        return CapabilitiesFormat("ndjson_capabilities", HERE / "capabilities.schema.json",
                                  {"publishers": "", "profiles": "codec:"},
                                  PUBLISHERS + tuple(f"codec:{p}" for p in PROFILES))

    def client_tests(self) -> Sequence[Any]:
        return ()

    def liveness_frames(self) -> tuple[type, ...]:
        return ()

    def liveness_probe(self, profile: str) -> _Probe:
        self._check(profile)
        return _Probe()

    def pace_probe(self, profile: str) -> _Probe:
        return self.liveness_probe(profile)

    # -- rules: its own catalogue -----------------------------------------------------------------

    def catalogue(self) -> Sequence[Any]:
        return rules.CATALOGUE

    def areas(self) -> Mapping[str, str]:
        return rules.AREAS

    def spec_text(self) -> str:
        return rules.SPEC.read_text(encoding="utf-8")

    def rules(self) -> list[str]:
        return [rule.id for rule in rules.CATALOGUE]

    def contract_rule(self, rule: str) -> str:
        return rules.CONTRACT_RULES.get(rule, rule)

    # -- reports ----------------------------------------------------------------------------------

    def report_notions(self, run: Mapping[str, Any]) -> list[tuple[str, str]]:
        return [("Profile", f"{run.get('codec') or PROFILES[0]}: newline-delimited JSON, one signal per line "
                            "(tests/ndjson_binding/SPEC.md)")]

    def report_statistics(self, profile: str, traces: Iterable[Sequence[Any]]) -> list[WireTable]:
        return []


class _Probe:
    """A subscribe to one element of tck/range: any line answers it."""

    asks = "subscribe tck/range?count=1 with n 1"
    PROBE_ID = 2**31 - 1

    def opening(self) -> list[Any]:
        return [Message("subscribe", self.PROBE_ID, publisher="tck/range?count=1", n=1)]

    def answered(self, frame: Any) -> bool:
        return isinstance(frame, Message)


BINDING = NdjsonBinding()
