"""Is a search filter RQL?  The reference peer's own reading of Ditto's RQL filter grammar (basic-rql).

``check(text)`` returns None for a valid filter and the reason otherwise.  The
grammar the peer accepts: a query is ``op(args)``; ``eq ne gt ge lt le like
ilike`` take a property and a value, ``in`` a property and one or more values,
``exists`` a property, ``and``/``or`` one or more queries, ``not`` one query.  A
property is a path of letters, digits and ``_ : . / -``; a value is a JSON-like
number, a double-quoted string (``\\`` escapes), ``true``, ``false`` or ``null``.
Whitespace between tokens is allowed.  Written apart from the kit's judge (which
holds no grammar and faults only unbalanced quotes or parentheses), so the two
cannot share a mistake.
"""

from __future__ import annotations

import re

COMPARISONS = frozenset({"eq", "ne", "gt", "ge", "lt", "le", "like", "ilike"})
_PROPERTY = re.compile(r"[A-Za-z0-9_:./\-]+")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[a-z]+")


class _Invalid(Exception):
    pass


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def skip(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def take(self, char: str) -> None:
        self.skip()
        if not self.text.startswith(char, self.at):
            raise _Invalid(f"{char!r} expected at {self.at}")
        self.at += 1

    def peek(self, char: str) -> bool:
        self.skip()
        return self.text.startswith(char, self.at)

    def match(self, pattern: re.Pattern[str], what: str) -> str:
        self.skip()
        found = pattern.match(self.text, self.at)
        if found is None:
            raise _Invalid(f"{what} expected at {self.at}")
        self.at = found.end()
        return found[0]

    def value(self) -> None:
        self.skip()
        if self.peek('"'):
            self.at += 1
            while self.at < len(self.text) and self.text[self.at] != '"':
                self.at += 2 if self.text[self.at] == "\\" else 1
            if self.at >= len(self.text):
                raise _Invalid("a string not closed")
            self.at += 1
            return
        for word in ("true", "false", "null"):
            if self.text.startswith(word, self.at):
                self.at += len(word)
                return
        self.match(_NUMBER, "a value")

    def query(self) -> None:
        op = self.match(_WORD, "an operator")
        self.take("(")
        if op in COMPARISONS:
            self.match(_PROPERTY, "a property")
            self.take(",")
            self.value()
        elif op == "in":
            self.match(_PROPERTY, "a property")
            self.take(",")
            self.value()
            while self.peek(","):
                self.take(",")
                self.value()
        elif op == "exists":
            self.match(_PROPERTY, "a property")
        elif op in ("and", "or"):
            self.query()
            while self.peek(","):
                self.take(",")
                self.query()
        elif op == "not":
            self.query()
        else:
            raise _Invalid(f"no operator {op!r}")
        self.take(")")


def check(text: str) -> str | None:
    """None if ``text`` is an RQL filter the peer accepts; else why not."""
    reader = _Reader(text)
    try:
        reader.query()
        reader.skip()
        if reader.at != len(text):
            raise _Invalid(f"text after the query at {reader.at}")
    except _Invalid as exc:
        return str(exc)
    return None
