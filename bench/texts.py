"""Every text the ingest pipeline embeds for a corpus, in ingest order (to fill the cache).

The same functions as the pipeline decide the texts: `prepare_episode` (episode text and
title), the error templates (`kind: template`), and `prepare_snippets` (code memory).
"""

from __future__ import annotations

from collections.abc import Iterator

from bench.corpus import Corpus
from metisgraph.ingest.prepare.episode import prepare_episode
from metisgraph.ingest.records import EpisodeRecord
from metisgraph.ingest.snippets.batch import prepare_snippets

__all__ = ["pipeline_texts"]


def pipeline_texts(corpus: Corpus, model: str, chunk: int = 1000) -> Iterator[list[str]]:
    """Lists of distinct texts, one per `chunk` episodes, in corpus order."""
    records = (r for r in corpus.records() if r["record_type"] == "episode")
    batch: list[EpisodeRecord] = []
    for record in records:
        batch.append(EpisodeRecord.model_validate(record))
        if len(batch) >= chunk:
            yield _texts(batch, model)
            batch = []
    if batch:
        yield _texts(batch, model)


def _texts(records: list[EpisodeRecord], model: str) -> list[str]:
    episodes = [prepare_episode(r, model) for r in records]
    texts = [e.text_for_embedding for e in episodes]
    texts += [e.title_text for e in episodes if e.title_text]
    texts += [f"{err.kind}: {err.template}" for e in episodes for err in e.errors]
    texts += [s.text_for_embedding for s in prepare_snippets(episodes, [])]
    return list(dict.fromkeys(texts))
