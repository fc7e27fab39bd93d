"""A folder of ../shared ingested once per session (tests/conftest.py's ``shared_run`` and
``shared_trajectories``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metisgraph.graph.settings import Neo4jSettings


class SharedIngest:
    """A folder of ../shared ingested once per session into a project of its own."""

    def __init__(
        self, project: str, folder: Path, items: list[Any], summary: Any, embedder: Any
    ) -> None:
        self.project, self.folder, self.items, self.summary = project, folder, items, summary
        self.embedder = embedder  # the model it was ingested with: ingest again with it


def ingest_once(
    neo4j_settings: Neo4jSettings, embedder: Any, folder: Path, session: str
) -> SharedIngest:
    """Read and ingest ``folder`` with ``embedder`` on a driver and an event loop of its own,
    in a thread: a session fixture is set up outside every test's event loop."""
    import threading

    import anyio

    from metisgraph.graph.indexes import apply_schema
    from metisgraph.graph.store import GraphStore, driver_from_settings
    from metisgraph.ingest.adapters import read_path
    from metisgraph.ingest.pipeline import Ingestor

    project = f"t{session}-shared-{folder.name}"[:60]
    items = list(read_path(folder, project=project))
    done: dict[str, Any] = {}

    async def load() -> None:
        driver = driver_from_settings(neo4j_settings)
        try:
            graph = GraphStore(driver, neo4j_settings.database)
            await apply_schema(graph, embedder.dimension)
            done["summary"] = await Ingestor(graph, embedder).ingest(items)
        finally:
            await driver.close()

    def run() -> None:
        try:
            anyio.run(load)
        except BaseException as error:  # raised again in the fixture below
            done["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in done:
        raise done["error"]
    return SharedIngest(project, folder, items, done["summary"], embedder)
