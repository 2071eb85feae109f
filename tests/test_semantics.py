"""The Reactive Streams model: tables walked entry by entry, demand, reassembly."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsio_tck.bindings.rsio.handshake import HANDSHAKE, Move, PartyState, lookup
from rsio_tck.bindings.rsio.model import ConnectionModel
from rsio_tck.bindings.rsio.split import ReassemblyLimitExceeded, SplitAssembler
from rsio_tck.catalogue import GOODBYE_OBLIGATION, PROTOCOL_ERRORS, RULES
from rsio_tck.errors import ProtocolViolation, Side
from rsio_tck.semantics import Demand, Signal, StreamState
from rsio_tck.semantics.streams import (
    ACTIONS,
    RSIO_OPTIONS,
    TRANSITIONS,
    SignalArgs,
    StreamOptions,
    StreamRecord,
    Verdict,
    deliver_fast,
    step,
    transitions_for,
)

MAX = 2**63 - 1


def test_stream_table_has_an_entry_for_every_state_and_signal() -> None:
    missing = [(s, g) for s, g in itertools.product(StreamState, Signal) if (s, g) not in TRANSITIONS]
    assert missing == []


@pytest.mark.parametrize("key", sorted(TRANSITIONS, key=lambda k: (k[0].value, k[1].value)), ids=str)
def test_stream_table_entry_cites_a_rule_and_a_real_action(key: tuple[StreamState, Signal]) -> None:
    transition = TRANSITIONS[key]
    assert transition.rule in RULES
    assert transition.action is None or transition.action in ACTIONS
    if transition.verdict is not Verdict.OK:
        assert transition.why, "violations and tolerated frames say why"
        assert transition.next is None and transition.action is None


@pytest.mark.parametrize("key", sorted(TRANSITIONS, key=lambda k: (k[0].value, k[1].value)), ids=str)
def test_stream_table_entry_does_what_it_says(key: tuple[StreamState, Signal]) -> None:
    state, signal = key
    transition = TRANSITIONS[key]
    rec = StreamRecord()
    rec.state = state
    rec.demand = Demand(MAX)
    rec.element = 5 if state is StreamState.PART else None
    rec.owed_on_subscribes = 1 if state in (StreamState.CANCELLED, StreamState.RESUBSCRIBING) else 0
    args = SignalArgs(amount=3, element=5, text="3.9")
    if transition.verdict is Verdict.VIOLATION:
        with pytest.raises(ProtocolViolation) as caught:
            step(Side.SERVER, 1, rec, signal, args, lambda rule, message: None)
        assert caught.value.rule == transition.rule
        assert rec.state is state
        return
    try:
        step(Side.SERVER, 1, rec, signal, args, lambda rule, message: None)
    except ProtocolViolation as violation:  # actions that find a violation in this context
        assert violation.rule in RULES and transition.action is not None
        return
    if transition.verdict is Verdict.IGNORED:
        assert rec.state is state


# -- the options a second wire may set (RSocket: no onSubscribe frame, Ids never reused) ---------

RSOCKET_LIKE = StreamOptions(on_subscribe_frame=False, reuse_ids=False, demand_ceiling=MAX)


def test_default_options_are_the_table_itself() -> None:
    assert transitions_for(RSIO_OPTIONS) == TRANSITIONS
    assert transitions_for(StreamOptions()) == TRANSITIONS


@pytest.mark.parametrize("options", [RSOCKET_LIKE, StreamOptions(on_subscribe_frame=False),
                                     StreamOptions(reuse_ids=False)], ids=repr)
def test_options_change_only_the_entries_they_name(options: StreamOptions) -> None:
    table = transitions_for(options)
    assert set(table) == set(TRANSITIONS)
    for key, transition in table.items():
        base = TRANSITIONS[key]
        if transition == base:
            continue
        state, signal = key
        if not options.reuse_ids and signal is Signal.SUBSCRIBE and state in (StreamState.CANCELLED, StreamState.DONE):
            assert transition.verdict is Verdict.VIOLATION and transition.rule == "ID-3" and transition.why
        else:
            assert not options.on_subscribe_frame
            assert base.next in (StreamState.SUBSCRIBING, StreamState.RESUBSCRIBING)
            assert transition.next is StreamState.ACTIVE
            assert (transition.verdict, transition.rule, transition.action) == (base.verdict, base.rule, base.action)


@pytest.mark.parametrize("key", sorted(TRANSITIONS, key=lambda k: (k[0].value, k[1].value)), ids=str)
def test_rsocket_like_entry_does_what_it_says(key: tuple[StreamState, Signal]) -> None:
    state, signal = key
    transition = transitions_for(RSOCKET_LIKE)[key]
    rec = StreamRecord(RSOCKET_LIKE.demand_ceiling)
    rec.state = state
    rec.demand = Demand(MAX)
    args = SignalArgs(amount=3)
    if transition.verdict is Verdict.VIOLATION:
        with pytest.raises(ProtocolViolation) as caught:
            step(Side.SERVER, 1, rec, signal, args, lambda rule, message: None, RSOCKET_LIKE)
        assert caught.value.rule == transition.rule and rec.state is state
        return
    try:
        step(Side.SERVER, 1, rec, signal, args, lambda rule, message: None, RSOCKET_LIKE)
    except ProtocolViolation as violation:
        assert violation.rule in RULES and transition.action is not None
        return
    if signal is Signal.SUBSCRIBE:  # opens ACTIVE: no onSubscribe frame to wait for
        assert rec.state is StreamState.ACTIVE and rec.demand.outstanding == 3


def test_a_subscribe_opens_active_and_a_reused_id_is_refused() -> None:
    rec = StreamRecord()
    warn = lambda rule, message: None  # noqa: E731
    step(Side.CLIENT, 1, rec, Signal.SUBSCRIBE, SignalArgs(amount=2), warn, RSOCKET_LIKE)
    assert rec.state is StreamState.ACTIVE
    step(Side.SERVER, 1, rec, Signal.ON_NEXT, SignalArgs(), warn, RSOCKET_LIKE)
    step(Side.SERVER, 1, rec, Signal.ON_COMPLETE, SignalArgs(), warn, RSOCKET_LIKE)
    with pytest.raises(ProtocolViolation) as caught:
        step(Side.CLIENT, 1, rec, Signal.SUBSCRIBE, SignalArgs(amount=2), warn, RSOCKET_LIKE)
    assert caught.value.rule == "ID-3" and rec.state is StreamState.DONE


def test_the_demand_ceiling_is_the_records() -> None:
    demand = Demand(5, ceiling=10)
    assert demand.outstanding == 5 and not demand.unbounded
    demand.add(20)
    assert demand.outstanding == 10 and demand.unbounded and demand.take(1000) and demand.outstanding == 10
    rec = StreamRecord(ceiling=10)
    step(Side.CLIENT, 1, rec, Signal.SUBSCRIBE, SignalArgs(amount=50), lambda r, m: None, RSOCKET_LIKE)
    assert rec.demand.ceiling == 10 and rec.demand.unbounded
    assert Demand(MAX).unbounded and not Demand(MAX - 1).unbounded  # the default ceiling is 2^63-1


def test_handshake_table_covers_every_role_state_and_move() -> None:
    for role, state, move in itertools.product(Side, PartyState, Move):
        step_ = lookup(role, state, move)
        assert step_.rule in RULES
        assert step_.ok or step_.why


def test_handshake_table_keys_are_meaningful() -> None:
    for role, state, move in HANDSHAKE:
        assert role is None or isinstance(role, Side)
        assert isinstance(state, PartyState) and isinstance(move, Move)


def test_protocol_errors_and_obligations_are_catalogued() -> None:
    assert PROTOCOL_ERRORS <= set(RULES)
    assert set(GOODBYE_OBLIGATION) <= PROTOCOL_ERRORS
    assert set(GOODBYE_OBLIGATION.values()) <= set(RULES)


# -- Demand ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("initial", "requests", "deliveries", "ok"),
    [
        (0, [], [1], [False]),
        (2, [], [1, 1, 1], [True, True, False]),
        (0, [3], [2, 2], [True, False]),
        (0, [MAX, MAX], [10**6, 10**18], [True, True]),
        (MAX, [], [MAX, 5], [True, True]),
        (5, [2**64 - 1], [10**9], [True]),
        (-4, [], [1], [False]),
        (1, [0, -3], [1, 1], [True, False]),
    ],
)
def test_demand_accounting(initial: int, requests: list[int], deliveries: list[int], ok: list[bool]) -> None:
    demand = Demand(initial)
    for n in requests:
        demand.add(n)
    assert [demand.take(k) for k in deliveries] == ok


@given(st.lists(st.integers(min_value=1, max_value=2**64), max_size=20), st.lists(st.integers(1, 100), max_size=20))
def test_demand_never_exceeds_the_saturated_total(requests: list[int], deliveries: list[int]) -> None:
    demand = Demand(0)
    for n in requests:
        demand.add(n)
    total = min(sum(requests), MAX)
    taken = sum(k for k in deliveries if demand.take(k))
    assert taken <= total or total == MAX
    assert 0 <= demand.outstanding <= MAX


# -- Split reassembly -------------------------------------------------------------------


def test_split_assembler_joins_parts_in_order_and_per_subscriber() -> None:
    joiner = SplitAssembler(limit=100)
    assert joiner.add(1, b"ab", last=False) is None
    assert joiner.add(2, b"XY", last=False) is None
    assert joiner.add(1, b"cd", last=False) is None
    assert joiner.add(1, b"e", last=True) == b"abcde"
    assert joiner.add(2, b"Z", last=True) == b"XYZ"
    assert joiner.add(3, b"solo", last=True) == b"solo"


def test_split_assembler_bounds_what_it_holds() -> None:
    joiner = SplitAssembler(limit=5)
    joiner.add(1, b"abc", last=False)
    with pytest.raises(ReassemblyLimitExceeded) as caught:
        joiner.add(1, b"def", last=False)
    assert (caught.value.size, caught.value.limit) == (6, 5)
    assert joiner.in_progress(1) == 0


def test_split_assembler_bounds_the_elements_in_progress_together() -> None:
    # The scenario adapter's bound: each element within the limit, and all held together within it too.
    joiner = SplitAssembler(limit=5, total_limit=5)
    joiner.add(1, b"abc", last=False)
    joiner.add(2, b"", last=False)
    assert joiner.holds(2) and not joiner.holds(3)
    with pytest.raises(ReassemblyLimitExceeded) as caught:
        joiner.add(2, b"def", last=False)
    assert caught.value.together and (caught.value.subscriber, caught.value.limit) == (2, 5)
    assert not joiner.holds(2) and joiner.in_progress(1) == 3
    assert joiner.add(1, b"de", last=True) == b"abcde"  # the total is freed with the element
    assert joiner.add(2, b"vwxyz", last=True) == b"vwxyz"
    with pytest.raises(ReassemblyLimitExceeded) as alone:
        joiner.add(3, b"123456", last=True)
    assert not alone.value.together


def test_split_assembler_drop_forgets_a_partial_element() -> None:
    joiner = SplitAssembler(limit=10)
    joiner.add(1, b"abc", last=False)
    joiner.drop(1)
    assert joiner.add(1, b"z", last=True) == b"z"


# -- the fast path agrees with the table ---------------------------------------------------

_ops = st.lists(
    st.one_of(
        st.tuples(st.just("request"), st.integers(-1, 5)),
        st.tuples(st.just("next"), st.integers(1, 1)),
        st.tuples(st.just("cancel"), st.just(0)),
        st.tuples(st.just("complete"), st.just(0)),
        st.tuples(st.just("subscribe"), st.integers(0, 3)),
    ),
    max_size=40,
)


def _run(ops: list[tuple[str, int]], fast: bool) -> list[tuple[str, str, int]]:
    model = ConnectionModel()
    model.hello(Side.CLIENT, client_kind=True, version=0)
    model.hello(Side.SERVER, client_kind=False, version=0)
    model.stream(Side.CLIENT, Signal.SUBSCRIBE, 1, SignalArgs(amount=2))
    model.stream(Side.SERVER, Signal.ON_SUBSCRIBE, 1, SignalArgs())
    log: list[tuple[str, str, int]] = []
    for op, n in ops:
        try:
            if op == "request":
                model.stream(Side.CLIENT, Signal.REQUEST, 1, SignalArgs(amount=n))
            elif op == "cancel":
                model.stream(Side.CLIENT, Signal.CANCEL, 1, SignalArgs())
            elif op == "complete":
                model.stream(Side.SERVER, Signal.ON_COMPLETE, 1, SignalArgs())
            elif op == "subscribe":
                model.stream(Side.CLIENT, Signal.SUBSCRIBE, 1, SignalArgs(amount=n))
            elif not (fast and model.deliver_fast(Side.SERVER, 1, n)):
                model.stream(Side.SERVER, Signal.ON_NEXT, 1, SignalArgs(count=n))
        except ProtocolViolation as violation:
            log.append((op, violation.rule, 0))
        rec = model.spaces[Side.CLIENT][1]
        log.append((op, rec.state.name, rec.demand.outstanding))
    return log


@settings(max_examples=300)
@given(_ops)
def test_fast_delivery_path_agrees_with_the_table(ops: list[tuple[str, int]]) -> None:
    assert _run(ops, fast=True) == _run(ops, fast=False)


_any_signals = st.lists(st.tuples(st.sampled_from(list(Signal)), st.integers(-1, 3)), max_size=40)
_RSOCKET_LIKE = StreamOptions(on_subscribe_frame=False, reuse_ids=False)


@settings(max_examples=500)
@given(_any_signals, st.sampled_from([RSIO_OPTIONS, _RSOCKET_LIKE]))
def test_the_tables_one_fast_path_is_the_table(ops: list[tuple[Signal, int]], options: StreamOptions) -> None:
    # semantics.streams.deliver_fast, the one fast path every binding's judge takes, against step,
    # over any sequence of signals (every state, owed onSubscribes, split elements, both overlays).
    def run(fast: bool) -> list[object]:
        rec, log = StreamRecord(), []  # type: ignore[var-annotated]
        for signal, n in ops:
            args = SignalArgs(count=max(n, 1), amount=n, element=n)
            try:
                if not (fast and signal is Signal.ON_NEXT and deliver_fast(rec, args.count)):
                    step(Side.SERVER, 1, rec, signal, args, lambda rule, message: log.append(rule), options)
            except ProtocolViolation as violation:
                log.append(violation.rule)
            log.append((rec.state, rec.demand.outstanding, rec.demand.delivered, rec.owed_on_subscribes, rec.element))
        return log

    assert run(True) == run(False)


def test_deliver_fast_changes_nothing_when_it_declines() -> None:
    rec = StreamRecord()
    step(Side.CLIENT, 1, rec, Signal.SUBSCRIBE, SignalArgs(amount=1), lambda rule, message: None)
    assert not deliver_fast(rec, 1)  # SUBSCRIBING: the table's entry is a violation, left to step
    step(Side.SERVER, 1, rec, Signal.ON_SUBSCRIBE, SignalArgs(), lambda rule, message: None)
    assert not deliver_fast(rec, 2)  # beyond demand: step finds DEM-5
    assert (rec.state, rec.demand.outstanding, rec.demand.delivered) == (StreamState.ACTIVE, 1, 0)
    assert deliver_fast(rec, 1) and rec.demand.outstanding == 0


def test_the_endpoint_drops_an_element_the_fast_path_took_after_its_cancel() -> None:
    # Why the RS-IO endpoint does more than the fast path: an element in flight after the
    # endpoint's own cancel is judged (it takes demand, as the table says) but not handed on (STR-8).
    from rsio_tck.bindings.rsio.wire import get_codec
    from rsio_tck.bindings.rsio.wire.frames import Cancel, ClientHello, OnNext, OnSubscribe, ServerHello, Subscribe
    from rsio_tck.protocol import Connection

    encoder = get_codec("msgpack").encoder()
    conn = Connection(Side.CLIENT, "msgpack")
    conn.send(ClientHello(version=0))
    conn.send(Subscribe(publisher="p", subscriber=1, initial_demand=3))
    events = conn.receive_data(b"".join(encoder.encode(f) for f in (
        ServerHello(version=0), OnSubscribe(subscriber=1), OnNext(subscriber=1, element=b"a"))))
    assert OnNext(subscriber=1, element=b"a") in events
    conn.send(Cancel(subscriber=1))
    events = conn.receive_data(encoder.encode(OnNext(subscriber=1, element=b"b")))
    rec = conn.model.spaces[Side.CLIENT][1]
    assert events == [] and rec.state is StreamState.CANCELLED and rec.demand.outstanding == 1


def _frames(ops: list[tuple[str, int]]) -> list[tuple[Side, object]]:
    from rsio_tck.bindings.rsio.wire.frames import (
        Cancel,
        ClientHello,
        OnComplete,
        OnNext,
        OnSubscribe,
        Request,
        ServerHello,
        Subscribe,
    )

    out: list[tuple[Side, object]] = [
        (Side.CLIENT, ClientHello(version=0)), (Side.SERVER, ServerHello(version=0)),
        (Side.CLIENT, Subscribe(publisher="p", subscriber=1, initial_demand=2)),
        (Side.SERVER, OnSubscribe(subscriber=1)),
    ]
    for op, n in ops:
        if op == "request":
            out.append((Side.CLIENT, Request(subscriber=1, demand=n)))
        elif op == "cancel":
            out.append((Side.CLIENT, Cancel(subscriber=1)))
        elif op == "complete":
            out.append((Side.SERVER, OnComplete(subscriber=1)))
        elif op == "subscribe":
            out.append((Side.CLIENT, Subscribe(publisher="p", subscriber=1, initial_demand=n)))
        else:
            out.append((Side.SERVER, OnNext(subscriber=1, element=b"\x00")))
    return out


@settings(max_examples=300)
@given(_ops)
def test_monitor_inline_element_path_agrees_with_the_table(ops: list[tuple[str, int]]) -> None:
    # Monitor.judge inlines the (ACTIVE | CANCELLED, ON_NEXT) entries; apply_frame is the table.
    from rsio_tck.bindings.rsio.mapping import apply_frame
    from rsio_tck.monitor import Monitor

    monitor = Monitor("msgpack")
    model = ConnectionModel()
    slow: list[tuple[int, str]] = []
    for index, (side, frame) in enumerate(_frames(ops)):
        monitor.judge(side, [frame])  # type: ignore[list-item]
        try:
            apply_frame(model, side, frame)  # type: ignore[arg-type]
        except ProtocolViolation as violation:
            slow.append((index, violation.rule))
    fast = [(f.frame_index, f.rule) for f in monitor.findings if f.level.value == "MUST"]
    assert fast == slow
    assert monitor.model.spaces[Side.CLIENT][1].demand.outstanding == model.spaces[Side.CLIENT][1].demand.outstanding
