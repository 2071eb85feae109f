"""The Ditto steps of ``make interop`` (interop/run_ditto.py): the golden-vector check and the client role's gate."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "ditto" / "golden.jsonl"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_ditto", ROOT / "interop" / "run_ditto.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("run_ditto", module)
    spec.loader.exec_module(module)
    return module


def test_the_committed_vectors_pass_the_check() -> None:
    assert _module().check_vectors(GOLDEN) == []


def test_the_check_names_a_vector_the_codec_rejects_and_a_missing_kind(tmp_path: Path) -> None:
    lines = GOLDEN.read_text("utf-8").splitlines()
    kept = [line for line in lines if "/search/complete" not in line]
    bad = json.loads(lines[0])
    bad["path"] = "/x"
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join([*kept, json.dumps(bad)]) + "\n", "utf-8")
    problems = _module().check_vectors(path)
    assert any(f"v.jsonl:{len(kept) + 1}: the kit's codec rejects it: DITTO-ENV-8" in p for p in problems)
    assert any("no vector of SearchComplete" in p for p in problems)


def test_the_check_reports_an_unreadable_file(tmp_path: Path) -> None:
    problems = _module().check_vectors(tmp_path / "absent.jsonl")
    assert len(problems) == 1 and "cannot read the vectors" in problems[0]


def test_the_client_role_says_why_it_cannot_run_yet_or_nothing() -> None:
    from rsio_tck.binding import REGISTRY

    why = _module().client_unavailable()
    if "ditto" not in REGISTRY:
        assert why is not None and "Ditto binding" in why
    else:
        assert why is None or "WebSocket" in why


def test_make_interop_runs_the_ditto_steps_unless_told_not_to() -> None:
    text = (ROOT / "interop" / "run.py").read_text()
    assert "--no-ditto" in text and "run_ditto.run(args.out" in text
