"""The README's Python example runs as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_peer_api_example_in_the_readme_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    example = next(block for block in blocks if "from rsio_tck.reference_peer import Peer" in block)
    done = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1", "2", "3", "4"]


def test_the_ci_example_in_the_readme_works_with_a_server_that_starts_slowly(tmp_path: Path) -> None:
    import shutil
    import socket

    import yaml

    block = next(b for b in re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S) if "rsio-tck run" in b)
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
    shutil.copy(Path(__file__).resolve().parents[1] / "reference_peer" / "capabilities.json",
                tmp_path / "rsio-capabilities.json")
    (tmp_path / "rsio-known-failures.txt").write_text("# no known failures\n")
    done = subprocess.run(["bash", "-c", script + "\nstatus=$?\nkill $! 2>/dev/null || true\nwait\nexit $status"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "results: rsio-report/" in done.stdout
    (results,) = (tmp_path / "rsio-report").glob("*/results.jsonl")
    assert len(results.read_text().splitlines()) == 2
