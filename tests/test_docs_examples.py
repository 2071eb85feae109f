"""The documentation's examples run as written, and the README stays a short front page.

The reference peer's Python API example is in docs/reference-peer.md, the CI example in docs/guide/ci.md
(both moved there from the README, which now holds the set-up commands, the quick starts and links).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PEER_PAGE = ROOT / "docs" / "reference-peer.md"
CI_PAGE = ROOT / "docs" / "guide" / "ci.md"


def test_the_peer_api_example_in_the_docs_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", PEER_PAGE.read_text(), re.S)
    example = next(block for block in blocks if "from rsio_tck.reference_peer import Peer" in block)
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1", "2", "3", "4"]


def test_the_ci_example_in_the_docs_works_with_a_server_that_starts_slowly(tmp_path: Path) -> None:
    import shutil
    import socket

    import yaml

    block = next(b for b in re.findall(r"```yaml\n(.*?)```", CI_PAGE.read_text(), re.S) if "rsio-tck run" in b)
    steps = yaml.safe_load(block)["jobs"]["rsio-conformance"]["steps"]
    script = next(step["run"] for step in steps if "rsio-tck run" in step.get("run", ""))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # The user's server, standing in: the reference peer, two seconds late.
    server = f"sh -c 'sleep 2; exec {sys.executable} -m rsio_tck.reference_peer --listen tcp://127.0.0.1:{port}'"
    script = (script.replace("./my-server --listen 127.0.0.1:7878", server).replace(":7878", f":{port}")
              .replace("rsio-tck run", f"{sys.executable} -m rsio_tck.cli run -k 'HS-001 or DEM-001' --quiet"))
    assert server in script and "--wait-for-target" in script
    shutil.copy(ROOT / "reference_peer" / "rsio" / "capabilities.json",
                tmp_path / "rsio-capabilities.json")
    (tmp_path / "rsio-known-failures.txt").write_text("# no known failures\n")
    done = subprocess.run(["bash", "-c", script + "\nstatus=$?\nkill $! 2>/dev/null || true\nwait\nexit $status"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "results: rsio-report/" in done.stdout
    (results,) = (tmp_path / "rsio-report").glob("*/results.jsonl")
    assert len(results.read_text().splitlines()) == 2


def test_the_readme_is_a_short_front_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    first_block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert first_block is not None and text.index("```sh") < text.index("\n## ")  # the set-up comes first
    assert [line.split()[:2] for line in first_block.group(1).splitlines()] == [["make", "run"], ["make", "test"]]
    for quick_start in ("test your RSocket server", "test your RSocket client", "test a Ditto endpoint"):
        assert f"## Quick start: {quick_start}" in text
    assert "reports/interop/site/index.html" in text and "(docs/index.md)" in text


def test_no_documentation_heading_cites_an_issue_number() -> None:
    # The README, the site's own pages and the repository files the site shows (its build hook's list).
    spec = importlib.util.spec_from_file_location("repo_files", ROOT / "docs" / "hooks" / "repo_files.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    pages = [README, *sorted((ROOT / "docs").rglob("*.md")), *(ROOT / path for path in hook.FILES)]
    cited = [f"{page.relative_to(ROOT)}: {line}" for page in pages for line in page.read_text().splitlines()
             if re.match(r"^#+ .*\bissues? \d", line, re.I)]
    assert cited == []
