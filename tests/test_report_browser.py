"""The static report in a real browser: what a reader sees in headless Chromium, from file://.

The run (``report_run.shared_run``) is a real one against the embedded peer
with the ``dem-beyond-demand`` fault switched on, so it holds passes, failures
of DEM-1 and a skip.  Each page is rendered twice: ``--dump-dom`` gives the DOM
as Chromium built it (parsed with lxml), ``--screenshot`` the pixels (read with
Pillow).  The checks are what a reader looks for: the verdict counts, the
failing rule's row, and a scenario page whose failing frame is highlighted.

Chromium is Debian's ``chromium``, installed by ``make install``.  Without it
the tests skip on a developer's machine but fail under CI (``CI`` set), so CI
never silently stops looking at the report.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from lxml import html
from PIL import Image
from report_run import shared_run

from rsio_tck.reader_words import word

CHROMIUM = next((path for path in (shutil.which("chromium"), "/usr/bin/chromium") if path and Path(path).exists()),
                None)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")
WIDTH, HEIGHT = 1280, 1600
# Colours of tck/report/templates/base.html, as a reader sees them.
FAIL_BADGE, PASS_BADGE, HIT_LINE = (0xE0, 0x5D, 0x44), (0x44, 0xCC, 0x11), (0xFF, 0xD6, 0xD0)


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        message = "headless Chromium is not installed (Debian: apt-get install chromium; make install does it)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: CI must look at the report in a browser", pytrace=False)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture(scope="module")
def run_dir() -> Path:
    return shared_run()


# A hang guard for one Chromium launch, not a speed check: a page of file:// HTML needs no network, only CPU.
# Beside two busy loops, four test workers and more, a screenshot took over 90 s in loaded run L1 (quiet: ~2 s).
CHROMIUM_GUARD = 300
pytestmark = pytest.mark.timeout(4 * CHROMIUM_GUARD)  # a test launches Chromium twice, its fixture runs the kit


def _chromium(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [chromium, *FLAGS, f"--user-data-dir={profile}", *args]  # a fresh profile per launch
    return subprocess.run(command, capture_output=True, text=True, timeout=CHROMIUM_GUARD, cwd=profile.parent)


def render(chromium: str, page: Path, tmp_path: Path) -> tuple[html.HtmlElement, Image.Image]:
    """(the DOM Chromium built, the screenshot) of ``page``."""
    dumped = _chromium(chromium, tmp_path / "profile-dom", "--dump-dom", page.as_uri())
    assert dumped.returncode == 0 and "<html" in dumped.stdout, dumped.stderr[-2000:]
    shot = tmp_path / f"{page.stem}.png"
    done = _chromium(chromium, tmp_path / "profile-shot", f"--screenshot={shot}", f"--window-size={WIDTH},{HEIGHT}",
                     page.as_uri())
    assert shot.is_file(), done.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, HEIGHT)
    return html.fromstring(dumped.stdout), image


def text(element: html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def colour_rows(image: Image.Image, colour: tuple[int, int, int], least: int) -> list[int]:
    """The pixel rows holding at least ``least`` pixels of ``colour``."""
    rows = []
    for y in range(image.height):
        counts = dict((c, n) for n, c in image.crop((0, y, image.width, y + 1)).getcolors(image.width) or [])
        if counts.get(colour, 0) >= least:
            rows.append(y)
    return rows


def bands(rows: list[int], gap: int = 4) -> int:
    """How many runs of rows, a gap of up to ``gap`` rows (a dense line of bold text) joining a run."""
    return sum(1 for i, y in enumerate(rows) if i == 0 or y - rows[i - 1] > gap)


def _lines(pre: html.HtmlElement) -> list[str]:
    """The transcript's lines; a highlighted line is one span holding the line."""
    return pre.text_content().splitlines()


