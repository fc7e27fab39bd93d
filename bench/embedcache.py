"""Embeddings computed once and kept on disk, so a benchmark re-run does not re-embed.

Content-addressed: a vector is found by the SHA-256 of its text, under a directory named
for the model and the corpus seed (bench/.cache/embeddings/<model>/seed-<seed>). A text
the cache does not hold is embedded by the real model and added, so a change of what the
pipeline embeds costs only the texts that changed. Chunks are separate .npz files written
atomically: an interrupted run keeps what it finished.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from metisgraph.ingest.embeddings import Embedder

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["CachedEmbedder", "DerivedEmbedder", "EmbeddingCache", "cache_dir", "derived_vector"]

_CHUNK = 4096


def cache_dir(root: Path, model: str, seed: int) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_")
    return root / "embeddings" / slug / f"seed-{seed}"


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


class EmbeddingCache:
    """text -> vector, in memory, backed by .npz chunks in one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._rows: dict[bytes, NDArray[np.float32]] = {}
        self._pending: list[tuple[bytes, NDArray[np.float32]]] = []
        self._chunks = 0
        if directory.is_dir():
            for chunk in sorted(directory.glob("chunk-*.npz")):
                with np.load(chunk) as data:
                    keys, vectors = data["keys"], data["vectors"]
                self._rows.update(zip((bytes(k) for k in keys), vectors, strict=True))
                self._chunks += 1

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, text: str) -> bool:
        return _digest(text) in self._rows

    def get(self, text: str) -> NDArray[np.float32] | None:
        return self._rows.get(_digest(text))

    def put(self, text: str, vector: NDArray[np.float32]) -> None:
        key = _digest(text)
        if key not in self._rows:
            self._rows[key] = vector
            self._pending.append((key, vector))
            if len(self._pending) >= _CHUNK:
                self.flush()

    def vectors(self) -> NDArray[np.float32]:
        """Every vector held, in a stable order (by the digest of its text)."""
        return np.stack([self._rows[k] for k in sorted(self._rows)]).astype(np.float32)

    def flush(self) -> None:
        if not self._pending:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        keys = np.array([k for k, _ in self._pending], dtype="S16")
        vectors = np.stack([v for _, v in self._pending]).astype(np.float32)
        path = self.directory / f"chunk-{os.getpid()}-{self._chunks:05d}.npz"
        partial = path.with_suffix(".partial.npz")
        np.savez(partial, keys=keys, vectors=vectors)
        partial.replace(path)
        self._chunks += 1
        self._pending.clear()


class CachedEmbedder(Embedder):
    """The real embedder, answering from the cache first. Counts what it had to compute."""

    def __init__(self, cache: EmbeddingCache, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.cache = cache
        self.computed = 0
        self.served = 0

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            for text, vector in zip(missing, super().encode(missing), strict=True):
                self.cache.put(text, vector)
            self.computed += len(missing)
        self.served += len(texts)
        if not texts:
            return super().encode(texts)
        return np.stack([self.cache.get(t) for t in texts]).astype(np.float32)  # type: ignore[misc]


def derived_vector(pool: NDArray[np.float32], seed: int, noise: float) -> NDArray[np.float32]:
    """A real vector of ``pool`` chosen by ``seed``, plus Gaussian noise of norm ``noise``,
    renormalised (cosine to its source ~1 / sqrt(1 + noise²)). Deterministic per seed."""
    rng = np.random.default_rng(seed)
    gauss = rng.standard_normal(pool.shape[1])
    row = pool[seed % len(pool)] + noise * gauss / np.linalg.norm(gauss)
    return np.asarray(row / np.linalg.norm(row), dtype=np.float32)


class DerivedEmbedder(Embedder):
    """Real vectors where the cache has them, real ones plus noise for every other text.

    For corpora larger than the one the model embedded (the 100k and 1M latency runs): a
    text the cache holds (the 10k prefix: the corpus of size n starts with the one of size
    10,000) gets its real vector; any other text gets a real vector of the cache chosen by
    the text's hash, plus Gaussian noise of norm ``noise``, renormalised (cosine to its
    source ~1 / sqrt(1 + noise²): 0.86 at the default 0.6). Random unit vectors have no
    neighbourhoods (every pair nearly orthogonal), so an HNSW search over them does work
    unlike a real one; these keep the clusters of real text. Deterministic per text. The
    neighbours of a question are then real-looking but mostly unrelated to its words, so
    R@5 over such a corpus is not a quality figure.
    """

    def __init__(self, cache: EmbeddingCache, noise: float = 0.6) -> None:
        super().__init__()
        if len(cache) == 0:
            raise ValueError(f"no real vectors under {cache.directory}: fill the cache first")
        self.cache = cache
        self.pool = cache.vectors()
        self.noise = noise
        self.derived = 0

    @property
    def dimension(self) -> int:
        return int(self.pool.shape[1])

    def load(self) -> None:
        return None

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            real = self.cache.get(text)
            if real is not None:
                out[i] = real
                continue
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())
            out[i] = derived_vector(self.pool, seed, self.noise)
            self.derived += 1
        return out
