"""The explorer's screenshots in docs/, taken on the shared trajectories (../shared, never copied
here) ingested into two projects: search, trends, compare, graph and lineage.

Every run's tasks are dealt alternately (in task id order) into two projects, as two teams
would share the same kinds of work; each task goes with its episodes, snippets and verdicts.
(One run a project shares no error at all: each run is another repository and agent.) Ingest
is idempotent: a second run writes nothing new. The views shown are chosen from the data, not
by hand: the error the two projects share most (``Query.compare``) is searched for by its
sample, its weekly trend drawn, compared, its neighbourhood and its lineage opened. It uses
the test Neo4j (METISGRAPH_TEST_NEO4J_HOME / _PORT, started or reused) and the system's
headless chromium, and prints what each picture shows.

    cpu test python bench/explore_screenshots.py --out docs
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
TOKEN = secrets.token_hex(16)  # this run's own: the app lives as long as the script
PROJECTS = ("trajectories-a", "trajectories-b")
RUNS = ("mini-swe-agent-v1_gemini-3-pro_verified", "swe-agent_traj", "openhands_output_jsonl")
Q_COMPARE = """query($p: [String!]!) { compare(projects: $p, first: 5) { sharedCount
  shared { key template projects sides { id project sightings fixes open } } } }"""
Q_SAMPLE = "query($id: ID!) { error(id: $id) { sample template } }"
Q_TOP = """query($p: [String!]!) { errors(projects: $p, first: 1) { items { id key template } } }"""


def _dealt(folder: Path) -> dict[str, list[Any]]:
    """The run's records, its tasks dealt alternately (in the order read) into two projects."""
    from metisgraph.ingest.adapters import read_path

    out: dict[str, list[Any]] = {}
    for n, project in enumerate(PROJECTS):
        items = [x for x in read_path(folder, project=project) if hasattr(x, "record")]
        tasks = [x.record.id for x in items if x.record.record_type == "task"]
        mine = {t for i, t in enumerate(tasks) if i % len(PROJECTS) == n}
        episodes = {
            x.record.id
            for x in items
            if x.record.record_type == "episode" and x.record.task_id in mine
        }
        out[project] = [x for x in items if _belongs(x.record, mine, episodes)]
    return out


def _belongs(record: Any, tasks: set[str], episodes: set[str]) -> bool:
    kind = record.record_type
    if kind == "task":
        return record.id in tasks
    if kind == "episode":
        return record.task_id in tasks
    if kind == "snippet" and record.episode_id:
        return record.episode_id in episodes
    if kind == "verdict":
        return any(record.instance in t for t in tasks)
    return True


def _ingest(settings: Any, embedder: Any, shared: Path) -> dict[str, Any]:
    from metisgraph.graph import apply_schema
    from metisgraph.graph.store import GraphStore, driver_from_settings
    from metisgraph.ingest.pipeline.ingestor import Ingestor

    counts: dict[str, Any] = {}

    async def load() -> None:
        driver = driver_from_settings(settings.neo4j)
        try:
            store = GraphStore(driver, settings.neo4j.database)
            await apply_schema(store, embedder.dimension)
            ingestor = Ingestor(store, embedder)
            for run in RUNS:
                for project, items in _dealt(shared / "trajectories" / run).items():
                    summary = await ingestor.ingest(items)
                    counts[f"{project}/{run}"] = {"records": len(items),
                                                  "refused": summary.refused}  # fmt: skip
        finally:
            await driver.close()

    anyio.run(load)
    return counts


def _ask(url: str, query: str, **variables: Any) -> dict[str, Any]:
    response = httpx.post(f"{url}/graphql", json={"query": query, "variables": variables},
                          headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)  # fmt: skip
    body: dict[str, Any] = response.json()
    assert "errors" not in body, body
    return body["data"]


