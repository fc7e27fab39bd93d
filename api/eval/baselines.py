"""The plain baselines `eval retrieval` prints beside the product, over the same corpus and
queries in the same run: BM25, dense, and their reciprocal rank fusion.

* ``bm25``: Okapi BM25 (k1 1.2, b 0.75) over each corpus item's title, text, error and
  code; words and identifiers lower-cased, camelCase and snake_case parts added.
* ``dense``: cosine between the question (text and error, embedded as questions are) and
  each item's own vector as ingest stored it (the same model), nothing else.
* ``rrf``: 1 / (60 + rank) summed over the two lists (each cut at 100).

Each is asked inside the query's project, without the query's excluded ids, like the product.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from metisgraph.api.services import Services

__all__ = ["BASELINES", "BM25", "baseline_rankings", "rrf", "tokens"]

BASELINES = ("bm25", "dense", "rrf")
DEPTH = 100  # each list fused by rrf is cut here
RRF_K = 60
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+|\d+")
_PARTS = re.compile(r"[a-z]+|\d+")
_CAMEL = re.compile(r"([a-z])([A-Z])")


class AskedQuery(Protocol):
    """What the baselines read of an evaluation question (api/eval/retrieval.py's EvalQuery)."""

    @property
    def id(self) -> str: ...
    @property
    def project(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def exclude(self) -> frozenset[str]: ...


def tokens(text: str | None) -> list[str]:
    """Lower-cased words and identifiers, with the parts of compound identifiers added."""
    out: list[str] = []
    for word in _WORD.findall(text or ""):
        out.append(word.lower())
        parts = _PARTS.findall(_CAMEL.sub(r"\1 \2", word).lower())
        if len(parts) > 1:
            out.extend(parts)
    return out


class BM25:
    """An in-memory Okapi BM25 index of one project's items."""

    def __init__(self, docs: Mapping[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.ids = list(docs)
        self.tf = [Counter(tokens(docs[i])) for i in self.ids]
        lengths = [sum(c.values()) for c in self.tf]
        average = sum(lengths) / max(1, len(lengths))
        df: Counter[str] = Counter()
        for counts in self.tf:
            df.update(counts.keys())
        n = len(self.ids)
        self.idf = {t: math.log(1 + (n - m + 0.5) / (m + 0.5)) for t, m in df.items()}
        self.norm = [k1 * (1 - b + b * length / (average or 1.0)) for length in lengths]
        self.k1 = k1
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for j, counts in enumerate(self.tf):
            for term, count in counts.items():
                self.postings[term].append((j, count))

    def search(self, query: str, excluded: frozenset[str], depth: int) -> list[str]:
        score: dict[int, float] = defaultdict(float)
        for term in set(tokens(query)):
            idf = self.idf.get(term, 0.0)
            for j, f in self.postings.get(term, ()):
                score[j] += idf * f * (self.k1 + 1) / (f + self.norm[j])
        ordered = sorted(score.items(), key=lambda x: (-x[1], x[0]))
        return [self.ids[j] for j, _ in ordered if self.ids[j] not in excluded][:depth]


def rrf(lists: Iterable[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion of ranked id lists."""
    score: dict[str, float] = defaultdict(float)
    for ranked in lists:
        for rank, item in enumerate(ranked, start=1):
            score[item] += 1.0 / (k + rank)
    return sorted(score, key=lambda i: (-score[i], i))


@dataclass(frozen=True)
class _Item:
    id: str
    project: str
    text: str


def _corpus(path: Path) -> list[_Item]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row: dict[str, Any] = json.loads(line)
        parts = (row.get(k) for k in ("title", "text", "error", "code"))
        text = "\n".join(p for p in parts if isinstance(p, str) and p)
        items.append(_Item(str(row["id"]), str(row["project"]), text))
    return items


def _question(q: AskedQuery) -> str:
    return "\n".join(x for x in (q.text, q.error) if x)


async def _dense(
    services: Services, queries: Sequence[AskedQuery], namespace: str, depth: int
) -> dict[str, list[str]]:
    """Each query's items by cosine with their stored text vector, best first."""
    out: dict[str, list[str]] = {}
    by_project: dict[str, list[AskedQuery]] = defaultdict(list)
    for q in queries:
        by_project[q.project].append(q)
    for project, asked in by_project.items():
        rows = await services.store.run("eval_episode_vectors", project=namespace + project)
        if not rows:
            out |= {q.id: [] for q in asked}
            continue
        ids = [str(r["id"]) for r in rows]
        items = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        items /= np.linalg.norm(items, axis=1, keepdims=True) + 1e-12
        vectors = services.embedder.encode_fresh_queries([_question(q) for q in asked])
        vectors = vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12)
        for q, similarity in zip(asked, vectors @ items.T, strict=True):
            order = np.argsort(-similarity, kind="stable")
            ranked = (ids[j] for j in order)
            out[q.id] = [i for i in ranked if i not in q.exclude][:depth]
    return out


async def baseline_rankings(
    services: Services, corpus: Path, queries: Sequence[AskedQuery], namespace: str
) -> dict[str, dict[str, list[str]]]:
    """baseline -> query id -> ranked corpus ids (the best ``DEPTH``)."""
    by_project: dict[str, dict[str, str]] = defaultdict(dict)
    for item in _corpus(corpus):
        by_project[item.project][item.id] = item.text
    indexes = {p: BM25(docs) for p, docs in by_project.items()}
    bm25 = {
        q.id: indexes[q.project].search(_question(q), q.exclude, DEPTH)
        if q.project in indexes
        else []
        for q in queries
    }
    dense = await _dense(services, queries, namespace, DEPTH)
    fused = {q.id: rrf([bm25[q.id], dense[q.id]]) for q in queries}
    return {"bm25": bm25, "dense": dense, "rrf": fused}
