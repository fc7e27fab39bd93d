"""Every stored vector made again with this process's model: resumable, with progress.

What a vector stands for is read back from the node (an episode's title, summary, action,
errors and observation head as ``prepare.embed_text`` puts them together; a snippet's
purpose and code head; an error's kind and template; a pattern's summary), so the store
needs nothing but itself. The store records the model it re-embeds to before it starts
(no process with the old model may write meanwhile: ``graph.check_model`` sees the run as
unfinished), marks each node done, and records the new model once the last node is done.
Stopped part way, it resumes where it stopped. A model of another dimension first drops
the vector indexes; ``apply_schema`` builds them again for the new dimension.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from metisgraph.graph import (
    GraphStore,
    ModelStamp,
    begin_reembedding,
    drop_vector_indexes,
    read_stamp,
    stamp_store,
)
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.errors import extract_errors
from metisgraph.ingest.pipeline.neighbours import refresh_context
from metisgraph.ingest.prepare.episode import embed_text as episode_text
from metisgraph.ingest.snippets.prepare import embed_text as snippet_text

__all__ = ["KINDS", "ReembedReport", "reembed"]

KINDS = ("episodes", "snippets", "errors", "patterns")
_PAGE = 256
_TASK_PAGE = 500

Progress = Callable[[str, int, int], None]  # kind, done, total


@dataclass
class ReembedReport:
    model: ModelStamp
    done: dict[str, int] = field(default_factory=dict)
    contexts: int = 0
    dropped_indexes: list[str] = field(default_factory=list)


def _episode_texts(row: dict[str, Any]) -> tuple[str, str | None]:
    # The errors as prepare_episode finds them: in the stored (sanitized) error and output.
    found = "\n".join(t for t in (row["error_text"], row["observation"]) if t)
    errors = extract_errors(found) if found else []
    return episode_text(row, errors), row["title"] or None


def _texts(kind: str, row: dict[str, Any]) -> tuple[str, str | None]:
    if kind == "episodes":
        return _episode_texts(row)
    if kind == "snippets":
        fields = ("name", "signature", "description", "kind", "language", "imports", "calls")
        return snippet_text(**{k: row[k] for k in fields}, paths=row["paths"],
                            template=row["template"]), None  # fmt: skip
    if kind == "errors":
        return f"{row['kind']}: {row['template']}", None
    return str(row["summary"] or ""), None


async def _reembed_kind(
    store: GraphStore, embedder: Embedder, kind: str, fingerprint: str, report: Progress
) -> int:
    total = done = 0
    counts = await store.run("vectors_to_reembed", fingerprint=fingerprint)
    # A kind with no node to do has no row (count() grouped by a constant kind).
    total = next((r["todo"] for r in counts if r["kind"] == kind), 0)
    report(kind, 0, total)
    while page := await store.run(f"{kind}_to_reembed", fingerprint=fingerprint, limit=_PAGE):
        texts = [_texts(kind, row) for row in page]
        titled = [t for _, t in texts if t]
        vectors = await embedder.aencode([t for t, _ in texts] + titled)
        titles = iter(vectors[len(texts) :])
        rows = [
            {
                "element": row["element"],
                "embedding": vectors[i].tolist(),
                "title_embedding": next(titles).tolist() if title else None,
            }
            for i, (row, (_, title)) in enumerate(zip(page, texts, strict=True))
        ]
        await store.run("set_reembedded", rows=rows, fingerprint=fingerprint)
        done += len(rows)
        report(kind, done, max(total, done))
    return done


async def _refresh_contexts(store: GraphStore) -> int:
    after, refreshed = ("", ""), 0
    while tasks := await store.run(
        "chained_tasks_after", after_project=after[0], after_id=after[1], limit=_TASK_PAGE
    ):
        refreshed += await refresh_context(store, tasks)
        after = (tasks[-1]["project"], tasks[-1]["id"])
    return refreshed


async def reembed(
    store: GraphStore,
    embedder: Embedder,
    *,
    on_progress: Progress | None = None,
) -> ReembedReport:
    """Embed every stored vector again with ``embedder``; record its model on the store."""
    ours = embedder.stamp()
    stored = await read_stamp(store)
    report = ReembedReport(ours)
    await begin_reembedding(store, ours)
    known = stored.current.dimension if stored.current else None
    if known != ours.dimension:
        report.dropped_indexes = await drop_vector_indexes(store, keep_dimension=ours.dimension)
    progress = on_progress or (lambda kind, done, total: None)
    for kind in KINDS:
        report.done[kind] = await _reembed_kind(store, embedder, kind, ours.fingerprint, progress)
    report.contexts = await _refresh_contexts(store)
    await store.run("clear_reembedded_marks")
    await stamp_store(store, ours)
    return report
