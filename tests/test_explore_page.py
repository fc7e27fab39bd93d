"""The explorer page (/explore) in a real chromium, against the real app over real HTTP.

Marked ``browser``: skipped without the system's chromium and chromedriver, unless
METISGRAPH_REQUIRE_BROWSER=1 (CI), which makes their absence a failure. With
METISGRAPH_EXPLORE_SCREENSHOTS=<dir> the lineage and graph views are saved there as
explore.png and explore-graph.png (the README's pictures come from docs/).
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
from story import Story, numpy_error_key, story_records

from metisgraph.graph import NodeRef

pytestmark = pytest.mark.browser

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


def _browser_binaries() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium and driver:
        return chromium, driver
    message = "no chromium and chromedriver on PATH (apt-get install chromium chromium-driver)"
    if os.environ.get("METISGRAPH_REQUIRE_BROWSER") == "1":
        pytest.fail(f"METISGRAPH_REQUIRE_BROWSER=1 but {message}")
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
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


@pytest.fixture(scope="module")
def site(browser: Any, app_settings: Any, neo4j_settings: Any, embedder: Any) -> Iterator[Site]:
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
            for records in (story_records(story), _flaky_records(flaky)):
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


# --- the tests -------------------------------------------------------------------------


def test_a_token_is_asked_for_and_picks_the_readable_projects(browser: Any, site: Site) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site, "#/errors", None)
    assert "needs a valid token" in browser.find_element(By.ID, "problems").text
    field = browser.find_element(By.ID, "token")
    field.send_keys(SHOP_TOKEN)
    _after(browser, lambda: browser.find_element(By.CSS_SELECTOR, "#token-form button").click())
    assert browser.find_element(By.ID, "problems").get_attribute("hidden") is not None
    listed = set(_attrs(browser, "#projects input", "value"))
    assert {site.story.shop, site.flaky} <= listed and site.story.billing not in listed
    box = browser.find_element(By.CSS_SELECTOR, f"#projects input[value='{site.flaky}']")
    _after(browser, box.click)
    assert _ids(_attrs(browser, "#errors .error-link", "href")) == [site.locked_id]


ERRORS = """query($p: [String!]!, $order: ErrorOrder!, $first: Int!, $after: String) {
  errors(projects: $p, orderBy: $order, first: $first, after: $after) {
    totalCount items { id } pageInfo { endCursor hasNextPage } } }"""


def test_the_errors_list_follows_the_api_in_each_order_and_page(browser: Any, site: Site) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    projects = [site.story.shop, site.story.billing]
    _open(browser, site, f"#/errors?p={','.join(projects)}&n=2", ALL_TOKEN)

    def api_page(order: str, after: str | None) -> dict[str, Any]:
        page: dict[str, Any] = site.ask(
            ALL_TOKEN, ERRORS, p=projects, order=order, first=2, after=after
        )["errors"]
        return page

    first = api_page("COUNT", None)
    assert first["totalCount"] > 2  # the story holds enough errors to page
    assert _ids(_attrs(browser, "#errors .error-link", "href")) == [i["id"] for i in first["items"]]
    assert browser.find_element(By.CSS_SELECTOR, ".paging").text.startswith(
        f"{first['totalCount']} errors"
    )
    _after(browser, browser.find_element(By.ID, "next-page").click)
    second = api_page("COUNT", first["pageInfo"]["endCursor"])
    shown = _ids(_attrs(browser, "#errors .error-link", "href"))
    assert shown == [i["id"] for i in second["items"]]
    assert not set(shown) & {i["id"] for i in first["items"]}

    _after(browser, lambda: Select(browser.find_element(By.ID, "order")).select_by_value("RECENT"))
    recent = api_page("RECENT", None)
    shown = _ids(_attrs(browser, "#errors .error-link", "href"))
    assert shown == [i["id"] for i in recent["items"]]
    assert "order=RECENT" in browser.current_url and "after=" not in browser.current_url


def test_a_lineage_of_100_sightings_is_drawn_whole(browser: Any, site: Site) -> None:
    # How long it takes is measured by the benchmark (bench/explore_bench.py), not here.
    _open(browser, site, f"#/error/{site.locked_id}", SHOP_TOKEN)
    assert _state(browser, "view") == "error"
    assert len(_texts(browser, "#timeline .sighting")) == 100
    assert len(_texts(browser, "#sightings tbody tr")) == 100
    assert browser.find_elements("css selector", "#more-sightings") == []
    assert "100 sightings" in _texts(browser, "#lineage-summary")[0]


def test_a_lineage_across_projects_shows_fixes_and_the_regression(browser: Any, site: Site) -> None:
    error_id = NodeRef("Error", site.story.shop, numpy_error_key()).id
    _open(browser, site, f"#/error/{error_id}", ALL_TOKEN)
    lanes = _texts(browser, "#timeline .lane-name")
    assert lanes == [site.story.shop, site.story.billing]
    assert len(_texts(browser, "#timeline .sighting")) == 4
    assert _texts(browser, "#timeline .fix") and _texts(browser, "#timeline .recurrence")
    regression = " ".join(_texts(browser, "#recurrences li"))
    assert "numpy 1.24.2 → 1.26.4" in regression and "legacy-stats ∅ → 0.3.1" in regression
    # Each fix with its evidence (rule, file) and confidence; attempts with what they did.
    fixes = " ".join(_texts(browser, "#fixes li"))
    assert "frame: edits shop/report.py" in fixes and "confidence 0.80" in fixes
    assert "module: installs numpy" in " ".join(_texts(browser, "#attempts li"))
    _screenshot(browser, "explore.png")
    # With the shop token, billing is not read: its sightings are not drawn.
    _open(browser, site, f"#/error/{error_id}", SHOP_TOKEN)
    assert _texts(browser, "#timeline .lane-name") == [site.story.shop]


HOOD = """query($id: ID!) { neighbourhood(id: $id, depth: 1, limit: 200) { nodes { id kind } } }"""


def test_a_neighbourhood_is_drawn_expanded_and_linked_by_id(browser: Any, site: Site) -> None:
    from selenium.webdriver.common.by import By

    root = NodeRef("Error", site.story.shop, numpy_error_key()).id
    _open(browser, site, f"#/node/{root}", SHOP_TOKEN)
    around = site.ask(SHOP_TOKEN, HOOD, id=root)["neighbourhood"]["nodes"]
    assert set(_attrs(browser, "#graph .node", "data-id")) == {n["id"] for n in around}
    assert _attrs(browser, "#graph .node.root", "data-id") == [root]

    step = next(n["id"] for n in around if n["kind"] == "Episode")
    browser.find_element(By.CSS_SELECTOR, f"#graph .node[data-id='{step}'] circle").click()
    browser.find_element(By.ID, "expand").click()
    more = site.ask(SHOP_TOKEN, HOOD, id=step)["neighbourhood"]["nodes"]
    expected = {n["id"] for n in around} | {n["id"] for n in more}
    assert len(expected) > len(around)
    _wait(browser, lambda: set(_attrs(browser, "#graph .node", "data-id")) == expected)
    _screenshot(browser, "explore-graph.png")

    _after(browser, browser.find_element(By.ID, "open-centre").click)
    assert _attrs(browser, "#graph .node.root", "data-id") == [step]
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith("Episode:")


def test_another_tenant_reads_as_not_found_and_its_names_are_refused(
    browser: Any, site: Site
) -> None:
    from selenium.webdriver.common.by import By

    theirs = NodeRef("Error", site.story.billing, numpy_error_key()).id
    unknown = NodeRef("Error", site.story.shop, "0" * 16).id
    seen = []
    for error_id in (theirs, unknown):
        for view in ("error", "node"):
            _open(browser, site, f"#/{view}/{error_id}", SHOP_TOKEN)
            seen.append(browser.find_element(By.CSS_SELECTOR, ".not-found").text)
    assert seen[0] == seen[2] and seen[1] == seen[3] and "Not found" in seen[0]
    _open(browser, site, f"#/errors?p={site.story.billing}", SHOP_TOKEN)
    message = browser.find_element(By.ID, "problems").text
    assert f"not allowed to read project(s): {site.story.billing}" in message
    _open(browser, site, "#/errors", "not-a-token-at-all")
    assert "needs a valid token" in browser.find_element(By.ID, "problems").text
