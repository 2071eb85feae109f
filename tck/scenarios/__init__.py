"""YAML scenarios: loading, the step language, and running them against a target."""

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
