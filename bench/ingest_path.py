"""The files one ingested episode passes through: files entered, and returns to a file left.

    python bench/ingest_path.py            # a table; --json for one object; --files lists them

Runs `Ingestor.ingest` on one native episode (a command, a Python traceback, a stated
environment, a `pip freeze`, a code snippet) into a fresh project of the test Neo4j
(METISGRAPH_TEST_NEO4J_PORT, started if needed and stopped again) with the real model,
and follows every call into a metisgraph module, in every thread. Per thread, the files
called into form a path (a call that stays in its file is no step); a step into a file the
path has already left is a return. The per-thread figures are summed. Call edges are the
distinct (calling file, called file) pairs, which loops do not inflate. Reading a module
(import time) and third-party code are not counted; the model is loaded before the trace.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import threading
import uuid
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from metisgraph.graph.embedded import EmbeddedNeo4j  # noqa: E402
from metisgraph.graph.indexes import apply_schema  # noqa: E402
from metisgraph.graph.settings import EmbeddedNeo4jSettings  # noqa: E402
from metisgraph.graph.store import GraphStore, open_driver  # noqa: E402
from metisgraph.ingest.adapters import read_path  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402
from metisgraph.ingest.pipeline import Ingestor  # noqa: E402

TRACEBACK = """Traceback (most recent call last):
  File "/home/ana/svc/app/worker.py", line 88, in run
    rows = fetch(conn, batch_id=4512)
  File "/home/ana/svc/app/db.py", line 31, in fetch
    return conn.execute(QUERY, params).fetchall()
psycopg2.OperationalError: could not connect to server: Connection refused
\tIs the server running on host "db-7.internal" (10.2.3.4) and accepting TCP/IP
\tconnections on port 5432?
"""

FREEZE = "psycopg2-binary==2.9.9\nSQLAlchemy==2.0.31\nrequests==2.32.3\n"

CODE = '''def connect_with_retry(dsn: str, attempts: int = 5) -> "Connection":
    """Connect to Postgres, waiting between attempts."""
    import time
    import psycopg2

    for attempt in range(attempts):
        try:
            return psycopg2.connect(dsn, connect_timeout=3)
        except psycopg2.OperationalError:
            time.sleep(2 ** attempt)
    raise RuntimeError("database unreachable")
'''


def record(project: str) -> dict[str, Any]:
    """One native episode touching errors, tools, environment, tags and code."""
    return {
        "record_type": "episode",
        "project": project,
        "id": "db-retry:0",
        "task_id": "db-retry",
        "step": 0,
        "summary": "The worker could not reach Postgres at start-up; a retry with backoff fixed it",
        "reasoning": "The database container starts after the worker; wait instead of failing.",
        "action": {
            "type": "command",
            "command": "PGPASSWORD=s3cret psql -h db-7.internal -U svc -c 'select 1' | head -3",
        },
        "observation": "pip freeze\n" + FREEZE + "Python 3.11.9 on Linux x86_64",
        "error": TRACEBACK,
        "outcome": "success",
        "tags": ["component:worker", "problem:db-startup"],
        "source": "executed",
        "created_at": "2026-10-02T08:00:00Z",
        "environment": {"os": "linux", "runtime": "python", "runtime_version": "3.11.9"},
        "tools": ["psql"],
        "snippets": [{"code": CODE, "language": "python", "relation": "GENERATED"}],
    }


class FilePath:
    """The metisgraph files called into, a path per thread."""

    def __init__(self, package_root: Path) -> None:
        self._root = str(package_root)
        self.paths: dict[int, list[str]] = defaultdict(list)
        self.edges: set[tuple[str, str]] = set()

    def profile(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        filename = frame.f_code.co_filename
        if not filename.startswith(self._root) or frame.f_code.co_name == "<module>":
            return
        path = self.paths[threading.get_ident()]
        name = filename[len(self._root) + 1 :]
        if not path or path[-1] != name:
            path.append(name)
        caller = self._caller(frame)
        if caller is not None and caller != name:
            self.edges.add((caller, name))

    def _caller(self, frame: FrameType) -> str | None:
        """The nearest metisgraph file up the stack (through asyncio, anyio and the like)."""
        back = frame.f_back
        while back is not None and not back.f_code.co_filename.startswith(self._root):
            back = back.f_back
        return None if back is None else back.f_code.co_filename[len(self._root) + 1 :]

    def measures(self) -> dict[str, Any]:
        entered: set[str] = set()
        steps = returns = 0
        for path in self.paths.values():
            entered.update(path)
            steps += len(path)
            left: set[str] = set()
            for before, now in itertools.pairwise(path):
                left.add(before)
                returns += now in left
        return {
            "files_entered": len(entered),
            "stops": steps,
            "returns_to_a_file_left": returns,
            "call_edges": len(self.edges),
            "threads": len(self.paths),
            "files": sorted(entered),
            "paths": [list(p) for p in self.paths.values()],
        }


async def _ingest(store: GraphStore, embedder: Embedder, source: Path, tracer: FilePath) -> None:
    items = list(read_path(source, format="native"))
    threading.setprofile(tracer.profile)
    sys.setprofile(tracer.profile)
    try:
        summary = await Ingestor(store, embedder).ingest(items)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert summary.written == 1 and summary.refused == 0, summary.as_dict()


async def measure(home: Path, port: int, source: Path) -> dict[str, Any]:
    import metisgraph

    package_root = Path(next(iter(metisgraph.__path__)))
    embedder = Embedder()
    embedder.load()
    server = EmbeddedNeo4j(
        EmbeddedNeo4jSettings(home=home, port=port, heap="512m", heap_max="1g", pagecache="256m")
    )
    started = server.start()
    try:
        driver = open_driver(server.uri, "neo4j", server.password())
        try:
            store = GraphStore(driver)
            await apply_schema(store, embedder.dimension)
            tracer = FilePath(package_root)
            await _ingest(store, embedder, source, tracer)
            project = json.loads(source.read_text())["project"]
            await store.run("forget_project", project=project)
            return tracer.measures()
        finally:
            await driver.close()
    finally:
        if started:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--files", action="store_true", help="list the paths, file by file")
    options = parser.parse_args()
    home = Path(
        os.environ.get("METISGRAPH_TEST_NEO4J_HOME", str(ROOT / ".metisgraph" / "test-neo4j"))
    )
    port = int(os.environ.get("METISGRAPH_TEST_NEO4J_PORT", "7688"))
    source = ROOT / ".metisgraph" / f"ingest-path-{uuid.uuid4().hex[:8]}.jsonl"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(json.dumps(record(f"ingest-path-{uuid.uuid4().hex[:8]}")))
    try:
        result = asyncio.run(measure(home, port, source))
    finally:
        source.unlink()
    if options.json:
        shown = result if options.files else {k: v for k, v in result.items() if k != "paths"}
        print(json.dumps(shown))
        return
    for key in ("files_entered", "stops", "returns_to_a_file_left", "call_edges", "threads"):
        print(f"{key:24} {result[key]}")
    if options.files:
        for n, path in enumerate(result["paths"]):
            print(f"thread {n}: " + " → ".join(path))


if __name__ == "__main__":
    main()
