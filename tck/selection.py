"""``-k`` expressions over scenarios, as pytest reads them: words joined by and, or, not, parentheses.

A word matches when it is a substring of the scenario's id, title, area or one
of its rules (case-insensitive).
"""

from __future__ import annotations

import re

from .scenarios.loader import Scenario

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


class SelectionError(ValueError):
    pass


def select(expression: str, scenario: Scenario) -> bool:
    haystack = " ".join([scenario.id, scenario.title, scenario.area, *scenario.rules]).lower()
    tokens = _TOKEN.findall(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise SelectionError(f"-k {expression!r}: unexpected end")
        position += 1
        return tokens[position - 1]

    def atom() -> bool:
        token = take()
        if token == "(":
            value = disjunction()
            if take() != ")":
                raise SelectionError(f"-k {expression!r}: missing )")
            return value
        if token == "not":
            return not atom()
        if token in ("and", "or", ")"):
            raise SelectionError(f"-k {expression!r}: unexpected {token}")
        return token.lower() in haystack

    def conjunction() -> bool:
        value = atom()
        while peek() == "and":
            take()
            value = atom() and value
        return value

    def disjunction() -> bool:
        value = conjunction()
        while peek() == "or":
            take()
            value = conjunction() or value
        return value

    if not tokens:
        return True
    result = disjunction()
    if position != len(tokens):
        raise SelectionError(f"-k {expression!r}: unexpected {tokens[position]}")
    return result