def _views(url: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The five views' links, chosen from the data: the error the projects share most."""
    names = list(PROJECTS)
    compared = _ask(url, Q_COMPARE, p=names)["compare"]
    p = ",".join(names)
    if compared["shared"]:
        shared = compared["shared"][0]
        side = max(shared["sides"], key=lambda s: s["sightings"])
        error, key = side["id"], shared["key"]
    else:  # nothing shared: the first project's most sighted error stands in
        top = _ask(url, Q_TOP, p=names[:1])["errors"]["items"][0]
        error, key = top["id"], top["key"]
    named = _ask(url, Q_SAMPLE, id=error)["error"]
    text = named["sample"] or named["template"] or key
    views = {
        "search": f"#/search?q={quote(text)}&p={p}",
        "trends": f"#/trends?p={p}&error={quote(error)}",
        "compare": f"#/compare?p={p}&sel={key}",
        "graph": f"#/node/{quote(error)}",
        "lineage": f"#/error/{quote(error)}",
    }
    return views, {"shared_count": compared["sharedCount"], "error": named["template"] or key}


def _browser() -> Any:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or ""
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--no-first-run", "--window-size=1280,1000"):  # fmt: skip
        options.add_argument(argument)
    return webdriver.Chrome(
        options=options, service=webdriver.ChromeService(shutil.which("chromedriver") or "")
    )


def _shoot(browser: Any, url: str, hash_: str, path: Path) -> str:
    browser.set_window_size(1280, 1000)
    browser.get("about:blank")
    browser.get(f"{url}/explore{hash_}")
    deadline = time.monotonic() + 120
    while browser.execute_script("return document.documentElement.dataset.renders") is None:
        assert time.monotonic() < deadline, hash_
        time.sleep(0.05)
    height, chrome = browser.execute_script(
        "return [document.documentElement.scrollHeight, window.outerHeight - window.innerHeight]"
    )
    browser.set_window_size(1280, max(1000, min(int(height) + int(chrome) + 8, 2400)))
    time.sleep(0.5)  # the resized page settles (the graph refits)
    browser.get_screenshot_as_file(str(path))
    problems = browser.execute_script("return document.getElementById('problems').innerText")
    return str(problems or "").strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    parser.add_argument("--shared", type=Path, default=Path(os.environ.get(
        "METISGRAPH_SHARED_DIR", ROOT.parent / "shared")))  # fmt: skip
    args = parser.parse_args()

    import uvicorn
    from pydantic import SecretStr

    from metisgraph.api.http.app import create_app
    from metisgraph.api.settings import ApiSettings, Settings
    from metisgraph.graph.embedded import EmbeddedNeo4j
    from metisgraph.graph.settings import EmbeddedNeo4jSettings, Neo4jSettings
    from metisgraph.ingest.embeddings import Embedder, EmbeddingSettings

    home = Path(os.environ.get("METISGRAPH_TEST_NEO4J_HOME", ROOT / ".metisgraph" / "test-neo4j"))
    port = int(os.environ.get("METISGRAPH_TEST_NEO4J_PORT", "7688"))
    neo4j = EmbeddedNeo4j(EmbeddedNeo4jSettings(home=home, port=port, heap="512m",
                                                 heap_max="1g", pagecache="256m"))  # fmt: skip
    started = neo4j.start()
    settings = Settings(
        api=ApiSettings(host="127.0.0.1", dev=False, warm_up_reads_s=0),
        neo4j=Neo4jSettings(uri=neo4j.uri, username="neo4j", password=neo4j.password()),
        embedded=EmbeddedNeo4jSettings(),
        embedding=EmbeddingSettings(),
    )
    settings.api.api_tokens = SecretStr(f"{TOKEN}={','.join(PROJECTS)}")
    embedder = Embedder()
    embedder.load()
    out: dict[str, Any] = {"ingested": _ingest(settings, embedder, args.shared)}
    app = create_app(settings, embedder=embedder, wait_ready=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    browser = _browser()
    try:
        views, out["shown"] = _views(url)
        browser.get(f"{url}/explore")
        browser.execute_script("sessionStorage.setItem('metisgraph.token', arguments[0])", TOKEN)
        args.out.mkdir(parents=True, exist_ok=True)
        for name, hash_ in views.items():
            path = args.out / f"explore-{name}.png"
            problems = _shoot(browser, url, hash_, path)
            assert not problems, f"{name}: {problems}"
            out[name] = {"link": hash_[:160], "file": str(path)}
    finally:
        browser.quit()
        server.should_exit = True
        thread.join(30)
        if started:
            neo4j.stop()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
