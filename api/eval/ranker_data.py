"""The shortlist features `eval retrieval --features FILE` records, as one .npz per set: what
`eval ranker` trains and judges a learned ranker on without asking recall again.

Arrays: ``names`` (the feature names), ``matrix`` (one row per shortlisted candidate),
``query`` (its question's index), ``label`` (1: a right answer), ``hand`` (the hand-set
fusion's score), ``ids`` (the candidate's corpus id); ``meta``: JSON text, the set's name
and each question's id and right answers (for nDCG and the questions with no right answer
shortlisted).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from metisgraph.api.eval.retrieval import EvalQuery
from metisgraph.graph import FEATURES, FeatureTable

__all__ = ["FeatureSet", "feature_set", "read_features", "write_features"]


@dataclass(frozen=True)
class FeatureSet:
    name: str
    names: tuple[str, ...]
    matrix: npt.NDArray[np.float64]
    query: npt.NDArray[np.int64]
    label: npt.NDArray[np.int8]
    hand: npt.NDArray[np.float64]
    ids: list[str]
    questions: list[dict[str, object]]  # {id, relevant}

    def rows_of(self, index: int) -> npt.NDArray[np.int64]:
        return np.flatnonzero(self.query == index)

    def column(self, name: str) -> int:
        return self.names.index(name)


def feature_set(
    name: str, queries: Sequence[EvalQuery], tables: Mapping[str, FeatureTable]
) -> FeatureSet:
    """One set's shortlists: every question, with its shortlist's rows (none when recall
    returned nothing)."""
    rows, query, label, hand, ids = [], [], [], [], []
    for index, q in enumerate(queries):
        table = tables.get(q.id)
        if table is None:
            continue
        for row, (_, item), score in zip(table.matrix, table.keys, table.hand, strict=True):
            rows.append(row)
            query.append(index)
            label.append(item in q.relevant)
            hand.append(score)
            ids.append(item)
    return FeatureSet(
        name=name,
        names=FEATURES,
        matrix=np.asarray(rows, dtype=np.float64).reshape(len(rows), len(FEATURES)),
        query=np.asarray(query, dtype=np.int64),
        label=np.asarray(label, dtype=np.int8),
        hand=np.asarray(hand, dtype=np.float64),
        ids=ids,
        questions=[{"id": q.id, "relevant": sorted(q.relevant)} for q in queries],
    )


def write_features(
    path: Path, name: str, queries: Sequence[EvalQuery], tables: Mapping[str, FeatureTable]
) -> None:
    """One set's shortlists (``feature_set``) as an .npz file."""
    data = feature_set(name, queries, tables)
    meta = {"set": name, "questions": data.questions}
    np.savez_compressed(
        path,
        names=np.asarray(data.names),
        matrix=data.matrix,
        query=data.query,
        label=data.label,
        hand=data.hand,
        ids=np.asarray(data.ids, dtype=str),
        meta=np.asarray(json.dumps(meta)),
    )


def read_features(path: Path) -> FeatureSet:
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        return FeatureSet(
            name=str(meta["set"]),
            names=tuple(str(n) for n in data["names"]),
            matrix=data["matrix"].astype(np.float64),
            query=data["query"].astype(np.int64),
            label=data["label"].astype(np.int8),
            hand=data["hand"].astype(np.float64),
            ids=[str(i) for i in data["ids"]],
            questions=list(meta["questions"]),
        )
