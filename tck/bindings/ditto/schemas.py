"""Ditto's own JSON Schemas of the streaming-subscription and search payloads, and the check against them.

The schemas are Ditto's files, copied unchanged into ``schemas/`` (see
``schemas/SOURCE.md``) and loaded once as package data.  Each message kind has
one schema and one rule; ``check_value`` raises that rule's ``ProtocolViolation``
with a one-line message naming the message, the field (as a path inside
``value``) and what is wrong with it.  The schemas are draft-04; ``date-time``
formats are judged (jsonschema's format checker, with rfc3339-validator).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from ...errors import ProtocolViolation
from .rules import RULES

# message (profile, action) -> (schema file, rule)
SCHEMA_OF: dict[tuple[str, str], tuple[str, str]] = {
    ("streaming", "subscribeForPersistedEvents"): (
        "protocol-streaming-subscription-subscribe-for-persisted-events-payload.json",
        "DITTO-STREAM-1",
    ),
    ("streaming", "request"): ("protocol-streaming-subscription-request-payload.json", "DITTO-STREAM-2"),
    ("streaming", "cancel"): ("protocol-streaming-subscriptionid.json", "DITTO-STREAM-3"),
    ("streaming", "created"): ("protocol-streaming-subscriptionid.json", "DITTO-STREAM-3"),
    ("streaming", "complete"): ("protocol-streaming-subscriptionid.json", "DITTO-STREAM-3"),
    ("streaming", "next"): ("protocol-streaming-subscription-next-payload.json", "DITTO-STREAM-4"),
    ("streaming", "failed"): ("protocol-streaming-subscription-failed-payload.json", "DITTO-STREAM-5"),
    ("search", "subscribe"): ("protocol-search-subscribe-payload.json", "DITTO-SEARCH-1"),
    ("search", "request"): ("protocol-search-request-payload.json", "DITTO-SEARCH-2"),
    ("search", "cancel"): ("protocol-search-subscriptionid.json", "DITTO-SEARCH-3"),
    ("search", "created"): ("protocol-search-subscriptionid.json", "DITTO-SEARCH-3"),
    ("search", "complete"): ("protocol-search-subscriptionid.json", "DITTO-SEARCH-3"),
    ("search", "next"): ("protocol-search-next-payload.json", "DITTO-SEARCH-4"),
    ("search", "failed"): ("protocol-search-failed-payload.json", "DITTO-SEARCH-5"),
}


def load_schema(name: str) -> dict[str, Any]:
    """One of Ditto's schema files, parsed."""
    schema: dict[str, Any] = json.loads(resources.files(__package__).joinpath("schemas", name).read_text("utf-8"))
    return schema


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


# The JSON types a schema without nested constraints names, as the exact Python types of parsed values that
# jsonschema's draft-04 type checker accepts for them ("number" is an int or a float, never a bool, whose type is
# bool; "integer" is left to jsonschema, as drafts differ on 1.0).  A value of any other type, a subclass
# included, is left to jsonschema.
_PLAIN_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "array": (list,), "object": (dict,),
                                             "number": (int, float)}
_ANNOTATIONS = frozenset({"$schema", "description", "title"})


@cache
def _plain_shape(name: str) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[type, ...] | None], ...]] | None:
    """(required members, (member, its type or None for any)) when schema ``name`` is an object whose members
    have at most a plain type (``_PLAIN_TYPES``) and nothing else is constrained; else None.  A value of that
    shape is valid without asking jsonschema, whose per-value cost dominated floods of ``next`` events."""
    schema = load_schema(name)
    if set(schema) - _ANNOTATIONS - {"type", "properties", "required"} or schema.get("type") != "object":
        return None
    members: list[tuple[str, tuple[type, ...] | None]] = []
    for member, sub in schema.get("properties", {}).items():
        extra = set(sub) - _ANNOTATIONS - {"type"}
        if extra or ("type" in sub and sub["type"] not in _PLAIN_TYPES):
            return None
        members.append((member, _PLAIN_TYPES[sub["type"]] if "type" in sub else None))
    return tuple(schema.get("required", ())), tuple(members)


def _plainly_valid(name: str, value: Any) -> bool:
    """True when ``value`` is valid by ``_plain_shape`` alone; False means ask jsonschema (valid or not)."""
    shape = _plain_shape(name)
    if shape is None or type(value) is not dict:
        return False
    required, members = shape
    for member in required:
        if member not in value:
            return False
    for member, kind in members:
        if kind is not None and member in value and type(value[member]) not in kind:
            return False
    return True


def _where(error: jsonschema.ValidationError) -> str:
    """``value/error/status`` for an error inside the value; a missing member is named as if present."""
    parts = ["value", *(str(p) for p in error.absolute_path)]
    if error.validator == "required":
        # jsonschema reports a missing member at the object; name the member itself.
        missing = next((m for m in error.validator_value if m not in error.instance), None)
        if missing is not None:
            parts.append(missing)
    return "/".join(parts)


def _problem(error: jsonschema.ValidationError) -> str:
    if error.validator == "required":
        return "is missing"
    if error.validator == "type":
        return f"is {with_article(json_kind(error.instance))}, not {with_article(str(error.validator_value))}"
    if error.validator == "format":
        return f"{error.instance!r} is not a {error.validator_value}"
    return error.message


def with_article(kind: str) -> str:
    """``kind`` with its indefinite article: "an array", "a string"."""
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


def json_kind(value: Any) -> str:
    """The JSON type of a parsed value, for messages: "null", "boolean", "number", "string", "array", "object"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def check_value(profile: str, action: str, value: Any, what: str) -> None:
    """Raise the kind's rule if ``value`` breaks its schema; ``what`` names the message for the error line."""
    name, rule = SCHEMA_OF[(profile, action)]
    if _plainly_valid(name, value):
        return
    errors = list(_validator(name).iter_errors(value))
    if errors:
        # The shallowest error first (a wrong member, not a cascade inside it), and a missing member or a
        # wrong type before the rest.
        error = min(errors, key=lambda e: (len(e.absolute_path), e.validator not in ("required", "type")))
        raise ProtocolViolation(
            rule=rule,
            side=None,
            message=f"{what}: {_where(error)} {_problem(error)} (schema {name}); rule: {RULES[rule].title}",
        )

