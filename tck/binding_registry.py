"""The binding registry: which bindings the kit knows, and how one is loaded by name.

Theory of operation.  ``REGISTRY`` maps a binding's name to the dotted module that defines its
``BINDING`` (the object ``rsio_tck.binding.Binding`` describes): the kit's own three, then those
defined outside the kit, added by the environment variable ``RSIO_TCK_BINDINGS`` (read once, when
this module is imported, so the processes the kit starts know them too) or by ``register_binding``.
``get_binding(name)`` is the only way to obtain a binding: it imports the module when first asked
(so no neutral module imports a binding module), checks that it defines a ``BINDING`` of that name,
and adds the rules a binding from outside brings (``OWN_CATALOGUE_HOOKS``) to the one catalogue.
``rsio_tck.binding`` gives these names on, so callers import them from the seam.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .binding import Binding
    from .catalogue.model import Rule

# name -> the module that defines ``BINDING``: the kit's own bindings; ``register_binding`` and the
# environment variable ``RSIO_TCK_BINDINGS`` add others (``_read_environment`` below).
REGISTRY: dict[str, str] = {
    "rsio": "rsio_tck.bindings.rsio",
    "rsocket": "rsio_tck.bindings.rsocket",
    "ditto": "rsio_tck.bindings.ditto",
}
DEFAULT_BINDING = "rsio"  # the binding of a run that names none (and of an old run.json without the field)
CONTRACT = "contract"  # a scenario's ``binding:`` for the binding-neutral contract scenarios: never a binding's name
ENVIRONMENT = "RSIO_TCK_BINDINGS"  # "name=dotted.module[,name=dotted.module...]": bindings defined outside the kit
_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}\Z")

# A binding defined outside the kit keeps its rules itself (the kit's own are in ``rsio_tck.catalogue`` and SPEC.md):
#   catalogue() -> Sequence[Rule]      get_binding adds them to the one catalogue (``_adopt_catalogue``)
#   areas() -> {prefix: title}         the report's area titles of its rule prefixes
#   spec_text() -> str                 its SPEC text, where each rule is stated (the binding's own test holds
#                                      the two together, as tests/test_spec_catalogue.py does the kit's)
OWN_CATALOGUE_HOOKS = ("catalogue", "areas", "spec_text")


def register_binding(name: str, module: str) -> None:
    """Make the binding whose ``BINDING`` the module ``module`` (dotted) defines known as ``name``.

    For bindings defined outside the kit (a test's, a user's); nothing is imported until
    ``get_binding(name)`` is first asked.  The entry is added to ``RSIO_TCK_BINDINGS`` too, so the
    processes the kit starts (the embedded peer, a client program) know it (they must be able to
    import ``module``: ``PYTHONPATH``).  ValueError (one line) for a name that is taken or malformed."""
    _register(name, module)
    entries = [e.strip() for e in os.environ.get(ENVIRONMENT, "").split(",") if e.strip()]
    if f"{name}={module}" not in entries:
        os.environ[ENVIRONMENT] = ",".join([*entries, f"{name}={module}"])


def _register(name: str, module: str) -> None:
    if not _NAME.match(name) or name == CONTRACT:
        raise ValueError(f"binding name {name!r}: use lower-case letters, digits, '-' and '_' "
                         f"(and not {CONTRACT!r})")
    if REGISTRY.get(name, module) != module:
        raise ValueError(f"binding name {name!r} is taken (by {REGISTRY[name]})")
    if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", module):
        raise ValueError(f"binding {name!r}: {module!r} is not a dotted module name")
    REGISTRY[name] = module


def _read_environment() -> None:
    """``RSIO_TCK_BINDINGS`` (``name=dotted.module``, comma-separated), read once when this module is
    imported, so that a subprocess (``rsio-tck run``, ``rsio-peer``) knows the bindings its parent
    registered.  A bad entry is left out with one line on stderr, never a traceback."""
    for entry in os.environ.get(ENVIRONMENT, "").split(","):
        if not entry.strip():
            continue
        name, equals, module = (part.strip() for part in entry.partition("="))
        try:
            if not equals:
                raise ValueError(f"{entry.strip()!r} is not name=dotted.module")
            _register(name, module)
        except ValueError as exc:
            print(f"rsio-tck: {ENVIRONMENT}: {exc}; entry ignored", file=sys.stderr)


_read_environment()
BINDING_NAMES = tuple(REGISTRY)  # the bindings known at import: the kit's own, then the environment's


def binding_names() -> tuple[str, ...]:
    """Every binding known now: the kit's own, the environment's, then those ``register_binding`` added."""
    return tuple(REGISTRY)


def get_binding(name: str) -> Binding:
    """The binding called ``name``; ValueError (one line, naming the choices) for an unknown one, or for
    one registered from outside whose module cannot be imported or defines no ``BINDING``."""
    path = REGISTRY.get(name)
    if path is None:
        raise ValueError(f"unknown binding {name!r}; choose one of {', '.join(REGISTRY)}")
    if name in _LOADED:
        return _LOADED[name]
    try:
        module = importlib.import_module(path)
    except ImportError as exc:
        if path.startswith("rsio_tck."):
            raise  # the kit's own: a broken install deserves its traceback
        raise ValueError(f"binding {name!r}: cannot import {path}: {exc}") from None
    binding: Binding | None = getattr(module, "BINDING", None)
    if binding is None or getattr(binding, "name", None) != name:
        raise ValueError(f"binding {name!r}: {path} defines no BINDING named {name!r}")
    _adopt_catalogue(binding)
    _LOADED[name] = binding
    return binding


_LOADED: dict[str, Binding] = {}


def _adopt_catalogue(binding: Binding) -> None:
    """A binding defined outside the kit brings its own rules (the optional hook ``catalogue``:
    ``rsio_tck.catalogue.model.Rule``s, with ``areas``: prefix -> title); they join the one catalogue
    (``rsio_tck.catalogue.RULES``), so the monitor, the scenarios and the reports cite them as the kit's
    own.  Each must lie in the binding's ``rule_prefixes`` and must not redefine a rule."""
    own: Callable[[], Sequence[Rule]] | None = getattr(binding, "catalogue", None)
    if own is None:
        return
    from .catalogue import AREAS, RULES

    rules = list(own())
    for rule in rules:
        if not rule.id.startswith(binding.rule_prefixes):
            raise ValueError(f"binding {binding.name!r}: rule {rule.id} is outside its prefixes "
                             f"{', '.join(binding.rule_prefixes)}")
        if RULES.get(rule.id, rule) != rule:
            raise ValueError(f"binding {binding.name!r}: rule {rule.id} is already the catalogue's")
    RULES.update((rule.id, rule) for rule in rules)
    areas: Callable[[], Mapping[str, str]] | None = getattr(binding, "areas", None)
    for prefix, title in (areas() if areas is not None else {}).items():
        AREAS.setdefault(prefix, title)