def test_index_shows_the_verdict_counts_and_the_failing_rules_row(chromium: str, run_dir: Path,
                                                                    tmp_path: Path) -> None:
    recorded = Counter(json.loads(line)["verdict"] for line in (run_dir / "results.jsonl").read_text().splitlines())
    assert recorded["fail"] and recorded["pass"] and recorded["skip"]  # the run this test relies on
    dom, image = render(chromium, run_dir / "report" / "index.html", tmp_path)
    assert not dom.xpath("//script")

    # The verdict counts: each verdict's heading over its number, as the run recorded them.
    header, numbers = dom.xpath('//table[@id="counts"]//tr')  # Chromium's DOM has the implied tbody
    names = [text(cell) for cell in header.xpath("./th")]
    shown = dict(zip(names, (int(text(cell)) for cell in numbers.xpath("./td"))))
    assert shown["total"] == sum(recorded.values())
    in_words = Counter[str]()  # the report speaks the reader's words (skip is "not run")
    for outcome, count in recorded.items():
        in_words[word(outcome)] += count
    assert {name: shown[name] for name in in_words} == dict(in_words)
    assert all(shown[name] == 0 for name in names if name not in in_words and name != "total")

    # The failing rule's row: DEM-1, MUST, outcome fail, its two failing scenarios counted and linked.
    (row,) = dom.xpath('//tr[@id="rule-DEM-1"]')
    cells = row.xpath("./td")
    assert [text(c) for c in cells[:3]] == ["DEM-1", "MUST", "fail"]
    assert cells[2].xpath('.//span[contains(@class, "v-fail")]')
    columns = [text(c) for c in dom.xpath('//table[@id="matrix"]//tr[1]/th')][3:-1]
    counts = dict(zip(columns, cells[3:-1]))
    assert text(counts["fail"]) == "2" and "c-fail" in counts["fail"].get("class", "")
    assert sorted(a.get("href") for a in cells[-1].xpath(".//a")) == ["scenarios/DEM-001.html", "scenarios/DEM-002.html"]
    (held,) = dom.xpath('//tr[@id="rule-DEM-3"]')  # a rule that held (DEM-003 passed), for contrast
    assert text(held.xpath("./td")[2]) == "pass"

    # The pixels: a page of text and tables, with red fail badges and green pass badges on it.
    top = image.crop((0, 0, WIDTH, 400))
    assert len(top.getcolors(WIDTH * 400) or []) > 20  # not a blank page: text, badges, table lines
    assert colour_rows(image, FAIL_BADGE, 10) and colour_rows(image, PASS_BADGE, 10)


def test_a_failing_scenario_page_highlights_the_offending_frame(chromium: str, run_dir: Path, tmp_path: Path) -> None:
    dom, image = render(chromium, run_dir / "report" / "scenarios" / "DEM-001.html", tmp_path)
    assert "DEM-001" in text(dom.xpath("//h1")[0])
    assert dom.xpath('//p/span[contains(@class, "v-fail")]')
    judged = [text(li) for li in dom.xpath('//h2[starts-with(., "Monitor")]/following-sibling::ul[1]/li')]
    # The fault's DEM-1, and perhaps the TCK-9 warnings the peer's integer-width freedom earns on purpose.
    assert any(re.search(r"DEM-1 \(MUST, server\) frame #\d+", line) for line in judged)
    assert all(re.search(r"(DEM-1 \(MUST|TCK-9 \(SHOULD), server\) frame #\d+", line) for line in judged), judged
    frames = {int(re.search(r"frame #(\d+)", line).group(1)) for line in judged}  # type: ignore[union-attr]

    # In the transcript exactly the cited frames (and the lines stating the violation) are highlighted.
    transcript = dom.xpath('//pre[@class="transcript"]')[0]
    hits = [hit.text_content() for hit in transcript.xpath('./span[@class="hit"]')]
    hit_frames = {int(m.group(1)) for line in hits if (m := re.match(r"\s*[\d.]+ms #(\d+)", line))}
    assert hit_frames == frames
    assert any("onNext(subscriber=1" in line for line in hits)
    plain_frames = re.findall(r"^\s*[\d.]+ms #(\d+)", transcript.text_content(), re.M)
    assert len(plain_frames) > len(frames)  # the other frames are there, not highlighted

    # The pixels: a highlighted band across the transcript's width for each block of highlighted lines.
    marked = [line in hits for line in _lines(transcript)]
    blocks = sum(1 for i, hit in enumerate(marked) if hit and (i == 0 or not marked[i - 1]))
    assert bands(colour_rows(image, HIT_LINE, WIDTH // 3)) == blocks >= 2
