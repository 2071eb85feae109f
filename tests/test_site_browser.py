"""The published site in a real browser, read as its readers read it: the landing page and a rule page.

The site is published by the real commands from a real run: ``rsio-tck run`` against the embedded
reference peer with the ``dem-beyond-demand`` fault (so DEM-1 fails) and a baseline that lists one of the
failing scenarios (a known failure), then ``rsio-tck publish`` and the landing page over it.  Chromium
renders the pages from file://; the checks are the issue's: the scorecards equal what ``results.jsonl``
says, every failing cell links to a page that exists, no local link of the folder is broken, no page shows
the kit's bookkeeping (xfail, xpass, None) or a rule of another binding, and the reproduction command on
the rule page, run against the peer with that fault, fails the same rule.

The screenshots are kept in ``reports/site-browser/`` (CI keeps ``reports/``).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from lxml import html
from pipeline_spark import session
from test_report_browser import chromium, render, text  # noqa: F401 - the chromium fixture
from typer.testing import CliRunner

from rsio_tck.catalogue import RULES
from rsio_tck.cli import app
from rsio_tck.embedded import EmbeddedPeer
from rsio_tck.findings.spec import cited_rules
from rsio_tck.pipeline.landing import write_landing
from rsio_tck.pipeline.public import binding_rules

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "reports" / "site-browser"
FAULT = "dem-beyond-demand"
CHOSEN = "HS-001 or DEM-001 or DEM-002 or DEM-003"
KNOWN = "DEM-002"  # the baseline's entry: a known failure, which the pages must still call a failure


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / "baseline.txt").write_text(f"{KNOWN}  # known: the fault's DEM-1\n")
    runner = CliRunner()
    ran = runner.invoke(app, ["run", "--fault", FAULT, "-k", CHOSEN, "--baseline", str(root / "baseline.txt"),
                              "--report-dir", str(root / "reports"), "--quiet"])
    assert ran.exit_code == 1, ran.output  # conformance failures: the fault's
    session()
    published = runner.invoke(app, ["publish", str(root / "reports"), "--out", str(root / "site" / "server"),
                                    "--warehouse", str(root / "warehouse")])
    assert published.exit_code == 0, published.output + repr(published.exception)
    write_landing(root / "site", [("Servers", "server")], "RS-IO")
    return root / "site"


def _results(site: Path) -> list[dict[str, object]]:
    (run_dir,) = (site.parent / "reports").iterdir()
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def _expected_card(results: list[dict[str, object]]) -> dict[str, int]:
    """The scorecard, counted here from results.jsonl: a rule a failing result's violations name (or, with
    none, that it cites) is broken; a rule a passing result cites, and nothing broke, held."""
    broken: set[str] = set()
    warned: set[str] = set()
    held: set[str] = set()
    for result in results:
        named = {v["rule"] for v in result["violations"]} or set(result["rules"])  # type: ignore[index, union-attr, arg-type]
        if result["verdict"] in ("fail", "xfail"):
            broken |= named
        elif result["verdict"] == "warn":
            warned |= named
        elif result["verdict"] in ("pass", "xpass"):
            held |= {r for r in result["rules"] if not RULES[r].untested_on_target}  # type: ignore[union-attr]
    must = {r for r in broken | held | warned if RULES[r].level.value == "MUST"}
    should = {r for r in broken | held | warned if RULES[r].level.value == "SHOULD"}
    return {"must_broken": len(must & broken), "must_tested": len(must),
            "should_warnings": len(should & (warned | broken))}


def _local_links(page: Path) -> list[tuple[str, Path, str]]:
    """(the link as written, the file it names, its fragment) of every local href and src of ``page``."""
    dom = html.fromstring(page.read_bytes())
    out = []
    for link in dom.xpath("//a/@href | //img/@src | //link/@href | //script/@src"):
        parts = urlsplit(link)
        if parts.scheme or parts.netloc:
            continue
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        out.append((link, target, parts.fragment))
    return out


def _reader_text(page: Path) -> str:
    """What a reader reads on ``page``: its body's text, without the transcripts (``<pre>``: the frames as
    decoded, whose field values are data, e.g. an absent metadata)."""
    body = html.fromstring(page.read_bytes()).xpath("//body")[0]
    for pre in body.xpath(".//pre"):
        pre.drop_tree()
    return " ".join(body.text_content().split())


def test_the_landing_page_shows_the_scorecard_results_jsonl_gives(chromium: str, site: Path,  # noqa: F811
                                                                  tmp_path: Path) -> None:
    dom, image = render(chromium, site / "index.html", tmp_path)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(tmp_path / "index.png", SHOTS / "landing.png")
    (row,) = dom.xpath('//table[@id="scorecards"]//tr[@data-target]')
    shown = {cell.get("data-field"): int(text(cell)) for cell in row.xpath("./td[@data-field]")
             if cell.get("data-field") != "findings"}
    expected = _expected_card(_results(site))
    assert expected["must_broken"] >= 1 and shown == expected
    assert len(image.getcolors(image.width * image.height) or []) > 20  # a page, not a blank


def test_a_rule_page_says_fail_for_a_known_failure_and_its_command_reproduces_it(chromium: str,  # noqa: F811
                                                                                   site: Path,
                                                                                   tmp_path: Path) -> None:
    (page,) = site.glob("server/rules/*/DEM-1.html")
    dom, _ = render(chromium, page, tmp_path)
    shutil.copy(tmp_path / f"{page.stem}.png", SHOTS / "rule.png")
    heading = text(dom.xpath("//h1")[0])
    assert "DEM-1" in heading and heading.endswith("fail")
    assert "known" in text(dom.xpath("//body")[0])  # the baseline's entry, labelled, still a failure
    assert dom.xpath('//pre[@class="transcript"]/span[@class="hit"]')  # the offending frame, highlighted
    commands = [text(c) for c in dom.xpath('//code[@class="command"]')]
    assert commands and all("tcp://HOST:PORT" in c for c in commands)
    with EmbeddedPeer(faults=[FAULT]) as url:
        args = shlex.split(commands[0].replace("tcp://HOST:PORT", url))
        assert args[:2] == ["rsio-tck", "run"]
        again = CliRunner().invoke(app, [*args[1:], "--report-dir", str(tmp_path / "again"), "--quiet"])
    assert again.exit_code == 1, again.output
    (run_dir,) = (tmp_path / "again").iterdir()
    rerun = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert any(r["verdict"] == "fail" and "DEM-1" in {v["rule"] for v in r["violations"]} for r in rerun)


def test_every_failing_cell_links_to_a_page_and_no_local_link_is_broken(site: Path) -> None:
    index = html.fromstring((site / "server" / "index.html").read_bytes())
    failing = index.xpath('//table[@id="matrix"]//td[contains(@class, "fail")]')
    assert failing
    for cell in failing:
        (link,) = cell.xpath("./a/@href")
        assert (site / "server" / link).is_file(), link
    broken = []
    for page in site.rglob("*.html"):
        if re.search(r'(href|src)="file:', page.read_text()):  # into the builder's file system: broken when served
            broken.append(f"{page.relative_to(site)}: a file: link")
        for written, target, fragment in _local_links(page):
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {written}")
            elif fragment and target.suffix == ".html" and not html.fromstring(target.read_bytes()).xpath(
                    f'//*[@id="{fragment}"]'):
                broken.append(f"{page.relative_to(site)}: {written} (no such anchor)")
    assert not broken, broken[:20]


def test_no_page_shows_the_kits_bookkeeping_or_another_bindings_rules(site: Path) -> None:
    mine = set(binding_rules("rsio"))
    pages = list(site.rglob("*.html"))  # the site's pages and the run's own report copied into it
    assert len(pages) >= 10 and any(p.name == "index.html" and p.parent.name == "report" for p in pages)
    for page in pages:
        body = _reader_text(page)
        for word in ("xfail", "xpass"):
            assert not re.search(rf"\b{word}\b", body), (str(page.relative_to(site)), word)
        # Python's None leaking into a page: a value that says "None" (a cell, "field=None", "x: None"), not
        # the English word a rule's statement may use ("None of this is an error").
        assert not re.search(r"(^|[=:(|] ?)None\b|\bNone( [|)]|$)", body), str(page.relative_to(site))
        cells = html.fromstring(page.read_bytes()).xpath("//td | //th | //li | //span")
        assert not [c for c in cells if c.text_content().strip() == "None"], str(page.relative_to(site))
        assert set(cited_rules(body)) <= mine, (page.name, set(cited_rules(body)) - mine)


def test_the_target_page_shows_the_bindings_own_wire_statistics(site: Path) -> None:
    (run_dir,) = (site.parent / "reports").iterdir()
    tables = json.loads((run_dir / "report" / "report.json").read_text())["wire"]
    assert tables  # RS-IO's statistics, as the run's report computed them
    (page,) = (site / "server" / "targets").glob("*.html")
    dom = html.fromstring(page.read_bytes())
    shown = {table.get("id"): table for table in dom.xpath('//table[contains(@class, "wire")]')}
    assert set(shown) == {f"wire-{t['id']}" for t in tables if t["rows"]}
    for t in tables:
        rows = shown[f"wire-{t['id']}"].xpath(".//tbody/tr")
        assert len(rows) == len(t["rows"])
