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

if TYPE_CHECKING:
    from .scenarios import RunConfig, Scenario, ScenarioResult

_OPTIONS = (
    # (option, ini name, help, default)
    ("--rsio-target", "rsio_target", "target URL: tcp://host:port, tls://host:port, unix:/path, exec:COMMAND "
                                     "(default: start the reference peer on a free loopback port)", None),
    ("--rsio-codec", "rsio_codec", "wire codec: msgpack (default) or varint", "msgpack"),
    ("--rsio-capabilities", "rsio_capabilities", "the target's capabilities file (default: claims everything)", None),
    ("--rsio-name", "rsio_name", "NAME[@VERSION]: how reports name a target without a capabilities file "
                                 "(default: its URL)", None),
    ("--rsio-baseline", "rsio_baseline", "file of scenario ids the target is known to fail (reported as xfail)", None),
    ("--rsio-scenarios", "rsio_scenarios", "directory of scenario files (default: the kit's own)", None),
    ("--rsio-signal-timeout", "rsio_signal_timeout", "seconds a signal may take to arrive (default 2)", "2.0"),
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
    chosen = _get(config, "rsio_scenarios")
    if chosen:
        return Path(chosen).resolve()
    from .scenarios.loader import default_directory

    return default_directory().resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rsio: an RS-IO conformance scenario")
    if not _enabled(config):
        return
    from .rules import AREAS, RULES

    for area in AREAS:
        config.addinivalue_line("markers", f"area_{area}: scenarios of rule area {area}")
    for rule in RULES:
        config.addinivalue_line("markers", f"rule_{rule.replace('-', '_')}: scenarios citing {rule}")
    if not config.option.file_or_dir:  # no paths given: run the kit's scenarios
        config.args = [str(_scenario_dir(config))]
    from .capabilities import TargetNameError, parse_target_name

    name = _get(config, "rsio_name")
    try:
        named = parse_target_name(name, "--rsio-name") if name else None
    except TargetNameError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_STATE] = _State(config, named)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not _enabled(config) or file_path.suffix not in (".yaml", ".yml"):
        return None
    if _scenario_dir(config) not in file_path.resolve().parents:
        return None
    return ScenarioFile.from_parent(parent, path=file_path)


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
        self._peer: Any = None

    def run_config(self) -> RunConfig:
        if self._run_config is None:
            from .capabilities import Capabilities
            from .embedded import EmbeddedPeer
            from .scenarios import RunConfig

            codec = _get(self.config, "rsio_codec", "msgpack")
            target = _get(self.config, "rsio_target")
            if not target:
                self._peer = EmbeddedPeer(codec=codec)
                target = self._peer.start()
            caps_file = _get(self.config, "rsio_capabilities")
            baseline_file = _get(self.config, "rsio_baseline")
            self._run_config = RunConfig(
                target=target,
                codec=codec,
                capabilities=Capabilities.load(Path(caps_file)) if caps_file else Capabilities.everything(),
                strict=bool(_get(self.config, "rsio_strict")),
                signal_timeout=float(_get(self.config, "rsio_signal_timeout", "2.0")),
                silence_window=float(_get(self.config, "rsio_silence_window", "0.05")),
                baseline=read_baseline(Path(baseline_file)) if baseline_file else frozenset(),
            )
        return self._run_config

    def target_label(self) -> str:
        """How the results name the target: --rsio-name, else the embedded peer's name, else the URL."""
        target = self.run_config().target
        named = self.named
        if named is None and self._peer is not None:
            from .embedded import reference_peer_name

            named = reference_peer_name()
        if named is None:
            return target
        return f"{named[0]}@{named[1]}" if named[1] else named[0]

    def close(self) -> None:
        if self._peer is not None:
            self._peer.stop()
            self._peer = None


_STATE = pytest.StashKey[_State]()


def read_baseline(path: Path) -> frozenset[str]:
    """Scenario ids, one per line; ``#`` starts a comment."""
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            ids.add(text)
    return frozenset(ids)


def _allure(config: pytest.Config) -> Any:
    """rsio_tck.report.allure_support when this run writes allure results (--alluredir), else None."""
    if not config.getoption("allure_report_dir", None):  # allure-pytest's --alluredir
        return None
    from .report import allure_support

    return allure_support if allure_support.allure_active(config) else None


class ScenarioFile(pytest.File):
    def collect(self) -> Any:
        from .scenarios import load_file

        baseline: frozenset[str] = frozenset()
        path = _get(self.config, "rsio_baseline")
        if path:
            baseline = read_baseline(Path(path))
        for scenario in load_file(self.path):
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
        result = asyncio.run(run_scenario(self.scenario, plain))
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
