"""Ditto Protocol topics: ``{namespace}/{entity-name}/{group}/{channel}/{criterion}/{action}``.

``parse_topic`` splits a topic into a ``Topic`` and judges it against the topic
page's tables (protocol-specification-topic.md): the group, whether the group
takes a channel, the criterion, and the actions each criterion allows.  The
streaming criterion, which the topic page does not list, comes from the
streaming-subscription page.  ``str(topic)`` writes it back unchanged.

The topic page draws the channel as a segment of its own for ``things`` and
leaves it out for ``policies`` and ``connections``; so the group decides how
many segments come before the criterion.  A ``messages`` action is a message
subject and may itself hold slashes; every other action is one segment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...errors import ProtocolViolation
from .rules import RULES

PLACEHOLDER = "_"  # the namespace and entity name of topics that address no one entity (search)

GROUPS_WITH_CHANNEL = frozenset({"things"})
GROUPS = frozenset({"things", "policies", "connections"})
CHANNELS = frozenset({"twin", "live"})

STREAMING_ACTIONS = ("subscribeForPersistedEvents", "request", "cancel", "created", "next", "complete", "failed")
SEARCH_ACTIONS = ("subscribe", "request", "cancel", "created", "next", "complete", "failed")

# criterion -> the actions it allows (a tuple), or a pattern every action must match; None: no action.
_ACK_LABEL = re.compile(r"[a-zA-Z0-9\-_:]{3,100}")
_ANY = re.compile(r".+", re.DOTALL)
ACTIONS: dict[str, tuple[str, ...] | re.Pattern[str] | None] = {
    "commands": ("create", "retrieve", "modify", "merge", "delete", "migrate"),
    "events": ("created", "modified", "merged", "deleted", "migrated"),
    "search": SEARCH_ACTIONS,
    "streaming": STREAMING_ACTIONS,
    "messages": _ANY,  # the message subject
    "errors": None,
    "acks": _ACK_LABEL,  # the acknowledgement label; absent on an aggregate of acknowledgements
    "announcements": _ANY,  # the announcement name
}
ACTION_OPTIONAL = frozenset({"acks"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Topic:
    namespace: str
    entity_name: str
    group: str = "things"
    channel: str | None = "twin"  # None for policies and connections
    criterion: str
    action: str | None = None

    def __str__(self) -> str:
        parts = [self.namespace, self.entity_name, self.group]
        if self.channel is not None:
            parts.append(self.channel)
        parts.append(self.criterion)
        if self.action is not None:
            parts.append(self.action)
        return "/".join(parts)


def _bad(rule: str, text: str, problem: str) -> ProtocolViolation:
    return ProtocolViolation(rule=rule, side=None, message=f"topic {text!r}: {problem}; rule: {RULES[rule].title}")


# A connection's events repeat a handful of topics: each is parsed once (a bad one raises every time: an
# exception is never cached).  Topics are frozen, so a cached one is safe to share.
@lru_cache(maxsize=1024)
def parse_topic(text: str) -> Topic:
    """The ``Topic`` of ``text``; ``ProtocolViolation`` (a DITTO-TOPIC rule) naming the bad segment."""
    parts = text.split("/")
    if len(parts) < 4:
        raise _bad("DITTO-TOPIC-1", text, f"{len(parts)} segments, at least 4 needed")
    namespace, entity_name, group = parts[0], parts[1], parts[2]
    for name, segment in (("namespace", namespace), ("entity name", entity_name), ("group", group)):
        if not segment:
            raise _bad("DITTO-TOPIC-1", text, f"empty {name}")
    if group not in GROUPS:
        raise _bad("DITTO-TOPIC-2", text, f"group {group!r} is none of {', '.join(sorted(GROUPS))}")
    rest = parts[3:]
    channel: str | None = None
    if group in GROUPS_WITH_CHANNEL:
        channel = rest.pop(0)
        if channel not in CHANNELS:
            raise _bad("DITTO-TOPIC-3", text, f"channel {channel!r} of a {group} topic is neither twin nor live")
    elif rest[0] in CHANNELS:
        raise _bad("DITTO-TOPIC-3", text, f"a {group} topic has no channel, but {rest[0]!r} is there")
    if not rest or not rest[0]:
        raise _bad("DITTO-TOPIC-1", text, "no criterion")
    criterion, action_parts = rest[0], rest[1:]
    if criterion not in ACTIONS:
        raise _bad("DITTO-TOPIC-4", text, f"unknown criterion {criterion!r}")
    action = _action(text, criterion, action_parts)
    topic = Topic(
        namespace=namespace, entity_name=entity_name, group=group, channel=channel, criterion=criterion, action=action
    )
    if criterion == "search" and (group, channel) != ("things", "twin"):
        raise _bad("DITTO-TOPIC-6", text, f"search on {group}/{channel or 'no channel'}")
    if criterion == "streaming" and (group, channel) not in (("things", "twin"), ("policies", None)):
        raise _bad("DITTO-TOPIC-7", text, f"streaming on {group}/{channel or 'no channel'}")
    return topic


def _action(text: str, criterion: str, parts: list[str]) -> str | None:
    allowed = ACTIONS[criterion]
    if not parts:
        if allowed is None or criterion in ACTION_OPTIONAL:
            return None
        raise _bad("DITTO-TOPIC-5", text, f"a {criterion} topic needs an action")
    if allowed is None:
        raise _bad("DITTO-TOPIC-5", text, f"a {criterion} topic has no action, but {'/'.join(parts)!r} follows")
    if allowed is not _ANY and len(parts) > 1:
        raise _bad("DITTO-TOPIC-5", text, f"the {criterion} action is one segment, not {'/'.join(parts)!r}")
    action = "/".join(parts)
    if isinstance(allowed, tuple):
        if action not in allowed:
            raise _bad("DITTO-TOPIC-5", text, f"{action!r} is no {criterion} action ({', '.join(allowed)})")
    elif not allowed.fullmatch(action):
        raise _bad("DITTO-TOPIC-5", text, f"{criterion} action {action!r} is not of the form {allowed.pattern}")
    return action
