"""The Ditto Protocol messages of the two profiles, and the generic envelope, as frozen values.

Every message is a frozen, keyword-only dataclass that checks nothing on
construction, so a test or a fault can build any message, legal or not; the
codec judges what it reads.  ``profile`` and ``action`` (class attributes) give
the topic's criterion and action; ``target`` gives the rest of the topic
(namespace, entity name, group, channel).  The streaming profile addresses an
entity (``tck/range`` ...); the search profile addresses none (``_/_``).

Fields a message does not name are kept, so that what is read is written back
unchanged: ``value_other`` holds members of ``value`` the schema does not name,
``other`` holds envelope members other than topic, headers, path and value
(``status``, ``extra``, ...).  ``headers`` keeps the sender's names and order;
``correlation_id`` looks it up case-insensitively, as Ditto does.

A message on a topic outside the two profiles (an error response, a twin
event, ...) decodes to the generic ``Envelope``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, Union

from .topic import Topic


class _Missing:
    """The absent ``value`` of an envelope (JSON null is a value)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


def header(headers: Mapping[str, Any], name: str) -> Any:
    """The value of header ``name``, matched case-insensitively; None when absent."""
    lowered = name.lower()
    return next((value for key, value in headers.items() if key.lower() == lowered), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """What a topic addresses: the part before the criterion."""

    namespace: str
    entity_name: str
    group: str = "things"
    channel: str | None = "twin"


SEARCH_TARGET = Target(namespace="_", entity_name="_")


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope:
    """Any Ditto Protocol message, uninterpreted beyond the envelope."""

    topic: Topic
    headers: Mapping[str, Any] = field(default_factory=dict)
    path: str | None = "/"
    value: Any = MISSING
    status: int | None = None
    other: Mapping[str, Any] = field(default_factory=dict)

    @property
    def correlation_id(self) -> Any:
        return header(self.headers, "correlation-id")


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorInfo:
    """The ``error`` of a ``failed`` event (every member optional in Ditto's schema)."""

    status: int | None = None
    error: str | None = None  # the error code, e.g. "thing-search:subscription.protocol.error"
    message: str | None = None
    description: str | None = None
    other: Mapping[str, Any] = field(default_factory=dict)


# A connection's messages address a handful of targets, and describing, judging and writing each asks for its
# topic: each is made once.  Topics are frozen, so a cached one is safe to share.
@lru_cache(maxsize=1024)
def _topic_of(target: Target, profile: str, action: str) -> Topic:
    return Topic(namespace=target.namespace, entity_name=target.entity_name, group=target.group,
                 channel=target.channel, criterion=profile, action=action)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Message:
    profile: ClassVar[str]
    action: ClassVar[str]
    target: Target
    headers: Mapping[str, Any] = field(default_factory=dict)
    value_other: Mapping[str, Any] = field(default_factory=dict)
    other: Mapping[str, Any] = field(default_factory=dict)

    @property
    def correlation_id(self) -> Any:
        return header(self.headers, "correlation-id")

    @property
    def topic(self) -> Topic:
        return _topic_of(self.target, self.profile, self.action)


# -- the streaming profile (protocol-specification-streaming-subscription.md) --------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _Streaming(_Message):
    profile: ClassVar[str] = "streaming"


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscribeForPersistedEvents(_Streaming):
    action: ClassVar[str] = "subscribeForPersistedEvents"
    from_revision: int | None = None
    to_revision: int | None = None
    from_timestamp: str | None = None
    to_timestamp: str | None = None
    filter: str | None = None  # an RQL expression


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamingRequest(_Streaming):
    action: ClassVar[str] = "request"
    subscription_id: str
    demand: int


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamingCancel(_Streaming):
    action: ClassVar[str] = "cancel"
    subscription_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamingCreated(_Streaming):
    action: ClassVar[str] = "created"
    subscription_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamingNext(_Streaming):
    action: ClassVar[str] = "next"
    subscription_id: str
    item: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamingComplete(_Streaming):
    action: ClassVar[str] = "complete"
    subscription_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamingFailed(_Streaming):
    action: ClassVar[str] = "failed"
    subscription_id: str
    error: ErrorInfo


# -- the search profile (protocol-specification-things-search.md) --------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _Search(_Message):
    profile: ClassVar[str] = "search"
    target: Target = SEARCH_TARGET


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchSubscribe(_Search):
    action: ClassVar[str] = "subscribe"
    filter: str | None = None  # an RQL expression
    options: str | None = None  # e.g. "size(25),sort(+thingId)"
    namespaces: tuple[str, ...] | None = None
    fields: str | None = None  # an envelope member, not inside value


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchRequest(_Search):
    action: ClassVar[str] = "request"
    subscription_id: str
    demand: int  # pages, not things


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchCancel(_Search):
    action: ClassVar[str] = "cancel"
    subscription_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchCreated(_Search):
    action: ClassVar[str] = "created"
    subscription_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchNext(_Search):
    action: ClassVar[str] = "next"
    subscription_id: str
    items: tuple[Any, ...]  # one page


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchComplete(_Search):
    action: ClassVar[str] = "complete"
    subscription_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchFailed(_Search):
    action: ClassVar[str] = "failed"
    subscription_id: str
    error: ErrorInfo


StreamingMessage = Union[
    SubscribeForPersistedEvents,
    StreamingRequest,
    StreamingCancel,
    StreamingCreated,
    StreamingNext,
    StreamingComplete,
    StreamingFailed,
]
SearchMessage = Union[
    SearchSubscribe, SearchRequest, SearchCancel, SearchCreated, SearchNext, SearchComplete, SearchFailed
]
Message = Union[StreamingMessage, SearchMessage]
Decoded = Union[Message, Envelope]

MESSAGE_CLASSES: dict[tuple[str, str], type[_Message]] = {
    (cls.profile, cls.action): cls
    for cls in (
        SubscribeForPersistedEvents,
        StreamingRequest,
        StreamingCancel,
        StreamingCreated,
        StreamingNext,
        StreamingComplete,
        StreamingFailed,
        SearchSubscribe,
        SearchRequest,
        SearchCancel,
        SearchCreated,
        SearchNext,
        SearchComplete,
        SearchFailed,
    )
}
