"""Ditto faults of the protocol: subscriptions (DITTO-SUB), demand (DITTO-DEM), cancel (DITTO-CAN), errors
(DITTO-ERR), search pages (DITTO-SEARCH-6) and the test publishers (DITTO-TCK)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from rsio_tck.bindings.ditto import ErrorInfo

from .. import publishers
from ..policy import MAX_DEMAND, Policy, complete, failed, next_event, protocol_error
from ..publishers import End
from .declare import Base, fault, once

if TYPE_CHECKING:
    from ..connection import DittoConnection, Subscription

# -- subscriptions (DITTO-SUB) ------------------------------------------------------------------------

no_created = fault("created-missing", "DITTO-SUB-1", "never answers a subscribe with created")


@no_created.on("created")
def _no_created(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    pass


wrong_cid = fault("created-wrong-correlation-id", "DITTO-SUB-1",
                  "answers a subscribe with created carrying another correlation-id")


@wrong_cid.on("subscribe_headers")
def _wrong_cid(p: Policy, base: Base, sub: Subscription) -> dict[str, Any]:
    return {"correlation-id": f"{sub.correlation_id or 'none'}-other"}


twice = fault("created-twice", "DITTO-SUB-1", "answers every subscribe with two created")


@twice.on("created")
def _twice(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    base(s, sub)
    base(s, sub)


reused = fault("created-id-reused", "DITTO-SUB-2",
               "announces a new subscription with the subscriptionId of one still live on the connection")


@reused.on("subscription_id")
def _reused(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> str:
    live = [other.sid for other in s.subscriptions.values() if not other.done]
    return live[0] if live else str(base(s, sub))


unannounced = fault("event-unannounced-id", "DITTO-SUB-3",
                    "answers the first request with complete for a subscriptionId it never announced too")


@unannounced.on("on_request")
def _unannounced(p: Policy, base: Base, s: DittoConnection, sub: Subscription, demand: int) -> None:
    if once(sub, "ghost"):
        ghost = dataclasses.replace(sub, sid=f"{sub.sid}-ghost", marks=set())
        s.send(complete(ghost, p.event_headers(s, sub)))
    base(s, sub, demand)


early = fault("terminal-before-request", "DITTO-SUB-4",
              "ends every subscription right after created, before the subscriber's first request")


@early.on("created")
def _early(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    base(s, sub)
    end = sub.source.end() if sub.source.available() == 0 else None
    p.finish(s, sub, end or publishers.COMPLETE)


after_end = fault("next-after-complete", "DITTO-SUB-5", "sends one more next after a subscription's complete")


@after_end.on("finish")
def _after_end(p: Policy, base: Base, s: DittoConnection, sub: Subscription, end: End) -> None:
    base(s, sub, end)
    if end.error is None:
        extra = publishers.Pages(1, 1) if sub.profile == "search" else publishers.Revisions(sub.target.entity_name, 0, 1)
        s.send(next_event(sub, extra.take(1)[0], p.event_headers(s, sub)))


other_entity = fault("event-wrong-entity", "DITTO-SUB-6",
                     "sends the events of a subscription on a topic naming another entity")


def _elsewhere(sub: Subscription) -> Subscription:
    target = dataclasses.replace(sub.target, entity_name=f"{sub.target.entity_name}-other")
    return dataclasses.replace(sub, target=target, marks=set())


@other_entity.on("emit")
def _other_entity(p: Policy, base: Base, s: DittoConnection, sub: Subscription, item: Any) -> None:
    s.send(next_event(_elsewhere(sub), item, p.event_headers(s, sub)))
    sub.demand -= 1
    sub.sent += 1


@other_entity.on("finish")
def _other_entity_end(p: Policy, base: Base, s: DittoConnection, sub: Subscription, end: End) -> None:
    elsewhere, headers = _elsewhere(sub), p.event_headers(s, sub)
    s.send(complete(elsewhere, headers) if end.error is None else failed(elsewhere, end.error, headers))
    s.forget(sub)


# -- demand (DITTO-DEM) -----------------------------------------------------------------------------------

beyond = fault("next-beyond-demand", "DITTO-DEM-1", "sends one next more than the demand on each subscription")


@beyond.on("sendable")
def _beyond(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> int:
    credit: int = base(s, sub)
    if credit == 0 and sub.requested and not sub.cancelled and sub.sent and once(sub, "beyond"):
        sub.demand += 1  # the one next beyond the demand the subscriber gave
        return 1
    return credit


ignored = fault("demand-zero-ignored", "DITTO-DEM-2", "ignores a request with demand <= 0 (no failed)")


@ignored.on("on_bad_demand")
def _ignored(p: Policy, base: Base, s: DittoConnection, sub: Subscription, demand: int) -> None:
    pass


wrong_code = fault("demand-zero-wrong-error", "DITTO-DEM-2",
                   "answers demand <= 0 with failed carrying another error (500, not the protocol error)")


@wrong_code.on("on_bad_demand")
def _wrong_code(p: Policy, base: Base, s: DittoConnection, sub: Subscription, demand: int) -> None:
    error = ErrorInfo(status=500, error="tck:internal.error", message=f"demand {demand}")
    s.send(failed(sub, error, p.event_headers(s, sub)))
    s.forget(sub)


overflow = fault("demand-overflow-wraps", "DITTO-DEM-4",
                 "adds demand in signed 64 bits: a total beyond 2^63-1 wraps negative and the publisher stops")


@overflow.on("on_request")
def _overflow(p: Policy, base: Base, s: DittoConnection, sub: Subscription, demand: int) -> None:
    if demand <= 0:
        base(s, sub, demand)
        return
    sub.requested = True
    total = sub.demand + demand
    sub.demand = total - 2**64 if total > MAX_DEMAND else total


# -- cancel (DITTO-CAN) ---------------------------------------------------------------------------------

deaf = fault("cancel-ignored", "DITTO-CAN-1",
             "ignores cancel: goes on serving the demand left and sends one next beyond it")


@deaf.on("on_cancel")
def _deaf(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    if sub.demand < MAX_DEMAND:
        sub.demand += 1
    sub.marks.add("cancel-ignored")


# -- errors (DITTO-ERR) -----------------------------------------------------------------------------------

ok_status = fault("failed-success-status", "DITTO-ERR-1", "sends failed whose error has status 200")


def _with_status_200(error: ErrorInfo) -> ErrorInfo:
    return dataclasses.replace(error, status=200)


@ok_status.on("finish")
def _ok_status(p: Policy, base: Base, s: DittoConnection, sub: Subscription, end: End) -> None:
    base(s, sub, End(_with_status_200(end.error)) if end.error is not None else end)


@ok_status.on("on_bad_demand")
def _ok_status_demand(p: Policy, base: Base, s: DittoConnection, sub: Subscription, demand: int) -> None:
    s.send(failed(sub, _with_status_200(protocol_error(sub, demand)), p.event_headers(s, sub)))
    s.forget(sub)


# -- search pages (DITTO-SEARCH-6) ---------------------------------------------------------------------

oversize = fault("search-page-oversize", "DITTO-SEARCH-6", "search: each page holds one thing more than size(n)",
                 profiles=("search",))


@oversize.on("created")
def _oversize(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    if isinstance(sub.source, publishers.Pages):
        sub.source.size += 1
        sub.source.page_size = publishers.full_pages  # every page full, so each shows the extra thing
    base(s, sub)


empty = fault("search-page-empty", "DITTO-SEARCH-6", "search: the first page is empty (the things follow)",
              profiles=("search",))


@empty.on("emit")
def _empty(p: Policy, base: Base, s: DittoConnection, sub: Subscription, item: Any) -> None:
    if sub.profile == "search" and once(sub, "empty"):
        pages = sub.source
        if isinstance(pages, publishers.Pages):
            pages.give_back(item)  # the page's things come again in the next page
        item = ()
    base(s, sub, item)


# -- the test publishers (DITTO-TCK) --------------------------------------------------------------------

skip = fault("range-skips-revision", "DITTO-TCK-1", "tck/range: the second revision is skipped (S, S+2, S+3, ...)",
             profiles=("streaming",))


@skip.on("emit")
def _skip(p: Policy, base: Base, s: DittoConnection, sub: Subscription, item: Any) -> None:
    if sub.target.entity_name == "range" and sub.profile == "streaming" and sub.sent >= 1:
        item = dict(item, revision=item["revision"] + 1, value=item["value"] + 1)
    base(s, sub, item)


finite = fault("infinite-completes", "DITTO-TCK-2", "tck/infinite: completes after 5 revisions", profiles=("streaming",))


@finite.on("created")
def _finite(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    if sub.profile == "streaming" and sub.target.entity_name == "infinite" and isinstance(sub.source, publishers.Revisions):
        sub.source.left = 5
    base(s, sub)


no_error = fault("error-completes", "DITTO-TCK-3", "tck/error: completes instead of failing", profiles=("streaming",))


@no_error.on("finish")
def _no_error(p: Policy, base: Base, s: DittoConnection, sub: Subscription, end: End) -> None:
    if sub.target.entity_name == "error" and sub.profile == "streaming":
        end = publishers.COMPLETE
    base(s, sub, end)


duplicate = fault("search-thing-twice", "DITTO-TCK-4",
                  "search: the second page starts with the last thing of the first again (in place of its own first)",
                  profiles=("search",))


@duplicate.on("emit")
def _duplicate(p: Policy, base: Base, s: DittoConnection, sub: Subscription, item: Any) -> None:
    if sub.profile == "search" and item:
        previous = p.state.get(f"last:{sub.sid}")
        if previous is not None and once(sub, "duplicated"):
            item = (previous, *item[1:])
        p.state[f"last:{sub.sid}"] = item[-1]
    base(s, sub, item)




numeric = fault("search-numeric-order", "DITTO-TCK-4",
                "search: the things in numeric order (tck:thing-2 before tck:thing-10), not Ditto's default "
                "sort(+thingId), which compares thingIds as strings", profiles=("search",))


@numeric.on("created")
def _numeric(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    if isinstance(sub.source, publishers.Pages):
        sub.source.order = iter(range(sub.source.total))
    base(s, sub)


# -- search queries (DITTO-SEARCH-7) and a search's cancel (DITTO-CAN-1) -----------------------------------------

not_rql = fault("search-invalid-query-completes", "DITTO-SEARCH-7",
                "search: a filter that is not RQL is answered as an empty result (complete), not failed 400",
                profiles=("search",))


@not_rql.on("created")
def _not_rql(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    source = sub.source
    if isinstance(source, publishers.Failing) and source.final.error is not None \
            and source.final.error.error == publishers.BAD_RQL:
        sub.source = publishers.Pages(0, publishers.DEFAULT_PAGE_SIZE)
    base(s, sub)


refused = fault("search-empty-refused", "DITTO-SEARCH-7",
                "search: a query with no result (a valid filter matching no thing) is answered failed 400, not "
                "complete", profiles=("search",))


@refused.on("created")
def _refused(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    if isinstance(sub.source, publishers.Pages) and sub.source.total == 0:
        sub.source = publishers.Failing(publishers.failure(400, publishers.BAD_QUERY, "no such things"))
    base(s, sub)


search_deaf = fault("search-cancel-ignored", "DITTO-CAN-1",
                    "search: a cancel that leaves demand is ignored, and every page left follows, beyond that demand",
                    profiles=("search",))


@search_deaf.on("on_cancel")
def _search_deaf(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    if sub.profile == "search" and sub.demand > 0:
        sub.demand = MAX_DEMAND  # goes on as if the cancel never came, and as if all pages were asked for
        return
    base(s, sub)


# -- a subscribe without a correlation-id (DITTO-SUB-1), an open range (DITTO-TCK-1) ------------------------

unnamed = fault("created-needs-correlation-id", "DITTO-SUB-1",
                "never answers a subscribe that names no correlation-id (no created)")


@unnamed.on("created")
def _unnamed(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    if sub.correlation_id is not None:
        base(s, sub)


open_range = fault("range-empty-refused", "DITTO-TCK-1",
                   "tck/range with no revision to stream (no toHistoricalRevision: count 0) fails 400 instead of "
                   "completing", profiles=("streaming",))


@open_range.on("created")
def _open_range(p: Policy, base: Base, s: DittoConnection, sub: Subscription) -> None:
    source = sub.source
    if sub.profile == "streaming" and sub.target.entity_name == "range" and isinstance(source, publishers.Revisions) \
            and source.left == 0:
        sub.source = publishers.Failing(publishers.failure(400, "tck:range.unbounded", "tck/range needs "
                                                                                      "toHistoricalRevision"))
    base(s, sub)


# -- the client role (testcases.py, listen mode): the subscriber's rules --------------------------------------
# No policy hook: the publisher is unchanged; ``testcases`` reads these names and misbehaves as a client.

fault("client-request-unannounced", "DITTO-SUB-7",
      "as client: its first request names a subscriptionId no created announced", profiles=("search",))
fault("client-request-after-cancel", "DITTO-SUB-8",
      "as client: once its subscription is over it cancels it, then still requests a page", profiles=("search",))
fault("client-demand-zero", "DITTO-DEM-3", "as client: its first request asks for 0 pages", profiles=("search",))
