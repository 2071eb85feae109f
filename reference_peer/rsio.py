"""The reference peer's RS-IO binding: the ``PEER`` entry ``peer_registry`` finds for ``rsio``.

It gathers what the peer's shell needs from the RS-IO peer (``session.PeerSession``,
``config.PeerConfig``, ``faults``, the publisher ``registry``) behind the entry point
``peer_registry`` documents, so the shell never imports an RS-IO module itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack

from rsio_tck.bindings.rsio.wire import CODEC_NAMES, DEFAULT_LIMITS
from rsio_tck.errors import Side

from .appflows import AppPublisher
from .config import PeerConfig
from .faults import FAULTS, build_policy
from .freedoms import DELIBERATE_WARNINGS, ID_CHOICES
from .registry import Registry
from .session import PeerSession
from .tiny_writes import checked as tiny_writes


class RsioPeer:
    name = "rsio"
    profiles = CODEC_NAMES
    faults = FAULTS
    capabilities = Path(__file__).with_name("capabilities.json")
    deliberate_warnings = DELIBERATE_WARNINGS  # SHOULD rules its freedoms depart from on purpose (TCK-9)

    def config(self, profile: str, options: Mapping[str, Any]) -> PeerConfig:
        base = PeerConfig()

        def option(key: str, default: Any) -> Any:
            value = options.get(key)
            return default if value is None else value

        limits = replace(DEFAULT_LIMITS,
                         max_element=option("max_element", DEFAULT_LIMITS.max_element),
                         max_frame=option("max_frame", DEFAULT_LIMITS.max_frame),
                         max_reassembly=option("max_reassembly", DEFAULT_LIMITS.max_reassembly))
        write = option("write_buffer", base.write_high)
        config = PeerConfig(codec=profile, limits=limits,
                            max_subscriptions=option("max_subscriptions", base.max_subscriptions),
                            write_high=write, write_low=write // 4,
                            freedoms=option("freedoms", base.freedoms), seed=option("seed", base.seed),
                            wide_ints=option("wide_ints", base.wide_ints), ids=option("ids", base.ids),
                            tiny_writes=tiny_writes(option("tiny_writes", base.tiny_writes)),
                            faults=tuple(option("faults", ())),
                            split_threshold=option("split_threshold", base.split_threshold))
        build_policy(config.faults)  # ValueError names an unknown fault
        if config.ids is not None and config.ids not in ID_CHOICES:
            raise ValueError(f"--ids {config.ids!r}: the RS-IO peer picks Ids {', '.join(ID_CHOICES)}")
        return config

    def publishers(self, *, test_publishers: bool) -> Registry:
        return Registry(test_publishers=test_publishers)

    def app_publisher(self, source: Any, element_size: int) -> AppPublisher:
        return AppPublisher(source, element_size)

    def session(self, role: Side, context: Any, number: int, label: str) -> PeerSession:
        return PeerSession(role, context, number, label)

    def show(self, element: bytes) -> str:
        try:
            return repr(msgpack.unpackb(element, raw=False))
        except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
            return element.hex()

    def hostile_material(self, profile: str) -> Any:
        """RS-IO's bytes for the hostile modes (``--hostile``; ``rsio_hostile.py``, imported when asked)."""
        from .rsio_hostile import hostile_material as material

        return material(profile)


PEER = RsioPeer()
