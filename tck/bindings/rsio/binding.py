"""RS-IO as a ``Binding`` (see ``rsio_tck.binding``): its profiles are the two codecs of rsio-v0."""

from __future__ import annotations

from typing import Any

from ...rules import RULES


class RsioBinding:
    name = "rsio"
    profiles = ("msgpack", "varint")
    # Every area of the catalogue that is not another binding's belongs to RS-IO.
    rule_prefixes = ("HS-", "STR-", "DEM-", "ID-", "SPLIT-", "PACK-", "BYE-", "ERR-", "EXT-", "TCK-")

    def decoder(self, profile: str, limits: Any = None) -> Any:
        from .wire import get_codec

        return get_codec(profile).decoder(limits)

    def encoder(self, profile: str, limits: Any = None) -> Any:
        from .wire import get_codec

        return get_codec(profile).encoder(limits)

    def judge(self, profile: str, limits: Any = None, *, contract: bool = True, keep: Any = None) -> Any:
        from .judge import RsioJudge

        return RsioJudge(contract=contract, keep=keep)

    def describe(self, frame: Any) -> str:
        from .wire import describe

        return describe(frame)

    def contract_rule(self, rule: str) -> str:
        return rule  # the stream table speaks RS-IO's rule IDs

    def scenario_adapter(self, profile: str, options: dict[str, Any] | None = None) -> Any:
        """The scenario engine's adapter for one connection (``rsio_tck.binding.ScenarioAdapter``)."""
        from .scenario import RsioScenarioAdapter

        return RsioScenarioAdapter(self, profile, (options or {}).get("limits"))

    def rules(self) -> list[str]:
        return [rule for rule in RULES if rule.startswith(self.rule_prefixes)]


BINDING = RsioBinding()
