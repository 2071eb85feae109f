"""Values and matchers of the scenario language.

Values (in ``send``) are YAML scalars, ``${var}`` references, or byte
constructors: ``{hex: "0102"}``, ``{utf8: "text"}``, ``{msgpack: value}``,
``{zeros: n}``, ``{large: [index, offset, length]}`` (tck/large bytes), ``{sum: [a, b]}``
(integers added), and
``{int: n}``: the binding's test-publisher element for the integer n (RS-IO:
MessagePack; RSocket: decimal text), encoded by the function the step context
binds under the reserved variable name ``ELEMENT``; as a matcher it reads the
element back (``ELEMENT_VALUE``) and compares integers.

Matchers (in ``expect``) are values (exact match) or one-key maps:
``any``, ``{range: [lo, hi]}``, ``{contains: text}``, ``{nonempty: true}``,
``{regex: re}`` (on text, or on the hex of bytes), ``{bind: var}`` (matches
anything and binds it), ``{msgpack: matcher}`` (the bytes, decoded as
MessagePack, match), ``{decimal: matcher}`` (the bytes, read as a decimal integer in
ASCII, match), ``{len: n}``; maps and lists match element-wise.
"""

from __future__ import annotations

import re
from typing import Any

import msgpack

from ..semantics.demand import UNBOUNDED
from ..testpubs import large_bytes

CONSTANTS: dict[str, Any] = {"MAX": UNBOUNDED, "MAX64": 2**64 - 1, "OVER": UNBOUNDED + 1, "MAX31": 2**31 - 1}
# The variables key of the binding's element encoder (int -> bytes); not a valid ${name}, so no
# scenario can bind or read it.  Without it, ``{int: n}`` is the MessagePack encoding (RS-IO's).
ELEMENT = "element bytes"
# The variables key of the binding's element reader (bytes -> int or None): ``{int: n}`` as a matcher
# compares integers, so any encoding of n the binding allows matches (RS-IO: MessagePack of any width).
ELEMENT_VALUE = "element value"


def _msgpack_int(data: bytes) -> int | None:
    try:
        value = msgpack.unpackb(data, raw=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ScenarioValueError(ValueError):
    """A value or matcher that cannot be used; the message says which and why."""


def lookup(name: str, variables: dict[str, Any]) -> Any:
    if name in variables:
        return variables[name]
    if name in CONSTANTS:
        return CONSTANTS[name]
    raise ScenarioValueError(f"variable ${{{name}}} is not bound")


def resolve(value: Any, variables: dict[str, Any]) -> Any:
    """A send-side value with variables substituted and byte constructors built."""
    if isinstance(value, str):
        whole = _VAR.fullmatch(value)
        if whole:
            return lookup(whole.group(1), variables)
        return _VAR.sub(lambda m: str(lookup(m.group(1), variables)), value)
    if isinstance(value, list):
        return [resolve(v, variables) for v in value]
    if isinstance(value, dict):
        if len(value) == 1:
            (key, arg), = value.items()
            if key == "hex":
                return bytes.fromhex(str(resolve(arg, variables)).replace(" ", ""))
            if key == "utf8":
                return str(resolve(arg, variables)).encode("utf-8")
            if key == "msgpack":
                return msgpack.packb(resolve(arg, variables), use_bin_type=True)
            if key == "zeros":
                return bytes(int(resolve(arg, variables)))
            if key == "sum":
                return sum(int(resolve(a, variables)) for a in arg)
            if key == "int":
                encode = variables.get(ELEMENT)
                number = int(resolve(arg, variables))
                return encode(number) if encode is not None else msgpack.packb(number)
            if key == "large":
                index, offset, length = (int(resolve(a, variables)) for a in arg)
                return large_bytes(index, offset, length)
            if key == "var":
                return lookup(str(arg), variables)
        return {k: resolve(v, variables) for k, v in value.items()}
    return value


def matches(pattern: Any, value: Any, variables: dict[str, Any]) -> bool:
    """Does ``value`` match ``pattern``?  Binds variables as it goes."""
    if pattern == "any":
        return True
    if isinstance(pattern, str):
        whole = _VAR.fullmatch(pattern)
        if whole:
            return bool(lookup(whole.group(1), variables) == value)
        return bool(resolve(pattern, variables) == value)
    if isinstance(pattern, dict) and len(pattern) == 1:
        (key, arg), = pattern.items()
        if key == "any":
            return True
        if key == "bind":
            variables[str(arg)] = value
            return True
        if key == "range":
            low, high = (resolve(a, variables) for a in arg)
            return isinstance(value, int) and low <= value <= high
        if key == "contains":
            return isinstance(value, str) and str(resolve(arg, variables)) in value
        if key == "nonempty":
            return bool(value) == bool(arg)
        if key == "len":
            return hasattr(value, "__len__") and len(value) == resolve(arg, variables)
        if key == "regex":
            text = value.hex() if isinstance(value, bytes) else value
            return isinstance(text, str) and re.search(str(arg), text) is not None
        if key == "msgpack" and isinstance(value, bytes):
            try:
                decoded = msgpack.unpackb(value, raw=False)
            except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
                return False
            return matches(arg, decoded, variables)
        if key == "decimal" and isinstance(value, bytes):
            text = value.decode("ascii", errors="replace")
            return text.lstrip("-").isdigit() and matches(arg, int(text), variables)
        if key == "int":
            if not isinstance(value, bytes):
                return False
            read = variables.get(ELEMENT_VALUE) or _msgpack_int
            number = read(value)
            return number is not None and number == int(resolve(arg, variables))
        if key in ("hex", "utf8", "zeros", "large", "var", "sum"):
            return bool(resolve(pattern, variables) == value)
    if isinstance(pattern, dict):
        return (
            isinstance(value, dict)
            and set(pattern) == set(value)
            and all(matches(p, value[k], variables) for k, p in pattern.items())
        )
    if isinstance(pattern, list):
        return (
            isinstance(value, (list, tuple))
            and len(pattern) == len(value)
            and all(matches(p, v, variables) for p, v in zip(pattern, value))
        )
    return bool(pattern == value) and type(pattern) is type(value) or (
        # An int pattern matches an int value, never a bool (True == 1 in Python).
        isinstance(pattern, int) and isinstance(value, int) and not isinstance(value, bool) and pattern == value
    )


def show(value: Any) -> str:
    """Short rendering of a received value for failure messages."""
    if isinstance(value, bytes):
        return value[:24].hex() + (f"...({len(value)} bytes)" if len(value) > 24 else "")
    return repr(value)
