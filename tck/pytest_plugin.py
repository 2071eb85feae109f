"""pytest plugin (entry point ``pytest11: rsio``): RS-IO scenarios as test items.

Thin by design: pytest loads it in every run of every project that has the kit
installed, so it imports the kit only when scenarios are collected.  Enable it
with ``--rsio`` or ``--rsio-target URL`` (or the ``rsio_target`` ini option).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .binding import BINDING_NAMES, DEFAULT_BINDING

if TYPE_CHECKING:
    from .scenarios import RunConfig, Scenario, ScenarioResult
    from .scenarios.liveness import TargetWatch

_OPTIONS = (
    # (option, ini name, help, default)
    ("--rsio-target", "rsio_target", "target URL: tcp://host:port, tls://host:port, unix:/path, exec:COMMAND "
                                     "(default: start the reference peer on a free loopback port)", None),
    ("--rsio-binding", "rsio_binding", f"the wire binding: {', '.join(BINDING_NAMES)} (default {DEFAULT_BINDING})",
     DEFAULT_BINDING),
    ("--rsio-profile", "rsio_profile", "the binding's wire profile (RS-IO: msgpack or varint; default: the "
                                       "binding's first)", None),
    ("--rsio-codec", "rsio_codec", "RS-IO's wire codec: msgpack (default) or varint (the same as --rsio-profile)",
     None),
    ("--rsio-capabilities", "rsio_capabilities", "the target's capabilities file (default: claims everything)", None),
    ("--rsio-name", "rsio_name", "NAME[@VERSION]: how reports name a target without a capabilities file "
                                 "(default: its URL)", None),
    ("--rsio-baseline", "rsio_baseline", "file of scenario ids the target is known to fail (reported as xfail)", None),
    ("--rsio-scenarios", "rsio_scenarios", "scenario file or directory (*.yaml, *.yml; default: the kit's own)", None),
    ("--rsio-signal-timeout", "rsio_signal_timeout", "seconds of silence before a signal counts as missing "
                                                     "(default 2)", "2.0"),
    ("--rsio-scenario-budget", "rsio_scenario_budget", "seconds of a scenario within which bytes still arriving "
                                                       "may stretch a wait (default 30)", "30.0"),
    ("--rsio-silence-window", "rsio_silence_window", "seconds of silence that prove nothing arrives (default 0.05)",
     "0.05"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rsio", "rsio-tck: Reactive Streams IO conformance")
    group.addoption("--rsio", action="store_true", default=False, help="run the RS-IO conformance scenarios")
    parser.addini("rsio", "run the RS-IO conformance scenarios", type="bool", default=False)
    for option, ini, help_text, _default in _OPTIONS:
        group.addoption(option, dest=ini, default=None, help=help_text)
        parser.addini(ini, help_text, default=None)
    group.addoption("--rsio-strict", action="store_true", dest="rsio_strict", default=False,
                    help="fail on SHOULD deviations too")
    parser.addini("rsio_strict", "fail on SHOULD deviations too", type="bool", default=False)


def _get(config: pytest.Config, name: str, default: Any = None) -> Any:
    value = config.getoption(name)
    if value in (None, False):
        value = config.getini(name)
    return default if value in (None, "", False) else value


def _enabled(config: pytest.Config) -> bool:
    return bool(_get(config, "rsio") or _get(config, "rsio_target"))


def _scenario_dir(config: pytest.Config) -> Path:
    """The scenario directory, or the one scenario file, to collect."""
    chosen = _get(config, "rsio_scenarios")
    if chosen:
        return Path(chosen).resolve()
    from .scenarios.loader import default_directory

    return default_directory().resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rsio: an RS-IO conformance scenario")
    if not _enabled(config):
        return
    from .catalogue import AREAS, RULES

    for area in AREAS:
        config.addinivalue_line("markers", f"area_{area}: scenarios of rule area {area}")
    for rule in RULES:
        config.addinivalue_line("markers", f"rule_{rule.replace('-', '_')}: scenarios citing {rule}")
    _check_options(config)
    if not config.option.file_or_dir:  # no paths given: run the kit's scenarios
        config.args = [str(_scenario_dir(config))]
    from .capabilities import TargetNameError, parse_target_name

    name = _get(config, "rsio_name")
    try:
        named = parse_target_name(name, "--rsio-name") if name else None
    except TargetNameError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_STATE] = _State(config, named)


def _wire(config: pytest.Config) -> tuple[str, str]:
    """(binding, profile) of --rsio-binding, --rsio-profile and RS-IO's --rsio-codec (or their ini twins), checked."""
    from .gate import check_binding, check_profile

    binding = check_binding(str(_get(config, "rsio_binding", DEFAULT_BINDING)), "--rsio-binding")
    codec = _get(config, "rsio_codec")
    profile = _get(config, "rsio_profile")
    return binding, check_profile(binding, None if profile is None else str(profile),
                                  None if codec is None else str(codec),
                                  flag="--rsio-profile", codec_flag="--rsio-codec")


