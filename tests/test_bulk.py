"""The bulk path (`metisgraph ingest --bulk`): the same records loaded through import files
and `neo4j-admin database import` give the graph the pipeline writes — one digest — and the
bulk writer is held to the write statements it stands for."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from embedders import HashEmbedder

from metisgraph.graph import digest_project, record_current
from metisgraph.graph.bulk.graph import IMPORTED, IMPORTED_LABELS, IMPORTED_TYPES
from metisgraph.graph.cypher import Query, load_queries
from metisgraph.graph.embedded.admin_import import import_database
from metisgraph.graph.store import GraphStore, Transaction, open_driver
from metisgraph.ingest import MIGRATIONS
from metisgraph.ingest.adapters import read_path
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.pipeline.bulk import BulkIngestor

pytestmark = pytest.mark.anyio


def _sample(fixtures: Path, project: str) -> list[Any]:
    """The fixtures' runs and records that land in the project (some name one of their own)."""
    items: list[Any] = []
    for folder in ("trajectories", "records"):
        for item in read_path(fixtures / folder, project=project):
            if getattr(getattr(item, "record", None), "project", project) == project:
                items.append(item)
    return items


class _Judged(GraphStore):
    """A store noting where staleness is judged: the snippets judged in every environment
    they have evidence in, and the (snippet, environment) pairs judged."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.judged: list[tuple[str, ...]] = []
        self.runs: dict[str, int] = {}
        self.indexes_judging: set[str] | None = None  # the indexes when staleness first ran

    async def write_many(
        self, steps: Sequence[tuple[str | Query, dict[str, Any]]], then: Any = None
    ) -> list[dict[str, Any]]:
        """Each step of a write transaction counted too, its last steps' (``then``) among
        them."""
        for step, _ in steps:
            self._saw(step)
        if then is None:
            return await super().write_many(steps)

        async def noted(tx: Transaction) -> object:
            return await then(_NotedTx(tx, self))

        return await super().write_many(steps, noted)

    def _saw(self, step: str | Query) -> None:
        name = step if isinstance(step, str) else step.name
        self.runs[name] = self.runs.get(name, 0) + 1

    async def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        self._saw(name)
        if name.startswith("stale_") and self.indexes_judging is None:
            shown = await self.run_text("SHOW INDEXES YIELD name RETURN name", read=True)
            self.indexes_judging = {r["name"] for r in shown}
        if name == "stale_candidates":
            self.judged += [("everywhere", s) for s in params["snippets"]]
        if name == "stale_facts":
            self.judged += [(p["snippet"], p["env"]) for p in params["pairs"]]
        return await super().run(name, **params)


class _NotedTx(Transaction):
    """A transaction's statements counted by the store that holds it."""

    def __init__(self, tx: Transaction, store: _Judged) -> None:
        self._inner, self._store = tx, store

    async def run_query(self, step: str | Query, params: dict[str, Any]) -> list[dict[str, Any]]:
        self._store._saw(step)
        return await self._inner.run_query(step, params)


async def test_a_bulk_load_gives_the_graph_the_pipeline_writes(
    store: Any, scratch_neo4j: Any, project: str, fixtures_dir: Path, tmp_path: Path
) -> None:
    embedder = HashEmbedder()
    items = _sample(fixtures_dir, project)
    # small batches: tasks, errors and code met again in later batches, both ways
    judged = _Judged(store)
    wanted = await Ingestor(judged, embedder, batch_size=7).ingest(items)
    bulk = BulkIngestor(embedder, batch_size=7, workers=2)  # as on the command line
    files = await bulk.write_files(_sample(fixtures_dir, project), tmp_path)
    assert files.counts["Episode"] == wanted.written > 20

    scratch_neo4j.stop()
    import_database(scratch_neo4j, files.arguments)
    scratch_neo4j.start()
    driver = open_driver(scratch_neo4j.uri, "neo4j", scratch_neo4j.password())
    try:
        target = _Judged(GraphStore(driver))
        # As `metisgraph ingest --bulk` does: the imported graph is this version's, so every
        # migration is recorded, not run (running them over it was ~5 s of this test)
        await record_current(target, MIGRATIONS)
        await bulk.derive(files, target)  # the schema applied there, episode_vectors last
        assert files.summary.as_dict() == wanted.as_dict()
        # staleness judged where the pipeline judged it (not in every environment again)
        assert sorted(target.judged) == sorted(judged.judged) != []
        # families found once over every imported error, not again at each batch
        assert target.runs["error_family_buckets"] == 1 < judged.runs["error_family_buckets"]
        # the context vectors came with the files: the derive read no chain back and wrote
        # no context; episode_vectors was there (populating beside it) while it wrote, and
        # snippet_embedding, whose vectors it writes, was built after it
        assert target.indexes_judging is not None
        assert {"episode_vectors", "episode_text"} <= target.indexes_judging
        assert "snippet_embedding" not in target.indexes_judging
        for chain_step in ("task_neighbourhoods", "set_context"):
            assert chain_step in judged.runs and chain_step not in target.runs
        assert target.runs["bulk_context_text"] >= 1
        found = await target.run_text(
            """MATCH (v:EpisodeVector {project: $p, of: 'context'})
               CALL db.index.vector.queryNodes('episode_vectors', 10, v.embedding)
               YIELD node
               WITH v, collect(node) AS nearest
               RETURN count(v) AS written, sum(CASE WHEN v IN nearest THEN 1 ELSE 0 END) AS hit""",
            {"p": project},
            read=True,
        )
        assert found[0]["written"] > 10 and found[0]["hit"] == found[0]["written"], found
        snippets = await target.run_text(
            """MATCH (s:Snippet {project: $p}) WHERE s.embedding IS NOT NULL
               CALL db.index.vector.queryNodes('snippet_embedding', 1, s.embedding)
               YIELD node, score
               RETURN count(s) AS written,
                      sum(CASE WHEN score > 0.9999 THEN 1 ELSE 0 END) AS hit""",
            {"p": project},
            read=True,
        )
        assert snippets[0]["written"] > 3 and snippets[0]["hit"] == snippets[0]["written"]
        got = await digest_project(target, project)
        if got != await digest_project(store, project):
            from graphdiff import canonical_parts

            ours, theirs = (
                await canonical_parts(target, project),
                await canonical_parts(store, project),
            )
            differ = [
                f"{name}:\n  bulk: {ours.get(name)}\n  pipeline: {theirs.get(name)}"
                for name in sorted(ours.keys() | theirs.keys())
                if ours.get(name) != theirs.get(name)
            ]
            raise AssertionError(f"{len(differ)} parts differ:\n" + "\n".join(differ[:30]))
    finally:
        await driver.close()


