"""Questions embedded on ONNX Runtime give the torch vectors (the real model, exported)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metisgraph.ingest import embedding_onnx
from metisgraph.ingest.embeddings import Embedder, EmbeddingSettings

TEXTS = [
    "why does the worker's memory grow until it is killed",
    "ImportError: cannot import name 'soft_unicode' from 'markupsafe'",
    "ä ö ü — 日本語 — emoji 🚀",
    "",
    "a",
    "Traceback (most recent call last): File app.py line 3 " * 60,  # over 256 tokens
]


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    # The float graph for every text (long ones go to the int8 twin by default: below)
    folder = tmp_path_factory.mktemp("onnx")
    embedder = Embedder(EmbeddingSettings(onnx_dir=folder, query_int8_from=0))
    assert embedder.load_query_path() == "onnx"
    return embedder


def test_question_vectors_equal_the_torch_ones_within_1e_5(onnx_embedder: Embedder) -> None:
    torch_vectors = onnx_embedder.encode(TEXTS)
    one_by_one = np.stack([onnx_embedder.encode_queries([t], tenant="t")[0] for t in TEXTS])
    batched = onnx_embedder.encode_queries(TEXTS, tenant="u")  # asked together
    assert np.abs(one_by_one - torch_vectors).max() <= 1e-5
    assert np.abs(batched - torch_vectors).max() <= 1e-5
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)


def test_a_short_text_asked_beside_a_long_one_is_not_padded_to_its_length(
    onnx_embedder: Embedder,
) -> None:
    """A question's first line beside the pasted trace it heads: the model sees each text at
    its own length (what the model costs grows with the length it is given)."""
    encoder = onnx_embedder._onnx  # type: ignore[attr-defined]
    session, lengths = encoder._session, []

    class Recording:
        def run(self, names: Any, feed: dict[str, Any]) -> Any:
            lengths.append(feed["input_ids"].shape)
            return session.run(names, feed)

    encoder._session = Recording()
    try:
        encoder.encode(["a short first line", TEXTS[-1]])
    finally:
        encoder._session = session
    assert lengths[0][0] == lengths[1][0] == 1 and lengths[0][1] < 10 < 256 == lengths[1][1]


def test_the_export_is_kept_and_reused_by_the_next_process(onnx_embedder: Embedder) -> None:
    (export,) = Path(onnx_embedder.settings.onnx_dir).glob("*.onnx")
    stamp = export.stat().st_mtime_ns
    again = Embedder(EmbeddingSettings(onnx_dir=onnx_embedder.settings.onnx_dir, query_int8_from=0))
    assert again.load_query_path() == "onnx"
    assert [p.name for p in Path(onnx_embedder.settings.onnx_dir).iterdir()] == [export.name]
    assert export.stat().st_mtime_ns == stamp


@pytest.mark.slow
def test_an_export_that_drifts_from_torch_is_not_used(
    onnx_embedder: Embedder, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    monkeypatch.setattr(embedding_onnx, "TOLERANCE", 0.0)  # any rounding now counts as drift
    embedder = Embedder(EmbeddingSettings(onnx_dir=onnx_embedder.settings.onnx_dir))
    assert embedder.load_query_path() == "torch"
    assert "differs from torch" in caplog.text
    vectors = embedder.encode_queries(TEXTS[:2], tenant="t")
    assert np.array_equal(vectors, embedder.encode(TEXTS[:2]))  # torch's own, exactly


def test_torch_when_asked_or_when_the_model_has_another_shape(tmp_path: Path) -> None:
    asked = Embedder(EmbeddingSettings(query_runtime="torch", onnx_dir=tmp_path))
    assert asked.load_query_path() == "torch"
    assert list(tmp_path.iterdir()) == []

    class Plain:  # not a sentence-transformers module list
        def encode(self, texts: list[str], **_: Any) -> Any:
            return np.ones((len(texts), 3), dtype=np.float32)

    other = Embedder(EmbeddingSettings(onnx_dir=tmp_path))
    other._model = Plain()
    assert other.load_query_path() == "torch"
    assert other.encode_queries(["q"], tenant="t").shape == (1, 3)


@pytest.mark.slow
def test_long_questions_go_to_the_int8_graph_short_ones_stay_on_the_float_one(
    onnx_embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """Issue 23: a pasted trace (past 128 tokens) is embedded by the export's int8 twin, kept
    beside it (about half the time); its vector keeps torch's direction. A short question
    keeps the float graph's, torch's within 1e-5."""
    (export,) = Path(onnx_embedder.settings.onnx_dir).glob("*.onnx")
    folder = tmp_path / "onnx"
    folder.mkdir()
    shutil.copy(export, folder / export.name)  # the float export, not made again
    mixed = Embedder(EmbeddingSettings(onnx_dir=folder))  # the default: int8 past 128 tokens
    mixed._model = onnx_embedder._model  # type: ignore[attr-defined]
    assert mixed.load_query_path() == "onnx"
    assert len(list(folder.glob("*-int8pc.onnx"))) == 1
    torch_vectors = mixed.encode(TEXTS)
    vectors = np.stack([mixed.encode_queries([t], tenant="t")[0] for t in TEXTS])
    assert np.abs(vectors[:-1] - torch_vectors[:-1]).max() <= 1e-5  # short: the float graph
    assert float(vectors[-1] @ torch_vectors[-1]) >= embedding_onnx.INT8_MIN_COSINE
    assert np.abs(vectors[-1] - torch_vectors[-1]).max() > 1e-5  # long: the int8 graph
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    # an int8 graph off torch's direction is not used: long questions stay on the float one
    monkeypatch.setattr(embedding_onnx, "INT8_MIN_COSINE", 1.01)
    checked = Embedder(EmbeddingSettings(onnx_dir=folder))
    checked._model = onnx_embedder._model  # type: ignore[attr-defined]
    assert checked.load_query_path() == "onnx"
    assert "not embedded by the int8 graph" in caplog.text
    long = checked.encode_queries(TEXTS[-1:], tenant="t")
    assert np.abs(long - torch_vectors[-1:]).max() <= 1e-5
