"""Loads one mutated module of the reference peer in place of the installed one.

The mutation runner puts this directory on PYTHONPATH of the peer process only, with
RSIO_MUTANT_MODULE (the import name, e.g. ``rsio_tck.reference_peer.rsio.flows``) and
RSIO_MUTANT_SOURCE (a file holding the mutated text).  A finder ahead of every other
one serves that name from the mutated text, compiled afresh (never from a cached .pyc of
the original), with ``__file__`` still the original path.  The worktree's files are never
written, so an interrupted run leaves nothing to restore and mutants run side by side.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from types import ModuleType

_NAME = os.environ.get("RSIO_MUTANT_MODULE")
_SOURCE = os.environ.get("RSIO_MUTANT_SOURCE")


class _MutantLoader(importlib.abc.Loader):
    def __init__(self, source_path: str) -> None:
        self.source_path = source_path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        with open(self.source_path, encoding="utf-8") as handle:
            code = compile(handle.read(), module.__file__ or self.source_path, "exec", dont_inherit=True)
        exec(code, module.__dict__)


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, name: str, source_path: str) -> None:
        self.name, self.source_path = name, source_path

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        # Where the original is, as the ordinary finders (setuptools' editable one included) say.
        original = None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, "find_spec"):
                original = finder.find_spec(fullname, path, target)
                if original is not None:
                    break
        if original is None or original.origin is None:
            return None
        return importlib.util.spec_from_file_location(fullname, original.origin, loader=_MutantLoader(self.source_path))


if _NAME and _SOURCE:
    sys.meta_path.insert(0, _MutantFinder(_NAME, _SOURCE))
