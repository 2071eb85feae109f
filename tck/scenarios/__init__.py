"""YAML scenarios: loading, the step language, and running them against a target.

Theory of operation.  ``loader`` reads the scenario files (``scenarios/*.yaml``, checked against
``schema.json``) into ``Scenario`` values and keeps those that run on the chosen binding: its
own and the binding-neutral contract scenarios whose needs its adapter meets.  ``runner`` runs
each on a fresh connection: a ``KitSession`` (``kit_session``) owns the socket, records
everything both ways (trace, transcript, monitor) and sorts what the binding's scenario adapter
makes of each received frame into per-key inboxes (``events``, ``inbox``), within the bounds of
``bounds``.  The steps (``steps``, ``flow_steps``, run by ``script``) send through the adapter
and wait on the inboxes (``waits``); every wait ends on silence measured by ``clock``, within the
scenario's budget.  A step's failure, the monitor's findings and the kit's own declared
violations make the ``ScenarioResult`` (``result``); ``liveness`` tells a target that stopped
answering from one that missed one signal.  No module here imports a binding.
"""

from .loader import Scenario, ScenarioError, load_directory, load_file, load_paths
from .result import ScenarioResult, Verdict
from .runner import RunConfig, run_scenario, run_suite

__all__ = [
    "RunConfig",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "Verdict",
    "load_directory",
    "load_file",
    "load_paths",
    "run_scenario",
    "run_suite",
]
