"""The embedder's bookkeeping around the model: repeated texts, remembered questions.

A stand-in model that records what it is asked: nothing here depends on meaning.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

from metisgraph.ingest.embeddings import Embedder, EmbeddingSettings


class RecordingModel:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def encode(self, texts: list[str], batch_size: int = 32, **_: Any) -> Any:
        self.asked.append(list(texts))
        return np.stack([np.full(4, float(len(t)), dtype=np.float32) for t in texts])

    encode_questions = encode


def _embedder(**settings: Any) -> tuple[Embedder, RecordingModel]:
    embedder = Embedder(EmbeddingSettings(**settings))
    model = RecordingModel()
    embedder._model = model
    return embedder, model


def test_a_repeated_text_is_embedded_once_per_call() -> None:
    embedder, model = _embedder()
    vectors = embedder.encode(["a", "bb", "a", "ccc", "bb"])
    assert model.asked == [["a", "bb", "ccc"]]
    assert [v[0] for v in vectors] == [1.0, 2.0, 1.0, 3.0, 2.0]


def test_questions_are_remembered_and_the_oldest_forgotten() -> None:
    embedder, model = _embedder(query_cache=2)
    embedder.encode_queries(["q1", "error"], tenant="a")
    again = embedder.encode_queries(["q1", "error"], tenant="a")
    assert model.asked == [["q1", "error"]]
    assert [v[0] for v in again] == [2.0, 5.0]
    embedder.encode_queries(["q22"], tenant="a")  # forgets q1, the least recently used
    embedder.encode_queries(["q1", "error"], tenant="a")
    assert model.asked[-1] == ["q1"]


def test_a_question_remembered_for_one_tenant_is_new_to_another() -> None:
    """Shared, the cache let one tenant time another's questions: a hit answers faster."""
    embedder, model = _embedder()
    embedder.encode_queries(["what did b ask?"], tenant="b")
    embedder.encode_queries(["what did b ask?"], tenant="a")
    assert model.asked == [["what did b ask?"], ["what did b ask?"]]
    embedder.encode_queries(["what did b ask?"], tenant="a")
    assert len(model.asked) == 2  # a's own question is remembered for a


@pytest.mark.anyio
async def test_questions_do_not_queue_behind_ingest() -> None:
    embedder, _ = _embedder()
    async with embedder._limiter:  # an ingest batch holds the model's lane
        vectors = await embedder.aencode_queries(["still answered"], tenant="a")
    assert vectors.shape == (1, 4)


def test_the_model_leaves_a_core_to_the_rest_unless_told() -> None:
    assert Embedder().threads == max(1, (os.cpu_count() or 2) - 1)
    assert Embedder(EmbeddingSettings(threads=3)).threads == 3
    embedder = Embedder(EmbeddingSettings(threads=1))  # the real model: its session's threads
    embedder.load()
    options = embedder._model._session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
