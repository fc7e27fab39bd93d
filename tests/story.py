"""The authored lineage story (tests/fixtures/lineage), loaded under a test's own projects."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters.base import SourceRef, validate_record
from metisgraph.ingest.errors import extract_errors

STORY = Path(__file__).resolve().parent / "fixtures" / "lineage" / "regression.jsonl"


@dataclass(frozen=True)
class Story:
    shop: str
    billing: str

    @property
    def projects(self) -> list[str]:
        return [self.shop, self.billing]


def story_records(story: Story) -> list[Any]:
    """The fixture's records with the story's project names in place of shop and billing."""
    names = {"shop": story.shop, "billing": story.billing}
    items = []
    for n, line in enumerate(STORY.read_text(encoding="utf-8").splitlines(), start=1):
        raw = json.loads(line)
        raw["project"] = names[raw["project"]]
        items.append(validate_record(raw, SourceRef(str(STORY), n)))
    return items


def ingest_story(neo4j_settings: Any, embedder: Any, story: Story) -> None:
    """Write the story into the test Neo4j (the schema applied first), on a driver and an
    event loop of its own, in a thread: for module fixtures, outside any test's loop."""
    import threading

    import anyio

    from metisgraph.graph.indexes import apply_schema
    from metisgraph.graph.store import GraphStore, driver_from_settings
    from metisgraph.ingest.pipeline.ingestor import Ingestor

    async def load() -> None:
        driver = driver_from_settings(neo4j_settings)
        try:
            store = GraphStore(driver, neo4j_settings.database)
            await apply_schema(store, embedder.dimension)
            summary = await Ingestor(store, embedder).ingest(story_records(story))
            assert summary.refused == 0, summary.refusals
        finally:
            await driver.close()

    failed: list[BaseException] = []

    def run() -> None:
        try:
            anyio.run(load)
        except BaseException as error:  # raised again in the fixture's thread
            failed.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


def module_story(neo4j_settings: Any, embedder: Any, prefix: str) -> Story:
    """The story ingested once under two new projects, for a module's tests that only read
    it (a test that writes to its projects loads one of its own: ``load_story``)."""
    import uuid

    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    story = Story(shop=f"{name}-shop", billing=f"{name}-billing")
    ingest_story(neo4j_settings, embedder, story)
    return story


def numpy_error_key() -> str:
    """The key of the story's main error (AttributeError np.float in build_totals)."""
    for line in STORY.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        if "no attribute 'float'" in (raw.get("error") or ""):
            return extract_errors(raw["error"])[0].key
    raise AssertionError("the story has no numpy error")


async def load_story(store: Any, embedder: Any, project: str) -> Story:
    """Ingest the story into two projects named after ``project``; returns their names."""
    from metisgraph.ingest.pipeline.ingestor import Ingestor

    story = Story(shop=f"{project}-shop", billing=f"{project}-billing")
    summary = await Ingestor(store, embedder).ingest(story_records(story))
    assert summary.refused == 0, summary.refusals
    return story
