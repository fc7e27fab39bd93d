"""A fake embedder for tests of code that does not care about meaning."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from metisgraph.ingest.embeddings import Embedder


class HashEmbedder(Embedder):
    """A deterministic unit vector per text; counts the texts it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    @property
    def dimension(self) -> int:
        return 384

    def load(self) -> None:
        return None

    def encode(self, texts: Sequence[str]) -> Any:
        self.calls.append(len(texts))
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            row = np.random.default_rng(seed).standard_normal(384)
            out[i] = row / np.linalg.norm(row)
        return out
