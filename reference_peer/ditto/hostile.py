"""Ditto's material for the hostile driver (``reference_peer.hostile``): messages only, no logic.

Ditto answers no opening (the kit's subscribe waits for ``created``), so the opening gets nothing
back.  The valid message is a well-formed ``created`` for a subscriptionId the kit never asked
for; the huge "header" is the start of an envelope whose string never ends (a JSON line has no
length field: the longest line is the longest wait).  A hostile client (``--connect``) opens with
a subscribe the reference peer serves (the search collection ``eq(attributes/tck,10)``, or the
streaming ``tck/range``), so what follows is hostile, not the opening.
"""

from __future__ import annotations

from rsio_tck.binding import get_binding
from rsio_tck.bindings.ditto.framing import encode_line
from rsio_tck.bindings.ditto.messages import (
    SearchCreated,
    SearchNext,
    SearchSubscribe,
    StreamingCreated,
    StreamingNext,
    SubscribeForPersistedEvents,
    Target,
)

from ..hostile import Burst, HostileMaterial
from ..hostile.material import ENDLESS

RANGE = Target(namespace="tck", entity_name="range")
NEVER = "hostile-never-created"
DEPTH = 100_000  # levels of deep-json's one value


def hostile_material(profile: str) -> HostileMaterial:
    binding = get_binding("ditto")
    if profile == "search":
        created: object = SearchCreated(subscription_id="hostile-1")
        subscribe: object = SearchSubscribe(headers={"correlation-id": "hostile-1"}, filter="eq(attributes/tck,10)",
                                            options="size(3)")
        unknown: object = SearchNext(subscription_id=NEVER, items=({"thingId": "tck:1"},))
        topic = b"_/_/things/twin/search/next"
    else:
        created = StreamingCreated(target=RANGE, subscription_id="hostile-1")
        subscribe = SubscribeForPersistedEvents(target=RANGE, headers={"correlation-id": "hostile-1"})
        unknown = StreamingNext(target=RANGE, subscription_id=NEVER, item={"n": 1})
        topic = b"tck/range/things/twin/streaming/next"
    start = b'{"topic":"' + topic + b'","path":"/","value":"'
    return HostileMaterial(
        answer=lambda opening: b"",
        frame=encode_line(created),  # type: ignore[arg-type]
        huge_header=start,
        filler=b"a",
        framing=lambda: binding.websocket_framing(profile),  # type: ignore[attr-defined]
        hello=encode_line(subscribe),  # type: ignore[arg-type]
        modes={
            "endless-line": Burst("one envelope whose line never ends (no newline ever), as fast as the socket "
                                  "takes it", b"a" * 4096, prefix=start, form=ENDLESS),
            "unclosed-json": Burst("lines of JSON objects that are never closed", start + b"a\n"),
            "invalid-utf8": Burst("lines whose JSON strings hold bytes that are not UTF-8",
                                  b'{"topic":"\xff\xfe\xc0\xaf","path":"/"}\n'),
            # An array, not an envelope: the kit cannot read 100k levels, but knows a text opening with "[" is
            # no object (DITTO-ENV-2), so the rule it cites is one the message breaks at any depth.
            "deep-json": Burst(f"lines of one JSON array nested {DEPTH:,} levels deep (no envelope)",
                               b"[" * DEPTH + b"]" * DEPTH + b"\n"),
            "unknown-next-flood": Burst("next for a subscriptionId never created, as fast as the socket takes them",
                                        encode_line(unknown)),  # type: ignore[arg-type]
        },
    )
