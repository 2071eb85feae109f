"""Reading and writing Ditto Protocol messages: JSON text <-> envelope <-> the profiles' messages.

Theory of operation.  ``decode_message`` takes one whole JSON text (a TCP line
or a WebSocket text message, see ``framing``) through three steps, each with
its own rules: the text must be one JSON object (DITTO-ENV-1/2); its envelope
members must have their types, and the topic must parse (DITTO-ENV-3..9,
DITTO-HDR, DITTO-TOPIC); then, when the topic's criterion is ``streaming`` or
``search``, one small *reader* per message kind checks the path and the value
(the kind's JSON Schema, from ``schemas``) and builds the message.  Any other
topic comes back as the generic ``Envelope``.  Every failure is a
``ProtocolViolation`` whose one-line message names the message kind and the
field; no exception of the JSON parser or of the schema library escapes.

``encode_message`` is the inverse: ``_value_of`` builds each kind's value
(the members its schema names, then ``value_other``), and the envelope members
are written in Ditto's order (topic, headers, path, value, then the rest).  Encoders write what they are given,
legal or not, so faults can build bad messages; only what JSON cannot carry
raises ValueError.  Reading then writing gives back the same JSON, member
order aside (DECISIONS.md lists the two normalisations).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...errors import ProtocolViolation
from .messages import (
    MESSAGE_CLASSES,
    MISSING,
    Decoded,
    Envelope,
    ErrorInfo,
    Message,
    SearchFailed,
    SearchNext,
    SearchRequest,
    SearchSubscribe,
    StreamingFailed,
    StreamingNext,
    StreamingRequest,
    SubscribeForPersistedEvents,
    Target,
)
from .rules import RULES
from .schemas import check_value, json_kind, with_article
from .topic import Topic, parse_topic

DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024  # kit: bytes of one line / characters of one WebSocket text message


@dataclass(frozen=True, slots=True, kw_only=True)
class DittoLimits:
    max_message: int = DEFAULT_MAX_MESSAGE


DEFAULT_LIMITS = DittoLimits()

_ENVELOPE_MEMBERS = ("topic", "headers", "path", "value")
_JSON_POINTER = re.compile(r"(/([^~]|~[01])*)*")


def violation(rule: str, message: str, offset: int | None = None) -> ProtocolViolation:
    """A violation whose message ends with the rule's title, so the one line explains itself."""
    return ProtocolViolation(rule=rule, side=None, offset=offset, message=f"{message}; rule: {RULES[rule].title}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# One reader and two writers for every message: json.loads and json.dumps with any option build a new
# decoder or encoder per call, which cost a floods' messages 2 us each of the 5 us the parse itself takes.
_JSON_READER = json.JSONDecoder(parse_constant=_reject_constant)
_JSON_WRITER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_JSON_WRITER_ASCII = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


# -- reading ------------------------------------------------------------------------------


def parse_json(raw: str | bytes, limits: DittoLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """One JSON object from ``raw`` (DITTO-LINE-1, DITTO-ENV-1, DITTO-ENV-2)."""
    if len(raw) > limits.max_message:
        unit = "characters" if isinstance(raw, str) else "bytes"
        raise violation("DITTO-LINE-1", f"message of {len(raw)} {unit} is over the limit of {limits.max_message}")
    if isinstance(raw, (bytes, bytearray, memoryview)):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise violation("DITTO-ENV-1", f"message is not UTF-8 (byte {exc.start})") from None
    try:
        obj = _JSON_READER.decode(raw)
    except json.JSONDecodeError as exc:
        raise violation("DITTO-ENV-1", f"message is not JSON: {exc.msg} at character {exc.pos}") from None
    except ValueError as exc:  # NaN/Infinity, or an integer of more digits than Python converts
        raise violation("DITTO-ENV-1", f"message is not JSON: {exc}") from None
    except RecursionError:
        # Deep nesting is legal JSON (RFC 8259 section 9 lets a reader limit it), so the depth alone breaks no rule
        # the kit could name; but a text that opens with an array is not an object, whatever is inside.
        if raw.lstrip(" \t\r\n").startswith("["):
            raise violation("DITTO-ENV-2", "message is a JSON array (nested too deeply to read further), "
                            "not an object") from None
        raise violation("DITTO-ENV-1", "message is not JSON the kit can read: nested too deeply") from None
    if not isinstance(obj, dict):
        raise violation("DITTO-ENV-2", f"message is a JSON {json_kind(obj)}, not an object")
    return obj


def decode_envelope(obj: Mapping[str, Any]) -> Envelope:
    """The generic envelope of a parsed message; the DITTO-ENV, DITTO-HDR and DITTO-TOPIC rules."""
    topic, headers, path, value, status, other = _envelope_parts(obj)
    return Envelope(topic=topic, headers=headers, path=path, value=value, status=status, other=other)


def _envelope_parts(obj: Mapping[str, Any]) -> tuple[Topic, dict[str, Any], str | None, Any, int | None,
                                                     dict[str, Any]]:
    """The envelope's members, checked: topic, headers, path, value, status and the other members (a new dict).
    ``read_message`` takes them without making the ``Envelope`` a profile's message would replace."""
    topic_text = obj.get("topic", MISSING)
    if topic_text is MISSING:
        raise violation("DITTO-ENV-3", "envelope has no topic")
    if not isinstance(topic_text, str):
        raise violation("DITTO-ENV-3", f"topic is {with_article(json_kind(topic_text))}, not a string")
    topic = parse_topic(topic_text)
    headers = obj.get("headers", {})  # absent headers read as none (DECISIONS.md 1)
    if not isinstance(headers, dict):
        raise violation("DITTO-ENV-4", f"{topic}: headers is {with_article(json_kind(headers))}, not an object")
    _check_headers(topic, headers)
    # An explicit null is not an absent member: it is judged (and rejected) like any other wrong type.
    path = obj.get("path", MISSING)
    if path is not MISSING and (not isinstance(path, str) or not _JSON_POINTER.fullmatch(path)):
        raise violation("DITTO-ENV-5", f"{topic}: path {path!r} is not a JSON Pointer string")
    status = obj.get("status", MISSING)
    if status is not MISSING and (type(status) is not int or not 100 <= status <= 599):
        raise violation("DITTO-ENV-6", f"{topic}: status {status!r} is not an HTTP status code")
    fields = obj.get("fields", MISSING)
    if fields is not MISSING and not isinstance(fields, str):
        raise violation("DITTO-ENV-9", f"{topic}: fields is {with_article(json_kind(fields))}, not a string")
    other = {k: v for k, v in obj.items() if k not in _ENVELOPE_MEMBERS and k != "status"}
    return (topic, headers, None if path is MISSING else path, obj.get("value", MISSING),
            None if status is MISSING else status, other)


def _check_headers(topic: Topic, headers: Mapping[str, Any]) -> None:
    seen: dict[str, str] = {}
    for name, value in headers.items():
        lowered = name.lower()
        if lowered in seen:
            raise violation("DITTO-HDR-1", f"{topic}: headers {seen[lowered]!r} and {name!r} differ only in case")
        seen[lowered] = name
        if lowered == "correlation-id" and not isinstance(value, str):
            raise violation("DITTO-HDR-2", f"{topic}: header {name} is {with_article(json_kind(value))}, not a string")


def decode_message(raw: str | bytes, limits: DittoLimits = DEFAULT_LIMITS) -> Decoded:
    """One whole Ditto Protocol message: a profile's message, or the generic ``Envelope`` for other topics."""
    return read_message(parse_json(raw, limits))


def read_message(obj: Mapping[str, Any]) -> Decoded:
    """A parsed JSON object as a message (see ``decode_message``)."""
    topic, headers, path, value, status, other = _envelope_parts(obj)
    key = (topic.criterion, topic.action or "")
    if key not in READERS:
        return Envelope(topic=topic, headers=headers, path=path, value=value, status=status, other=other)
    what, target = _reading_of(topic)
    if path != "/":
        raise violation("DITTO-ENV-8", f"{what}: path is {'missing' if path is None else repr(path)}, not '/'")
    if value is MISSING:
        raise violation("DITTO-ENV-7", f"{what}: value is missing")
    check_value(topic.criterion, topic.action or "", value, what)
    if status is not None:
        other["status"] = status
    return READERS[key](_Read(what=what, target=target, headers=headers, value=value, other=other))


# A connection's messages repeat a handful of topics (as ``parse_topic``'s cache says): each topic's name for
# error lines and its ``Target`` are made once.  Both are immutable, so sharing them is safe.
@lru_cache(maxsize=1024)
def _reading_of(topic: Topic) -> tuple[str, Target]:
    """What error lines call a message of ``topic``, and the ``Target`` it addresses."""
    target = Target(namespace=topic.namespace, entity_name=topic.entity_name, group=topic.group,
                    channel=topic.channel)
    return f"{topic.criterion} {topic.action} ({topic})", target


@dataclass(frozen=True, slots=True, kw_only=True)
class _Read:
    """What a reader gets: the envelope's parts, its value already checked against the kind's schema."""

    what: str
    target: Target
    headers: Mapping[str, Any]
    value: dict[str, Any]
    other: dict[str, Any]

    def common(self, *named: str) -> dict[str, Any]:
        """The keyword arguments every message takes; ``named`` are the value members the reader consumes."""
        return {
            "target": self.target,
            "headers": self.headers,
            "value_other": {k: v for k, v in self.value.items() if k not in named},
            "other": self.other,
        }


def _demand(read: _Read, rule: str) -> int:
    demand = read.value["demand"]
    if type(demand) is not int:
        raise violation(rule, f"{read.what}: value/demand {demand!r} is not an integer")
    return demand


def _error(read: _Read) -> ErrorInfo:
    error = read.value["error"]
    known = ("status", "error", "message", "description")
    return ErrorInfo(
        status=error.get("status"),
        error=error.get("error"),
        message=error.get("message"),
        description=error.get("description"),
        other={k: v for k, v in error.items() if k not in known},
    )


def _read_subscribe_for_persisted_events(read: _Read) -> Message:
    v = read.value
    names = ("fromHistoricalRevision", "toHistoricalRevision", "fromHistoricalTimestamp", "toHistoricalTimestamp")
    return SubscribeForPersistedEvents(
        from_revision=v.get(names[0]),
        to_revision=v.get(names[1]),
        from_timestamp=v.get(names[2]),
        to_timestamp=v.get(names[3]),
        filter=v.get("filter"),
        **read.common(*names, "filter"),
    )


def _read_subscribe(read: _Read) -> Message:
    v = read.value
    other = dict(read.other)
    fields = other.pop("fields", None)
    namespaces = v.get("namespaces")
    args = read.common("filter", "options", "namespaces") | {"other": other}
    return SearchSubscribe(
        filter=v.get("filter"),
        options=v.get("options"),
        namespaces=None if namespaces is None else tuple(namespaces),
        fields=fields,
        **args,
    )


def _subscription_id_only(profile: str, action: str) -> Callable[[_Read], Message]:
    cls: Any = MESSAGE_CLASSES[(profile, action)]

    def read(r: _Read) -> Message:
        message: Message = cls(subscription_id=r.value["subscriptionId"], **r.common("subscriptionId"))
        return message

    return read


READERS: dict[tuple[str, str], Callable[[_Read], Message]] = {
    ("streaming", "subscribeForPersistedEvents"): _read_subscribe_for_persisted_events,
    ("streaming", "request"): lambda r: StreamingRequest(
        subscription_id=r.value["subscriptionId"],
        demand=_demand(r, "DITTO-STREAM-2"),
        **r.common("subscriptionId", "demand"),
    ),
    ("streaming", "next"): lambda r: StreamingNext(
        subscription_id=r.value["subscriptionId"], item=r.value["item"], **r.common("subscriptionId", "item")
    ),
    ("streaming", "failed"): lambda r: StreamingFailed(
        subscription_id=r.value["subscriptionId"], error=_error(r), **r.common("subscriptionId", "error")
    ),
    ("search", "subscribe"): _read_subscribe,
    ("search", "request"): lambda r: SearchRequest(
        subscription_id=r.value["subscriptionId"],
        demand=_demand(r, "DITTO-SEARCH-2"),
        **r.common("subscriptionId", "demand"),
    ),
    ("search", "next"): lambda r: SearchNext(
        subscription_id=r.value["subscriptionId"],
        items=tuple(r.value["items"]),
        **r.common("subscriptionId", "items"),
    ),
    ("search", "failed"): lambda r: SearchFailed(
        subscription_id=r.value["subscriptionId"], error=_error(r), **r.common("subscriptionId", "error")
    ),
}
READERS.update(
    {
        (profile, action): _subscription_id_only(profile, action)
        for profile in ("streaming", "search")
        for action in ("cancel", "created", "complete")
    }
)


# -- writing --------------------------------------------------------------------------------


def _present(**members: Any) -> dict[str, Any]:
    return {k: v for k, v in members.items() if v is not None}


def _error_json(error: ErrorInfo) -> dict[str, Any]:
    known = _present(status=error.status, error=error.error, message=error.message, description=error.description)
    return known | dict(error.other)


def _value_of(message: Message) -> dict[str, Any]:
    """The ``value`` of a profile message (before ``value_other``)."""
    if isinstance(message, SubscribeForPersistedEvents):
        return _present(
            fromHistoricalRevision=message.from_revision,
            toHistoricalRevision=message.to_revision,
            fromHistoricalTimestamp=message.from_timestamp,
            toHistoricalTimestamp=message.to_timestamp,
            filter=message.filter,
        )
    if isinstance(message, SearchSubscribe):
        namespaces = None if message.namespaces is None else list(message.namespaces)
        return _present(filter=message.filter, options=message.options, namespaces=namespaces)
    value: dict[str, Any] = {"subscriptionId": message.subscription_id}
    if isinstance(message, (StreamingRequest, SearchRequest)):
        value["demand"] = message.demand
    elif isinstance(message, StreamingNext):
        value["item"] = message.item
    elif isinstance(message, SearchNext):
        value["items"] = list(message.items)
    elif isinstance(message, (StreamingFailed, SearchFailed)):
        value["error"] = _error_json(message.error)
    return value


def to_json_object(message: Decoded) -> dict[str, Any]:
    """The JSON object of ``message``: topic, headers, path, value, then the other members."""
    if isinstance(message, Envelope):
        obj: dict[str, Any] = {"topic": str(message.topic), "headers": dict(message.headers)}
        if message.path is not None:
            obj["path"] = message.path
        if message.value is not MISSING:
            obj["value"] = message.value
        if message.status is not None:
            obj["status"] = message.status
        return obj | dict(message.other)
    obj = {
        "topic": str(message.topic),
        "headers": dict(message.headers),
        "path": "/",
        "value": _value_of(message) | dict(message.value_other),
    }
    if isinstance(message, SearchSubscribe) and message.fields is not None:
        obj["fields"] = message.fields
    return obj | dict(message.other)


def encode_message(message: Decoded) -> str:
    """One compact JSON text (no newline in it: JSON escapes control characters inside strings).

    Non-ASCII text is written as itself, as Ditto does; a string holding a lone
    surrogate (which JSON's ``\\ud800`` escape can carry but UTF-8 cannot) makes
    the whole text ASCII with escapes, so that it stays UTF-8-encodable.
    """
    try:
        obj = to_json_object(message)
        text = _JSON_WRITER.encode(obj)
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                text = _JSON_WRITER_ASCII.encode(obj)
        return text
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cannot encode {message.topic}: {exc}") from None
