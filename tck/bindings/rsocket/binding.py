"""RSocket as a ``Binding`` (see ``rsio_tck.binding``): two wire profiles, the RSocket judge, the RS-* rules.

Imports stay lazy (the codecs and the judge are loaded when first asked for), so
importing the package to reach ``BINDING`` is cheap and pulls in no other binding.
"""

from __future__ import annotations

from typing import Any

from ...rules import RULES

PROFILES = ("rsocket-1.0", "reactivesocket-draft")


class RSocketBinding:
    name = "rsocket"
    profiles = PROFILES
    rule_prefixes = ("RS-",)

    def _profile(self, profile: str) -> Any:
        from . import get_profile

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

    def describe(self, frame: Any) -> str:
        from .runs import PayloadRun

        if isinstance(frame, PayloadRun):
            return f"PAYLOAD x{frame.count}(stream_id={frame.stream_id}, next=True)"
        from .frames import describe

        return describe(frame)

    def scenario_adapter(self, profile: str, options: dict[str, Any] | None = None) -> Any:
        """The scenario engine's adapter for one connection (``rsio_tck.binding.ScenarioAdapter``);
        ``options``: ``limits``, ``setup`` (SETUP fields replacing bindings.md's defaults)."""
        from .scenario import RSocketScenarioAdapter

        options = options or {}
        return RSocketScenarioAdapter(self, profile, options.get("limits"), options.get("setup"))

    def contract_rule(self, rule: str) -> str:
        """The RS-* rule for a contract rule of the stream table (SPEC.md, decision RS-i); other IDs unchanged."""
        from .interactions import CONTRACT_RULES

        return CONTRACT_RULES.get(rule, rule)

    def rules(self) -> list[str]:
        return [rule for rule in RULES if rule.startswith(self.rule_prefixes)]


BINDING = RSocketBinding()
