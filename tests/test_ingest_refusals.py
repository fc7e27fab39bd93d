"""One record Neo4j will not store is refused alone; the rest of its batch is written.

Found by the fuzzing harness (tests/fuzzing.py): a package name, a snippet language or a
program name over Neo4j's index key limit (~8 KB) failed the whole batch's transaction,
and the ingest stopped there. A stand-in embedder: meaning is irrelevant here.
"""

from __future__ import annotations

from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.ingest.adapters import Parsed, Refused, validate_record
from metisgraph.ingest.adapters.base import SourceRef
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.records import EpisodeRecord

pytestmark = pytest.mark.anyio


def _episode(project: str, n: int, **extra: Any) -> Parsed:
    record = EpisodeRecord(project=project, id=f"ep-{n}", summary=f"step {n} of the job", **extra)
    return Parsed(record, SourceRef("batch.jsonl", n))


async def _episode_ids(store: Any, project: str) -> set[str]:
    rows = await store.run_text(
        "MATCH (e:Episode {project: $p}) RETURN e.id AS id", {"p": project}, read=True
    )
    return {r["id"] for r in rows}


async def test_the_record_at_fault_is_refused_and_the_rest_written(
    store: Any, project: str
) -> None:
    # Valid input whose derived Package node (the module imported) no index can hold.
    code = "import " + "x" * 9000 + "\nprint(1)\n"
    items = [_episode(project, n) for n in range(1, 12)]
    items[6] = _episode(project, 7, snippets=[{"code": code, "language": "python"}])
    summary = await Ingestor(store, HashEmbedder(), batch_size=64).ingest(items, keep_results=True)
    assert summary.refused == 1 and summary.written == 10
    refusal = summary.refusals[0]
    assert (refusal.ref.file, refusal.ref.line) == ("batch.jsonl", 7)
    assert "Neo4j would not store this record" in refusal.describe()
    assert "too large to index" in refusal.describe()
    assert await _episode_ids(store, project) == {f"ep-{n}" for n in range(1, 12) if n != 7}


@pytest.mark.parametrize(
    ("extra", "field", "says"),
    [
        ({"tags": ["k:v"] * 65}, "tags", "at most 64 items"),
        ({"tags": ["k:" + "v" * 250] * 20}, "tags", "at most 4,000 bytes of tags"),
        ({"environment": {"packages": {"x" * 300: "1.0"}}}, "environment.packages.", "256"),
        ({"snippets": [{"code": "print(1)", "language": "x" * 65}]}, "snippets[0].language", "64"),
        ({"tools": ["x" * 257]}, "tools[0]", "256"),
    ],
    ids=["many-tags", "long-tags", "package-name", "language", "tool"],
)
def test_names_no_index_would_hold_are_refused_with_the_field(
    extra: dict[str, Any], field: str, says: str
) -> None:
    ref = SourceRef("names.jsonl", 1)
    refused = validate_record({"project": "p", "summary": "s", **extra}, ref)
    assert isinstance(refused, Refused)
    assert len(refused.errors) == 1 and refused.errors[0].field.startswith(field)
    assert says in refused.errors[0].message


def test_a_handful_of_tags_and_short_names_pass() -> None:
    record = {"project": "p", "summary": "s", "tags": ["k:v"] * 64, "tools": ["kubectl"]}
    assert isinstance(validate_record(record, SourceRef("names.jsonl", 1)), Parsed)
