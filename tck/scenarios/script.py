"""A scenario's steps as a script: the table of step kinds (``STEPS``) and ``run_steps``.

Theory of operation: a step is a mapping whose one known key names its kind; ``run_steps`` runs a
list of them in order, each through its function in ``STEPS`` (``steps`` and ``flow_steps``), and
numbers them in ``StepContext.index`` for the result.  The steps that run other steps (``repeat``,
``retry``, ``when``) live here, beside the table they recurse into.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .flow_steps import step_consume, step_drain, step_feed_parts
from .steps import (
    StepContext,
    StepFailed,
    step_close,
    step_expect,
    step_expect_close,
    step_expect_elements,
    step_expect_goodbye,
    step_expect_set,
    step_expect_silence,
    step_liveness,
    step_send,
    step_send_credited,
    step_send_hex,
    step_set,
    step_skip_if_target_extensions,
)
from .values import resolve


async def step_repeat(ctx: StepContext, step: dict[str, Any]) -> None:
    spec = step["repeat"]
    for i in range(int(resolve(spec["times"], ctx.variables))):
        if "var" in spec:
            ctx.variables[spec["var"]] = i
        await run_steps(ctx, spec["steps"])


async def step_retry(ctx: StepContext, step: dict[str, Any]) -> None:
    """Run ``steps`` until they pass, at most ``times`` times, with ``${var}`` = 0, 1, ... (the attempt): for
    what a target may finish in its own time with nothing on the wire to wait for, such as counting
    fire-and-forgets, which nothing acknowledges.  The last attempt's failure is the step's."""
    spec = step["retry"]
    times = int(resolve(spec["times"], ctx.variables))
    for attempt in range(times):
        if "var" in spec:
            ctx.variables[spec["var"]] = attempt
        try:
            await run_steps(ctx, spec["steps"])
            return
        except StepFailed:
            if attempt == times - 1:
                raise


def _condition(spec: dict[str, Any], variables: dict[str, Any]) -> bool:
    """``{equal: [a, b]}`` or ``{differ: [a, b]}``, the values resolved (variables bound by earlier steps)."""
    (test, pair), = spec.items()
    left, right = (resolve(value, variables) for value in pair)
    return bool(left == right) if test == "equal" else bool(left != right)


async def step_when(ctx: StepContext, step: dict[str, Any]) -> None:
    """Run ``steps`` if the condition holds, else ``otherwise`` (if given): for a choice the target makes
    that the kit must adapt to, such as an Id the kit cannot use while its own subscription holds it."""
    await run_steps(ctx, step["steps"] if _condition(step["when"], ctx.variables) else step.get("otherwise", ()))


STEPS: dict[str, Callable[[StepContext, dict[str, Any]], Awaitable[None]]] = {
    "send": step_send,
    "send_hex": step_send_hex,
    "send_credited": step_send_credited,
    "expect": step_expect,
    "expect_set": step_expect_set,
    "expect_elements": step_expect_elements,
    "expect_silence": step_expect_silence,
    "expect_goodbye": step_expect_goodbye,
    "expect_close": step_expect_close,
    "drain": step_drain,
    "consume": step_consume,
    "feed_parts": step_feed_parts,
    "repeat": step_repeat,
    "retry": step_retry,
    "when": step_when,
    "liveness": step_liveness,
    "set": step_set,
    "skip_if_target_extensions": step_skip_if_target_extensions,
    "close": step_close,
}


async def run_steps(ctx: StepContext, steps: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> None:
    for step in steps:
        kind = next(k for k in step if k in STEPS)
        ctx.index += 1
        await STEPS[kind](ctx, step)