def _tables(folder: Path) -> dict[tuple[str, str], list[str]]:
    """Each file's rows under its kind, name and header, in a stable order."""
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(folder.glob("*.csv")):
        header, *rows = path.read_text(encoding="utf-8").splitlines()
        out.setdefault((path.name.rsplit("-", 1)[0], header), []).extend(rows)
    return {key: sorted(rows) for key, rows in out.items()}


@pytest.mark.slow
async def test_worker_processes_write_the_files_this_process_writes(
    project: str, fixtures_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Preparation and formatting moved to worker processes change nothing in the files,
    the refusals (with the file and line each came from) or the plans left for after."""
    import metisgraph.graph.bulk.graph as bulk_graph
    import metisgraph.ingest.pipeline.bulk as bulk_module

    when = datetime(2026, 1, 2, tzinfo=UTC)

    class _Now(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return when

    monkeypatch.setattr(bulk_graph, "datetime", _Now)
    monkeypatch.setattr(bulk_module, "datetime", _Now)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "kind": "bug_report", "title": "", "text": 3}\n')
    seen = []
    for workers in (0, 2):
        items = [*_sample(fixtures_dir, project), *read_path(bad, project=project, format="corpus")]
        bulk = BulkIngestor(HashEmbedder(), batch_size=7, workers=workers)
        files = await bulk.write_files(items, tmp_path / str(workers))
        plans = [p.read_bytes() for p in files.plans]
        refusals = [(r.ref, r.errors) for r in files.summary.refusals]
        seen.append((_tables(files.folder / "import"), files.counts, files.summary.as_dict(),
                     refusals, files.empty_lists, len(plans)))  # fmt: skip
    assert seen[0] == seen[1]
    assert seen[0][1]["Episode"] > 20
    assert any(ref.file == str(bad) and ref.line == 1 for ref, _ in seen[0][3])


def test_a_model_vector_is_written_as_float32_in_nine_digits_that_give_it_back() -> None:
    """A vector of float32 values (every model's output) goes to a `float[]` column in nine
    significant digits, each parsed (as the import tool parses a float) to the very value;
    one with values a float32 cannot hold stays `double[]`, each value its repr."""
    import numpy as np

    from metisgraph.graph import Vector
    from metisgraph.graph.bulk.tables import ARRAY_DELIMITER, column_type, format_rows

    rng = np.random.default_rng(3)
    tiny = np.asarray([0.0, -1e-30, 1e-45], np.float32).tolist()  # a subnormal last
    model = Vector([*(rng.standard_normal(384) / 20).astype(np.float32).tolist(), *tiny])
    wide = Vector([0.1, 1 / 3, 2.5])
    assert column_type(model) == "float[]" and column_type(wide) == "double[]"
    chunks = format_rows(
        [("nodes", "V", ("a",), {"v": model}), ("nodes", "V", ("b",), {"v": wide})]
    )
    files = {columns: text for (_, _, columns), (text, _) in chunks.items()}
    narrow_text = files[(("v", "float[]"),)].strip().split(",")[1].strip('"')
    assert [float(np.float32(t)) for t in narrow_text.split(ARRAY_DELIMITER)] == model
    assert len(narrow_text) < 0.75 * len(ARRAY_DELIMITER.join(map(repr, model)))
    wide_text = files[(("v", "double[]"),)].strip().split(",")[1].strip('"')
    assert [float(t) for t in wide_text.split(ARRAY_DELIMITER)] == wide


def test_the_bulk_writer_stands_for_the_write_statements_it_leaves_out() -> None:
    """Every step the files carry is a write statement that MERGEs or CREATEs only the
    labels and relationship types the bulk writer writes (a new label in one of them fails
    here until graph/bulk/graph.py writes it too)."""
    queries = load_queries()
    labels: set[str] = set()
    types: set[str] = set()
    for name in IMPORTED:
        text = queries[name].text
        for clause in re.findall(r"(?:MERGE|CREATE)\s+([^\n]+)", text):
            labels |= set(re.findall(r"\(\w*:(\w+)", clause))
            types |= set(re.findall(r"\[\w*:(\w+)", clause))
    assert labels == IMPORTED_LABELS
    assert types == IMPORTED_TYPES
