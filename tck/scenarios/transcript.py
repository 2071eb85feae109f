"""One line of a scenario connection's transcript (``KitSession.transcript``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Frame = Any  # a frame of the session's binding
SHOWN_BYTES = 25  # bytes of a frame a line shows in hex


@dataclass(slots=True)
class TranscriptLine:
    """One line of the transcript, rendered only when someone reads it.

    Floods of elements make hundreds of thousands of lines; describing and
    hex-encoding each as it arrives would cost more than judging it.  A line
    that outlives the read that made it is frozen (``freeze``), so the
    transcript never holds more frames than one read completed.
    """

    t: float
    direction: str  # "kit->target", "target->kit"
    text: str | Frame  # a frame is described at render time
    data: bytes | None  # bytes as written; None: re-encode ``text`` to show its hex
    index: int | None = None
    encoder: Any = None

    describe: Any = None  # the binding's describe(frame)

    def freeze(self) -> None:
        """Describe the frame now and keep only that and the bytes shown, not the frame: a line that stays in
        the transcript must not hold a frame's payload (an RSocket frame the kit ignores keeps its raw bytes,
        up to 16 MiB; 200 such lines held 3 GB against a target that sent random bytes)."""
        if isinstance(self.text, str):
            return
        data = self.data
        if data is None and self.encoder is not None:
            data = self.encoder.encode(self.text)
        self.text = self.describe(self.text)
        self.data = (data or b"")[:SHOWN_BYTES]

    def render(self) -> str:
        arrow = ">>" if self.direction == "kit->target" else "<<"
        text = self.text if isinstance(self.text, str) else self.describe(self.text)
        data = self.data
        if data is None and not isinstance(self.text, str) and self.encoder is not None:
            data = self.encoder.encode(self.text)  # the target's frame, in canonical encoding
        hexed = (data or b"")[:SHOWN_BYTES].hex()
        shown = hexed if len(hexed) <= 48 else hexed[:48] + "..."
        number = f"#{self.index:<4}" if self.index is not None else "     "
        return f"{self.t * 1000:8.1f}ms {number} {arrow} {text}  [{shown}]"
