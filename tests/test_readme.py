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
