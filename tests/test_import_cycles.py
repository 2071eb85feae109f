"""No import cycle in rsio_tck or its reference peer (imports under ``if TYPE_CHECKING:`` aside).

The graph is read from source (``import_graph``: ``ast``, nothing imported); imports inside
functions count, since they run when the function does.  ``graphlib.TopologicalSorter``
finds a cycle (its ``CycleError`` names one); ``cycles`` takes one edge of each cycle found
out of a copy of the graph and asks again, so the failure lists every cycle, not just
the first.
"""

from __future__ import annotations

import graphlib

from import_graph import import_graph, imports_in


def cycles(graph: dict[str, set[str]], limit: int = 50) -> list[list[str]]:
    """Import cycles of ``graph`` (module -> modules it imports), each as ``[a, b, ..., a]``."""
    remaining = {module: set(imported) for module, imported in graph.items()}
    found: list[list[str]] = []
    while len(found) < limit:
        try:
            graphlib.TopologicalSorter(remaining).prepare()
        except graphlib.CycleError as error:
            cycle = list(error.args[1])  # [a, ..., a]: each node is a predecessor (an import) of the one before
            found.append(cycle[::-1])  # as read: a imports b imports ... imports a
            remaining[cycle[1]].discard(cycle[0])  # break this one; other cycles through these modules remain
        else:
            return found
    return found


def show(cycle: list[str]) -> str:
    return " -> ".join(cycle)


def test_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 200 and "rsio_tck.reference_peer.api" in graph  # the walk found the whole kit and the peer
    found = cycles(graph)
    assert found == [], "import cycles (a imports b ... imports a):\n" + "\n".join(map(show, found))


def test_the_check_finds_a_cycle_and_names_its_modules() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    found = cycles(graph)
    assert sorted(sorted(set(cycle)) for cycle in found) == [["a", "b", "c"], ["e"]]
    for cycle in found:
        assert cycle[0] == cycle[-1] and all(after in graph[before] for before, after in zip(cycle, cycle[1:]))
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_type_checking_imports_do_not_count_and_imports_in_functions_do() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from rsio_tck import errors\n"
        "from rsio_tck.catalogue import RULES\n"
        "if TYPE_CHECKING:\n"
        "    from rsio_tck.monitor import Monitor\n"
        "def later():\n"
        "    from rsio_tck.transport import open_target\n"
    )
    imported = imports_in(source, "rsio_tck.probe", package=False)
    assert set(imported) == {"rsio_tck.errors", "rsio_tck.catalogue", "rsio_tck.transport"}
    # ``from . import x`` of a submodule is that submodule, not the package's __init__ (already running).
    assert imports_in("from . import flows\n", "rsio_tck.reference_peer.rsio.policy", package=False) == [
        "rsio_tck.reference_peer.rsio.flows"]
