"""The explorer's browser tests' site: seeded projects served by the real app over real HTTP,
a headless system chromium, and the helpers that drive the page (test_explore_*.py).

Skipped without the system's chromium and chromedriver, unless METISGRAPH_REQUIRE_BROWSER=1
(CI), which makes their absence a failure. With METISGRAPH_EXPLORE_SCREENSHOTS=<dir> the
views are saved there (the README's pictures come from docs/).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from embedders import HashEmbedder
from story import Story, story_records

from metisgraph.graph import NodeRef

LOCKED = (
    "Traceback (most recent call last):\n"
    '  File "/srv/etl/etl/load.py", line 40, in load_rows\n'
    "    conn.execute(sql)\n"
    "sqlite3.OperationalError: database is locked"
)
SHOP_TOKEN = "shop-token-0123456789"
ALL_TOKEN = "all-token-0123456789"


@dataclass(frozen=True)
class Site:
    url: str
    story: Story
    flaky: str  # a project whose one error has exactly 100 sightings
    locked_id: str  # that error's global id

    def ask(self, token: str, query: str, **variables: Any) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"}
        body = {"query": query, "variables": variables}
        response = httpx.post(f"{self.url}/graphql", json=body, headers=headers, timeout=60)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        assert "errors" not in answer, answer
        return answer["data"]


def _flaky_records(project: str) -> list[Any]:
    """25 tasks of 4 failing steps each (100 sightings); every fifth task ends fixed."""
    from metisgraph.ingest.adapters.base import SourceRef, validate_record

    start = datetime(2026, 2, 1, 8, tzinfo=UTC)
    raws: list[dict[str, Any]] = []
    for t in range(25):
        fixed = t % 5 == 4
        began = start + timedelta(days=2 * t)
        raws.append({"record_type": "task", "project": project, "id": f"etl-{t}",
                     "goal": f"Nightly load {t} stops on a locked database",
                     "status": "resolved" if fixed else "abandoned",
                     "outcome": "success" if fixed else "failure",
                     "started_at": began.isoformat()})  # fmt: skip
        for step in range(5 if fixed else 4):
            failing = step < 4
            raws.append({
                "record_type": "episode", "project": project, "id": f"etl-{t}-s{step}",
                "task_id": f"etl-{t}", "step": step,
                "created_at": (began + timedelta(minutes=10 * step)).isoformat(),
                "summary": f"Load attempt {step} of run {t}" if failing else "Retried, waiting",
                "action": {"type": "command", "command": "python -m etl.load"},
                "outcome": "failure" if failing else "success", "source": "executed",
                "environment": {"os": "linux", "runtime": "python", "runtime_version": "3.11.4",
                                "packages": {"sqlalchemy": "2.0.2" if t < 12 else "2.0.30"}},
                **({"error": LOCKED} if failing else {}),
            })  # fmt: skip
    return [validate_record(raw, SourceRef("flaky", n)) for n, raw in enumerate(raws, start=1)]


# The trend fixture: one error sighted at these times (UTC), worked out by hand per ISO week
# (weeks start Monday 00:00): 2026-03-02 is a Monday.
TIMEOUT = (
    "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='rates.internal', port=443): "
    "Read timed out. (read timeout=10)"
)
TREND_SIGHTINGS = {
    "shop": ["2026-03-02T09:00", "2026-03-02T17:30", "2026-03-05T11:00",
             "2026-03-16T08:00", "2026-03-18T08:00", "2026-03-22T23:50"],
    "billing": ["2026-03-08T23:30", "2026-03-09T00:10", "2026-03-12T14:00"],
}  # fmt: skip
TREND_WEEKS = {  # by hand: (week's Monday) -> sightings, per project
    "shop": {"2026-03-02": 3, "2026-03-09": 0, "2026-03-16": 3},
    "billing": {"2026-03-02": 1, "2026-03-09": 2, "2026-03-16": 0},
}


def _trend_records(projects: dict[str, str]) -> list[Any]:
    """One task per sighting of TIMEOUT, in the story's two projects."""
    from metisgraph.ingest.adapters.base import SourceRef, validate_record

    raws: list[dict[str, Any]] = []
    for role, times in TREND_SIGHTINGS.items():
        project = projects[role]
        for n, at in enumerate(times):
            task = f"rates-{role}-{n}"
            raws.append({"record_type": "task", "project": project, "id": task,
                         "goal": "Refresh the exchange rates", "status": "abandoned",
                         "outcome": "failure", "started_at": f"{at}:00+00:00"})  # fmt: skip
            raws.append({
                "record_type": "episode", "project": project, "id": f"{task}-s0", "task_id": task,
                "step": 0, "created_at": f"{at}:00+00:00",
                "summary": "Fetched the rates; the rates service timed out",
                "action": {"type": "command", "command": "python -m rates.refresh"},
                "outcome": "failure", "source": "executed", "error": TIMEOUT,
            })  # fmt: skip
    return [validate_record(raw, SourceRef("trend", n)) for n, raw in enumerate(raws, start=1)]


