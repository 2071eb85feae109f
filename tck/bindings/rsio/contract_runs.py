"""A test publisher's elements judged in bulk: a run of them against what its contract expects next.

Theory of operation: the decoder hands long stretches of element frames to the judge as one run
(``wire.runs``).  On a test publisher's stream the judge asks ``run_fits`` whether the whole run is
exactly the elements the stream's contract expects next, none beyond its count: MessagePack integers
(tck/range, tck/infinite, tck/error) are compared a width-stretch at a time
(``testpubs.msgpack_int_stretches``), tck/fixed elements as one block (``testpubs.fixed_elements_due``).
Anything else, a wrong value, a wider integer, one element too many, a tck/subscribe stream, sends the
run down the frame-by-frame path, which finds and words what is wrong; ``tests/test_contract_runs.py``
holds the two paths to each other.
"""

from __future__ import annotations

from ...errors import Side
from ...testpubs import (
    Error,
    Fixed,
    Infinite,
    Malformed,
    Range,
    SubscribeBack,
    count_of,
    fixed_elements_due,
    msgpack_int_stretches,
)
from .contract import Contract, ContractJudge


def run_fits(judge: ContractJudge, sender: Side, subscriber: int, items: list[bytes] | None, data: bytes | None,
             count: int) -> Contract | None | bool:
    """Whether ``count`` elements ``sender`` sent for one subscriber, in a row, are exactly what its contract
    expects next (``items``: variable-size elements; ``data``: fixed-size ones end to end): the contract to
    advance by ``count``, None when the stream has no contract (nothing to judge), or False when the run must
    be judged frame by frame.  Changes nothing."""
    if judge.inners:
        return False
    key = (sender.peer, subscriber)
    contract = judge.contracts.get(key)
    if contract is None:
        return None if not judge.queued_for(key) else False
    spec = contract.spec
    if contract.finished or spec is None or isinstance(spec, (Malformed, SubscribeBack)):
        return False
    index = contract.index
    total = count_of(spec)
    if total is not None and index + count > total:
        return False
    if items is not None and isinstance(spec, (Range, Infinite, Error)):
        at = index + (spec.start if isinstance(spec, (Range, Infinite)) else 0)
        position = 0
        for n, width, joined in msgpack_int_stretches(at, count):
            stretch = items[position : position + n]
            if b"".join(stretch) != joined or set(map(len, stretch)) != {width}:
                return False  # a wrong or wider integer somewhere: the frame path says which
            position += n
        return contract
    if data is not None and isinstance(spec, Fixed):
        return contract if fixed_elements_due(spec, index, count, data) else False
    return False
