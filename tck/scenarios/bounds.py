"""What one scenario connection of the kit may hold: the bounds of ``KitSession``, and why.

Bounds (per connection; a flooding target gets the same memory as a polite one):

- inbox: reading follows consumption.  Past ``INBOX_MAX_EVENTS`` events or
  ``INBOX_MAX_BYTES`` of element bytes not yet taken by a step, the read loop
  stops calling ``read`` (also in the middle of one read's frames, and of one
  packed frame's elements) until steps have taken it below half; the
  StreamReader's buffer then fills, asyncio pauses the transport, the kernel's
  small receive buffer (``transport.KIT_RECEIVE_BUFFER``) fills, and TCP makes
  the target wait.  The transcript says when the kit paused.
- automatic answers: reading follows writing too.  Past ``REPLIES_MAX_PENDING`` reads
  whose answers (RSocket's KEEPALIVE for a KEEPALIVE with R) are not yet written, the
  read loop waits for them; a write that stalls fails within its drain's bound.
- trace: ``TRACE_MAX_BYTES`` of both directions; then one truncation marker
  ends it (``TraceRecord.truncated``) and nothing more is recorded.
- transcript: the first and last ``MAX_TRANSCRIPT // 2`` lines; the middle is
  counted and shown as one "... N lines omitted ..." line.
- reassembly: ``REASSEMBLY_MAX_BYTES`` for the split elements in progress, all
  Ids together (and ``Limits.max_reassembly`` for one); past it the element is
  dropped and the scenario fails, saying so.
- decoder: one partial frame, within ``Limits.max_frame`` (checked before allocating);
  RSocket and Ditto cap theirs at ``MESSAGE_MAX_BYTES`` (``ScenarioAdapter.session_limits``).
- monitor findings: ``monitor.MAX_FINDINGS``, then counted per rule.
- after the verdict: once the target broke a MUST rule, the scenario runner's session reads
  ``POST_VERDICT_BYTES`` more (enough to see a goodbye and close) and stops.

The proxy's relay keeps the same trace and post-verdict bounds as the kit's own sessions.
"""

from __future__ import annotations

from typing import Any

INBOX_MAX_EVENTS = 16_384  # events not yet taken by a step before the kit stops reading
INBOX_MAX_BYTES = 8 * 1024 * 1024  # element bytes not yet taken by a step before the kit stops reading
TRACE_MAX_BYTES = 4 * 1024 * 1024  # bytes of both directions a connection's trace records
# Bytes of split elements the kit joins at once, all Ids of a connection together (and per element
# at most Limits.max_reassembly).  The suite asks for elements of at most 70 KB.
REASSEMBLY_MAX_BYTES = 8 * 1024 * 1024
# Bytes of one frame or message (RSocket frame, Ditto line) a scenario connection buffers before it is whole:
# the binding's limit, capped here by its adapter (``session_limits``), as the kit's configured maximum.  The
# suite's largest frame is a few KB; eight connections each buffering the 16 MiB frames of a target that sends
# random bytes, with their copies, were 260 MB.
MESSAGE_MAX_BYTES = 4 * 1024 * 1024
REPLIES_MAX_PENDING = 4  # reads whose automatic answers (RSocket keepalive) may wait to be written before reading waits
POST_VERDICT_BYTES = 2048  # read once the verdict is certain (a goodbye and close), then stop reading
MAX_TRANSCRIPT = 400  # transcript lines kept: the first and the last half
# Bytes per read: the first read after a pause in traffic is small, and each full read doubles
# the next up to READ_SIZE.  A target that floods from the start is judged (and found out)
# on a few KiB; legal heavy traffic reaches full-size reads after a handful.  READ_SIZE also
# bounds how far one read can overshoot the inbox caps.
READ_SIZE = 64 * 1024
FIRST_READ_SIZE = 2 * 1024


def session_limits(binding: Any, profile: str, limits: Any, options: dict[str, Any]) -> Any:
    """The limits one scenario connection judges and holds with: its adapter's (``ScenarioAdapter.session_limits``,
    where the binding caps its own at the kit's configured maxima), else ``limits``.  The transport opens with them
    too, before the session (a WebSocket's largest message)."""
    adapter = binding.scenario_adapter(profile, {"limits": limits, **options})
    return getattr(adapter, "session_limits", None) or limits