def _browser_binaries() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    message = "no chromium and chromedriver on PATH (apt-get install chromium chromium-driver)"
    if os.environ.get("METISGRAPH_REQUIRE_BROWSER") == "1":
        pytest.fail(f"METISGRAPH_REQUIRE_BROWSER=1 but {message}")
    pytest.skip(message)


@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Any]:
    chromium, chromedriver = _browser_binaries()  # first: skip before anything is seeded
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--no-first-run", "--window-size=1280,1000"):  # fmt: skip
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(chromedriver))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module", name="site")
def site_fixture(
    browser: Any, app_settings: Any, neo4j_settings: Any, embedder: Any
) -> Iterator[Site]:
    import uvicorn
    from pydantic import SecretStr

    from metisgraph.api.http.app import create_app
    from metisgraph.graph import apply_schema
    from metisgraph.graph.store import GraphStore, driver_from_settings
    from metisgraph.ingest.errors import extract_errors
    from metisgraph.ingest.pipeline.ingestor import Ingestor

    name = f"xp{uuid.uuid4().hex[:8]}"
    story, flaky = Story(shop=f"{name}-shop", billing=f"{name}-billing"), f"{name}-flaky"
    # The page does not care about meaning: its records are embedded by a stand-in. The app
    # is served with the store's own model (the one its stamp names, or it would not start).
    stand_in = HashEmbedder()

    async def load() -> None:
        driver = driver_from_settings(neo4j_settings)
        try:
            store = GraphStore(driver, neo4j_settings.database)
            await apply_schema(store, stand_in.dimension)
            ingestor = Ingestor(store, stand_in)
            roles = {"shop": story.shop, "billing": story.billing}
            for records in (story_records(story), _flaky_records(flaky), _trend_records(roles)):
                summary = await ingestor.ingest(records)
                assert summary.refused == 0, summary.refusals
        finally:
            await driver.close()

    anyio.run(load)
    settings = app_settings.model_copy(deep=True)
    settings.api.api_tokens = SecretStr(
        f"{SHOP_TOKEN}={story.shop},{flaky};{ALL_TOKEN}={story.shop},{story.billing},{flaky}"
    )
    app = create_app(settings, embedder=embedder, wait_ready=True)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", ws="none", access_log=False, lifespan="on")
    )
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    locked = NodeRef("Error", flaky, extract_errors(LOCKED)[0].key).id
    try:
        yield Site(f"http://127.0.0.1:{listener.getsockname()[1]}", story, flaky, locked)
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()


# --- driving the page ------------------------------------------------------------------


def _state(browser: Any, name: str) -> Any:
    return browser.execute_script(f"return document.documentElement.dataset.{name}")


def _wait(browser: Any, done: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "the page did not settle"
        time.sleep(0.02)


def _open(browser: Any, site: Site, hash_: str, token: str | None) -> None:
    """A fresh load of /explore<hash_> with ``token`` entered (None: no token)."""
    browser.get(f"{site.url}/explore")
    script = "sessionStorage.clear();" + (
        f"sessionStorage.setItem('metisgraph.token', {json.dumps(token)});" if token else ""
    )
    browser.execute_script(script)
    browser.get("about:blank")
    browser.get(f"{site.url}/explore{hash_}")
    _wait(browser, lambda: _state(browser, "renders") is not None)


def _after(browser: Any, action: Callable[[], None]) -> None:
    """Run an action that changes the view and wait for the page to render again."""
    before = _state(browser, "renders")
    action()
    _wait(browser, lambda: _state(browser, "renders") != before)


def _texts(browser: Any, selector: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in browser.find_elements(By.CSS_SELECTOR, selector)]


# Read in one script, as WebElement.get_attribute would (the property when the element has
# one: href, value; else the attribute): element by element, a redraw between finding the
# elements and reading them made the test fail with a stale element under load.
_READ_ATTRS = """
const name = arguments[1];
return Array.from(document.querySelectorAll(arguments[0]),
                  e => (name in e ? String(e[name]) : e.getAttribute(name)));
"""


def _attrs(browser: Any, selector: str, attr: str) -> list[str]:
    return list(browser.execute_script(_READ_ATTRS, selector, attr))


def _ids(hrefs: list[str]) -> list[str]:
    from urllib.parse import unquote

    return [unquote(h.split("#/error/", 1)[1]) for h in hrefs]


def _screenshot(browser: Any, name: str) -> None:
    folder = os.environ.get("METISGRAPH_EXPLORE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.get_screenshot_as_file(str(Path(folder) / name))
