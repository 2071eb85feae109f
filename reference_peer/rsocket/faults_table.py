"""The RSocket faults, one per MUST rule a responder (or the peer as requester) can break."""

from __future__ import annotations
