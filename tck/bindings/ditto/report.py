"""Ditto's part of a run's report: the profile the run spoke, and wire statistics from its traffic.

The statistics are computed from the run's traces, decoded as the monitor decodes them
(``rsio_tck.report.traffic.decoded``); a table with nothing to show is not returned.

- Envelopes by signal: messages per topic (criterion and action) and direction, with the
  contract signal each stands for (bindings.md §3); a message on another topic (an error
  response) counts under its topic, a line that is no Ditto message (WebSocket's
  ``START-SEND-EVENTS``) as ``(control message)``.
- Demand per subscription: the demand each side's ``request`` messages granted, per
  subscriptionId (per connection): subscriptions, requests, total, least and most per
  subscription, and the other side's ``next`` messages on them.  Streaming demand counts
  events, search demand pages; a demand of 0 or less (refused, DITTO-DEM-2) adds nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...binding import Cell, WireTable
from ...errors import Side
from ...monitor.trace import TraceRecord
from ...report.traffic import UNDECODABLE, by_direction, decoded, table_if_rows
from .signals import SIGNAL_OF

PROTOCOLS = {
    "streaming": "Ditto Protocol: streaming subscription (subscribeForPersistedEvents)",
    "search": "Ditto Protocol: things-search (search/subscribe)",
}


def notions(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    profile = str(run.get("profile") or "streaming")
    return [("profile", profile), ("protocol", PROTOCOLS.get(profile, profile))]


def signal_name(message: Any) -> str:
    """How the envelopes table names a message: its profile and action with the signal it stands for; another
    topic's criterion (and action); or ``(control message)``."""
    action = getattr(message, "action", None)
    if action is not None:  # one of the two profiles' messages
        return f"{message.profile} {action} ({SIGNAL_OF.get(action, 'no signal')})"
    topic = getattr(message, "topic", None)
    if topic is None:
        return "(control message)"
    return f"{topic.criterion} {topic.action}" if topic.action else str(topic.criterion)


def wire_statistics(binding: Any, profile: str, traces: Iterable[Sequence[TraceRecord]]) -> list[WireTable]:
    signals: Counter[tuple[str, Side]] = Counter()
    demand: dict[Side, dict[tuple[int, str], list[int]]] = {side: {} for side in Side}
    delivered: Counter[tuple[Side, int, str]] = Counter()  # (sender, connection, subscriptionId) -> next messages
    for number, records in enumerate(traces):
        for wire in decoded(binding, profile, records):
            message = wire.frame
            signals[(UNDECODABLE if message is None else signal_name(message), wire.sender)] += 1
            action = getattr(message, "action", None)
            if action == "request":
                grants = demand[wire.sender].setdefault((number, message.subscription_id), [])
                grants.append(message.demand)
            elif action == "next":
                delivered[(wire.sender, number, message.subscription_id)] += 1
    out = by_direction("envelopes-by-signal", "Envelopes by signal", "topic action (signal)", signals,
                       "Ditto messages decoded from the run's traces; (undecodable): a direction's bytes that stopped "
                       "decoding")
    rows: list[tuple[Cell, ...]] = []
    for side in Side:
        subscriptions = demand[side]
        if not subscriptions:
            continue
        totals = [sum(d for d in grants if d > 0) for grants in subscriptions.values()]
        nexts = sum(delivered[(side.peer, number, sid)] for number, sid in subscriptions)
        rows.append((side.value, len(subscriptions), sum(map(len, subscriptions.values())), sum(totals), min(totals),
                     max(totals), nexts))
    unit = "pages" if profile == "search" else "events"
    return out + table_if_rows("demand-per-subscription", "Demand per subscription", (
        "requested by", "subscriptions", "requests", "total demand", "least per subscription",
        "most per subscription", "next messages on them"), rows,
        f"the demand of every request per subscriptionId, in {unit}; a demand of 0 or less adds nothing")
