"""The reference peer's RS-IO binding: the ``PEER`` entry ``peer_binding`` finds for ``rsio``.

Theory of operation.  ``connection.RsioConnection`` is one connection: an asyncio Protocol
over the kit's sans-IO ``Connection``; its ``Policy`` (``policy``) makes every decision a
fault may replace (``faults/``), its ``Freedoms`` choose among legal variants, and
``flows``/``inflows`` carry the publications and subscriptions, fed by ``publishers``
(names to sources) and ``appflows`` (the application's own).  This module gathers what
the peer's shell needs behind the entry point ``peer_binding`` documents, so the
shell never imports an RS-IO module itself; it also gives the RS-IO library names
(``PeerConfig``, ``Publisher``, ``Subscriber``, ``Subscription``, ``FAULTS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgpack

from rsio_tck.bindings.rsio.wire import CODEC_NAMES, DEFAULT_LIMITS
from rsio_tck.errors import Side

from ..tiny_writes import checked as tiny_writes
from .appflows import AppPublisher, Publisher, Subscriber, Subscription
from .config import PeerConfig
from .connection import RsioConnection
from .faults import FAULTS, build_policy
from .freedoms import DELIBERATE_WARNINGS, ID_CHOICES
from .publishers import PublisherTable


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

    def publishers(self, *, test_publishers: bool) -> PublisherTable:
        return PublisherTable(test_publishers=test_publishers)

    def app_publisher(self, source: Any, element_size: int) -> AppPublisher:
        return AppPublisher(source, element_size)

    def connection(self, role: Side, context: Any, number: int, label: str) -> RsioConnection:
        return RsioConnection(role, context, number, label)

    def show(self, element: bytes) -> str:
        try:
            return repr(msgpack.unpackb(element, raw=False))
        except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
            return element.hex()

    def hostile_material(self, profile: str) -> Any:
        """RS-IO's bytes for the hostile modes (``--hostile``; ``hostile.py``, imported when asked)."""
        from .hostile import hostile_material as material

        return material(profile)


PEER = RsioPeer()

__all__ = ["FAULTS", "PEER", "PeerConfig", "Publisher", "RsioPeer", "Subscriber", "Subscription"]
