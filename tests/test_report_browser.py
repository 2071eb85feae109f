"""The static report in a real browser: headless Chromium renders index.html from file://."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from report_run import shared_run

CHROMIUM = next((path for path in (shutil.which("chromium"), "/usr/bin/chromium") if path and Path(path).exists()),
                None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed "
                                "(Debian: apt-get install chromium); the browser check of the report is skipped")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


@pytest.fixture(scope="module")
def index() -> Path:
    return shared_run() / "report" / "index.html"


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, cwd=tmp_path)


def _png_rows(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the (still filtered) scanlines of a PNG: enough to tell a blank page."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        (length,), kind = struct.unpack(">I", data[offset : offset + 4]), data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    stride = len(raw) // height
    return width, height, [raw[i * stride : (i + 1) * stride] for i in range(height)]


def test_index_renders_in_chromium_and_shows_the_matrix(index: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2000", index.as_uri())
    assert shot.exists(), done.stderr[-2000:]
    width, height, rows = _png_rows(shot.read_bytes())
    assert (width, height) == (1280, 2000)
    assert shot.stat().st_size > 20_000
    assert len(set(rows)) > 200  # text and table lines, not a blank page
    dom = _chromium(tmp_path, "--dump-dom", index.as_uri()).stdout
    assert '<table id="matrix">' in dom
    assert 'id="rule-DEM-1"' in dom and 'id="rule-BYE-6"' in dom
    assert "untested" in dom and "<script" not in dom