def _check_options(config: pytest.Config) -> None:
    """Refuse a bad binding, profile, codec, target URL, capabilities, baseline or scenario path before anything runs."""
    from .gate import GateError, check_target_url, load_capabilities, read_baseline

    try:
        binding, _ = _wire(config)
        target = _get(config, "rsio_target")
        if target:
            check_target_url(str(target), "--rsio-target")
        caps = _get(config, "rsio_capabilities")
        load_capabilities(Path(caps) if caps else None, binding)
        baseline = _get(config, "rsio_baseline")
        if baseline:
            read_baseline(Path(baseline))
        scenarios = _scenario_dir(config)
        if not scenarios.exists():
            raise GateError(f"--rsio-scenarios {scenarios}: no such file or directory")
        if scenarios.is_dir():
            from .scenarios.loader import scenario_files

            if not scenario_files(scenarios):
                raise GateError(f"--rsio-scenarios {scenarios}: no scenario files (*.yaml, *.yml) in this directory")
    except GateError as exc:
        raise pytest.UsageError(f"rsio: {exc}") from None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not _enabled(config) or file_path.suffix not in (".yaml", ".yml"):
        return None
    chosen = _scenario_dir(config)
    if chosen != file_path.resolve() and chosen not in file_path.resolve().parents:
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Exit 3 once the target stopped answering (the scenarios after it errored, not run)."""
    state = session.config.stash.get(_STATE, None)
    if state is not None and state.stop_line() is not None:
        from .gate import ExitCode

        session.exitstatus = int(ExitCode.UNRUNNABLE)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The one line saying the target stopped answering, and during which scenario."""
    state = config.stash.get(_STATE, None)
    line = state.stop_line() if state is not None else None
    if line is not None:
        terminalreporter.write_line(f"rsio: {line}", red=True, bold=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.close()


class _State:
    """What the whole session shares: the target (started once) and the run configuration."""

    def __init__(self, config: pytest.Config, named: tuple[str, str | None] | None = None) -> None:
        self.config = config
        self.named = named  # --rsio-name NAME[@VERSION]
        self._run_config: RunConfig | None = None
        self._baseline: frozenset[str] | None = None
        self._peer: Any = None
        self._watch: TargetWatch | None = None
        self.not_run = 0  # scenarios not run once the target stopped answering

    def run_config(self) -> RunConfig:
        if self._run_config is None:
            from .capabilities import Capabilities
            from .gate import run_config
            from .scenarios.liveness import probe_timeout

            binding, profile = _wire(self.config)  # checked at configure time
            target = self._reach(_get(self.config, "rsio_target"), binding, profile)
            caps_file = _get(self.config, "rsio_capabilities")
            signal_timeout = float(_get(self.config, "rsio_signal_timeout", "2.0"))
            self._run_config = run_config(
                binding, profile,
                target=target,
                capabilities=Capabilities.load(Path(caps_file), binding) if caps_file else Capabilities.everything(binding),
                strict=bool(_get(self.config, "rsio_strict")),
                signal_timeout=signal_timeout,
                scenario_budget=float(_get(self.config, "rsio_scenario_budget", "30.0")),
                silence_window=float(_get(self.config, "rsio_silence_window", "0.05")),
                baseline=self.baseline(),
                probe_timeout=probe_timeout(signal_timeout),
            )
        return self._run_config

    def watch(self) -> TargetWatch | None:
        """The session's watch on the target: a probe after a scenario's time-out, the stop decided once."""
        if self._watch is None:
            from .scenarios.liveness import watch_of

            self._watch = watch_of(self.run_config())
        return self._watch

    def stop_line(self) -> str | None:
        """The line saying the target stopped answering, once it did; else None."""
        if self._watch is None or self._watch.stop is None:
            return None
        from .gate import stop_line

        return stop_line(self._watch.stop, self.not_run)

    def _reach(self, target: str | None, binding: str, profile: str) -> str:
        """The target URL, reached once (or the embedded peer, started); else the session stops with one line."""
        from .embedded import EmbeddedPeer, EmbeddedPeerError
        from .gate import ExitCode, GateError, check_target_url, reach_target

        try:
            if target:
                reach_target(check_target_url(target, "--rsio-target"))
                return target
            self._peer = EmbeddedPeer(binding=binding, profile=profile)
            return self._peer.start()
        except (GateError, EmbeddedPeerError) as exc:
            pytest.exit(f"rsio: {' '.join(str(exc).split())[:300]}", returncode=int(ExitCode.UNRUNNABLE))

    def baseline(self) -> frozenset[str]:
        if self._baseline is None:
            from .gate import read_baseline

            path = _get(self.config, "rsio_baseline")
            self._baseline = read_baseline(Path(path)) if path else frozenset()
        return self._baseline

    def target_label(self) -> str:
        """How the results name the target: --rsio-name, else the embedded peer's name, else the URL."""
        target = self.run_config().target
        named = self.named
        if named is None and self._peer is not None:
            from .embedded import reference_peer_name

            named = reference_peer_name((), self._peer.binding)
        if named is None:
            return target
        return f"{named[0]}@{named[1]}" if named[1] else named[0]

    def close(self) -> None:
        if self._peer is not None:
            self._peer.stop()
            self._peer = None


_STATE = pytest.StashKey[_State]()


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: an entry for a deselected scenario is still known
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Baseline entries naming no collected scenario: a warning, or a usage error with --rsio-strict."""
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    collected = {item.scenario.id for item in items if isinstance(item, ScenarioItem)}
    if not collected:
        return
    unknown = sorted(state.baseline() - collected)
    if not unknown:
        return
    message = f"rsio: baseline {_get(config, 'rsio_baseline')}: {len(unknown)} entries naming no collected scenario: " \
              f"{', '.join(unknown[:10])}"
    if _get(config, "rsio_strict"):
        raise pytest.UsageError(message + " (an error with --rsio-strict)")
    warnings.warn(message, UserWarning, stacklevel=1)


def _allure(config: pytest.Config) -> Any:
    """rsio_tck.report.allure_support when this run writes allure results (--alluredir), else None."""
    if not config.getoption("allure_report_dir", None):  # allure-pytest's --alluredir
        return None
    from .report import allure_support

    return allure_support if allure_support.allure_active(config) else None


class ScenarioFile(pytest.File):
    def collect(self) -> Any:
        from .scenarios import load_file
        from .scenarios.loader import applies_to

        baseline = self.config.stash[_STATE].baseline()
        binding, _ = _wire(self.config)
        for scenario in load_file(self.path):
            if applies_to(scenario, binding) is not None:
                continue  # another binding's scenario: not part of this run (not a skip: nothing is unclaimed)
            item = ScenarioItem.from_parent(self, name=scenario.id, scenario=scenario)
            item.add_marker("rsio")
            item.add_marker(f"area_{scenario.area}")
            for rule in scenario.rules:
                item.add_marker(f"rule_{rule.replace('-', '_')}")
            if scenario.id in baseline:
                item.add_marker(pytest.mark.xfail(reason=f"{scenario.id} is in the baseline of known failures",
                                                  strict=False))
            yield item


class ScenarioFailed(AssertionError):  # AssertionError: allure reports "failed", not "broken"
    def __init__(self, result: ScenarioResult) -> None:
        super().__init__(result.id)
        self.result = result


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scenario = scenario
        self.user_properties.append(("rules", " ".join(scenario.rules)))
        self.user_properties.append(("level", scenario.level))

    def setup(self) -> None:
        """Once the target stopped answering, a scenario that would run is not run: an error, said in one
        line each (the summary says once where the target stopped)."""
        state = self.config.stash[_STATE]
        watch = state.watch()
        if watch is None or watch.stop is None:
            return
        from .scenarios.runner import skip_reason

        if skip_reason(self.scenario, state.run_config()) is None:
            state.not_run += 1
            pytest.fail(f"not run: the target {watch.stop.went} during {watch.stop.during}", pytrace=False)

    def runtest(self) -> None:
        import asyncio

        from .scenarios import Verdict, run_scenario

        state = self.config.stash[_STATE]
        config = state.run_config()
        target = state.target_label()
        self.user_properties.append(("target", target))
        # The baseline is applied by pytest's xfail marker here, not by the runner.
        allure = _allure(self.config)
        if allure is not None:
            allure.label_scenario(self.scenario, target)
        plain = type(config)(**{**config.__dict__, "baseline": frozenset(), "keep_trace": allure is not None})
        result = asyncio.run(run_scenario(self.scenario, plain, state.watch()))
        self.user_properties.append(("verdict", result.verdict.value))
        if allure is not None:
            allure.attach_result(result)  # epic/feature/severity/links, transcript, trace, pcap
        if result.verdict is Verdict.SKIP:
            pytest.skip(result.reason)
        if result.verdict in (Verdict.FAIL, Verdict.ERROR):
            raise ScenarioFailed(result)
        if result.verdict is Verdict.WARN:
            warnings.warn(f"{self.scenario.id}: SHOULD not met: {result.explain().splitlines()[1:2]}",
                          UserWarning, stacklevel=1)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return excinfo.value.result.explain()
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.scenario.line - 1, f"{self.scenario.id}: {self.scenario.title}"
