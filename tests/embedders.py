"""A fake embedder for tests of code that does not care about meaning (never recall quality)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from metisgraph.ingest.embeddings import Embedder, EmbeddingSettings

DIMENSION = 384  # the real model's, so the test database's vector indexes take the vectors


class HashEmbedder(Embedder):
    """A deterministic unit vector per text; counts the texts it is given.

    ``salt`` makes another "model" (other vectors for the same text, another weights digest);
    ``dimension`` another size.
    """

    def __init__(self, salt: str = "", dimension: int = DIMENSION) -> None:
        super().__init__(EmbeddingSettings(model=f"hash-embedder{salt}"))
        self.calls: list[int] = []
        self.salt = salt
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def load(self) -> None:
        return None

    def _weights_digest(self) -> str:
        return hashlib.sha256(f"hash-embedder|{self.salt}|{self._dimension}".encode()).hexdigest()

    def encode(self, texts: Sequence[str]) -> Any:
        self.calls.append(len(texts))
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            # salt: another "model"; surrogatepass: fuzzed text may hold lone surrogates
            data = (self.salt + text).encode("utf-8", "surrogatepass")
            seed = int.from_bytes(hashlib.sha256(data).digest()[:8], "big")
            row = np.random.default_rng(seed).standard_normal(self._dimension)
            out[i] = row / np.linalg.norm(row)
        return out
