"""The explorer page in the system's chromium: how long a lineage takes to be drawn.

`metisgraph serve` runs against the corpus's Neo4j (no tokens: on loopback every project
is readable); headless chromium, driven by selenium through the system's chromedriver
(nothing is downloaded), opens ``/explore#/error/<id>`` for each lineage of the sample,
after one load that is not measured (the browser's own start). The figure is the page's own
`renderedMs`: from the navigation's start to the lineage drawn (timeline and table), as
`performance.now()` reads it. The issue's target: a lineage of 100 sightings within 2 s.
Skipped, with the reason, where chromium or chromedriver is not on PATH.
"""

from __future__ import annotations

import shutil
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.corpus import Corpus
from bench.database import BenchNeo4j
from bench.recall_bench import metisgraph_server, percentile
from metisgraph.graph import NodeRef

__all__ = ["ExploreFigures", "bench_explore", "browser_missing"]

_TIMEOUT_S = 60


@dataclass
class ExploreFigures:
    size: int
    skipped: str | None = None
    drawn: dict[str, Any] = field(default_factory=dict)  # renderedMs over the sample
    sightings: dict[str, Any] = field(default_factory=dict)  # marks drawn per lineage
    lineages: list[dict[str, Any]] = field(default_factory=list)  # each: sightings, marks, ms
    full_page: dict[str, Any] = field(default_factory=dict)  # those that drew 100 sightings


def browser_missing() -> str | None:
    """Why the page cannot be measured here, or None."""
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        return "no chromium on PATH (apt-get install chromium chromium-driver)"
    if not shutil.which("chromedriver"):
        return "no chromedriver on PATH (apt-get install chromium-driver)"
    return None


@contextmanager
def _chromium() -> Iterator[Any]:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--no-first-run", "--window-size=1280,1000"):  # fmt: skip
        options.add_argument(argument)
    service = webdriver.ChromeService(shutil.which("chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


def _state(browser: Any, name: str) -> Any:
    return browser.execute_script(f"return document.documentElement.dataset.{name}")


def _draw(browser: Any, url: str) -> tuple[int, int]:
    """Open a lineage in a fresh page: (ms from navigation start to drawn, marks drawn)."""
    browser.get("about:blank")
    browser.get(url)
    deadline = time.monotonic() + _TIMEOUT_S
    while _state(browser, "view") != "error":
        if time.monotonic() > deadline:
            raise RuntimeError(f"the lineage at {url} was not drawn in {_TIMEOUT_S} s")
        time.sleep(0.02)
    marks = browser.execute_script("return document.querySelectorAll('#timeline .sighting').length")
    return int(_state(browser, "renderedMs")), int(marks)


def bench_explore(
    neo4j: BenchNeo4j, corpus: Corpus, sample: list[dict[str, Any]], port: int, logs: Path
) -> ExploreFigures:
    """Each lineage of ``sample`` (rows with a ``key``) drawn by the page, one at a time."""
    figures = ExploreFigures(size=corpus.size)
    figures.skipped = browser_missing()
    if figures.skipped or not sample:
        figures.skipped = figures.skipped or "no lineage to draw"
        return figures
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / "metisgraph-explore.log"
    with metisgraph_server(neo4j, port, log) as graphql, _chromium() as browser:
        page = graphql.rsplit("/graphql", 1)[0] + "/explore#/error/"
        urls = [page + NodeRef("Error", corpus.project, row["key"]).id for row in sample]
        _draw(browser, urls[0])  # the browser's first start is not the page
        drawn, marks = [], []
        for url, row in zip(urls, sample, strict=True):
            ms, count = _draw(browser, url)
            drawn.append(ms)
            marks.append(count)
            figures.lineages.append({"sightings": row.get("sightings"), "marks": count, "ms": ms})
    figures.drawn = {
        "n": len(drawn),
        "p50_ms": statistics.median(drawn),
        "p95_ms": percentile(drawn, 0.95),
        "max_ms": max(drawn),
    }
    figures.sightings = {"median": statistics.median(marks), "max": max(marks)}
    full = [d for d, m in zip(drawn, marks, strict=True) if m >= 100]
    if full:  # the target's case: a page of 100 sightings
        figures.full_page = {"n": len(full), "p50_ms": statistics.median(full), "max_ms": max(full)}
    return figures
