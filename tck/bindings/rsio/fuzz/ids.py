"""The pool of subscriber Ids fuzz episodes draw from, with edge values so that reuse is common.

A module of its own so that the kit-as-subscriber episodes (``program.py``) and
the kit-as-publisher episodes (``publisher.py``) share it without importing each other.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ..wire.frames import ID_MAX

IDS = (1, 0, 2, 3, ID_MAX, 2**31, 7)


def free_id(draw: Any, state: Any) -> int:
    """An Id not active in ``state`` (a ``ProgramState``), drawn from the pool; past the pool when all are taken."""
    choices = [i for i in IDS if i not in state.active]
    return draw(st.sampled_from(choices)) if choices else 10**6 + len(state.active)
