"""A fake embedder for tests of code that does not care about meaning (never recall quality)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from metisgraph.ingest.embeddings import Embedder

DIMENSION = 384  # the real model's, so the test database's vector indexes take the vectors


class HashEmbedder(Embedder):
    """A deterministic unit vector per text; counts the texts it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    @property
    def dimension(self) -> int:
        return DIMENSION

    def load(self) -> None:
        return None

    def encode(self, texts: Sequence[str]) -> Any:
        self.calls.append(len(texts))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for i, text in enumerate(texts):
            data = text.encode("utf-8", "surrogatepass")  # fuzzed text may hold lone surrogates
            seed = int.from_bytes(hashlib.sha256(data).digest()[:8], "big")
            row = np.random.default_rng(seed).standard_normal(DIMENSION)
            out[i] = row / np.linalg.norm(row)
        return out
