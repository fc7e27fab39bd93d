"""Train a learned ranker on recorded shortlists and judge it leave-one-set-out.

The model is logistic regression (L2, Newton's method in numpy: no dependency) over the
standardised features; ``pairwise`` fits it on the differences between a right answer and
a wrong one of the same question (a RankNet-style linear ranker), ``pointwise`` on each
candidate alone. Every set weighs the same, and every question the same inside its set:
the largest set does not decide the ranker.

Figures are computed as `eval retrieval` does (api/eval/retrieval.metrics), over every
question of the set: the shortlist reordered by the scores, the first ten kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from metisgraph.api.eval.ranker_data import FeatureSet
from metisgraph.api.eval.retrieval import metrics
from metisgraph.graph import LinearRanker

__all__ = ["Method", "SetFigures", "fit", "judge", "ranked_lists", "set_figures"]

Method = Literal["pairwise", "pointwise"]
Vector = npt.NDArray[np.float64]
_NEGATIVES = 10  # wrong answers paired with each right one (the best-ranked by hand first)


def ranked_lists(data: FeatureSet, scores: Vector, depth: int = 10) -> dict[str, list[str]]:
    """Each question's shortlist reordered by ``scores`` (ties: hand order), cut at depth."""
    out: dict[str, list[str]] = {}
    for index, question in enumerate(data.questions):
        rows = data.rows_of(index)
        order = rows[np.argsort(-scores[rows], kind="stable")]
        out[str(question["id"])] = [data.ids[r] for r in order[:depth]]
    return out


def set_figures(data: FeatureSet, scores: Vector) -> dict[str, float]:
    """R@1/5/10, MRR@10, nDCG@10 of the set with its shortlists ordered by ``scores``."""
    lists = ranked_lists(data, scores)
    totals: dict[str, float] = {}
    for question in data.questions:
        relevant = frozenset(map(str, question["relevant"]))  # type: ignore[call-overload]
        for name, value in metrics(lists[str(question["id"])], relevant).items():
            totals[name] = totals.get(name, 0.0) + value
    n = len(data.questions) or 1
    return {k: v / n for k, v in totals.items()}


def _columns(data: FeatureSet, names: Sequence[str]) -> Vector:
    """The set's matrix with the columns in ``names`` order (absent: 0)."""
    out = np.zeros((len(data.ids), len(names)))
    for j, name in enumerate(names):
        if name in data.names:
            out[:, j] = data.matrix[:, data.column(name)]
    return out


def _weights(data: FeatureSet, rows: npt.NDArray[np.int64]) -> Vector:
    """Each row's weight: the set weighs 1, each question of it the same."""
    questions = max(1, len(data.questions))
    counts = np.bincount(data.query[rows], minlength=len(data.questions)).astype(np.float64)
    return 1.0 / (questions * counts[data.query[rows]])


def _training(
    sets: Sequence[FeatureSet], names: Sequence[str], method: Method
) -> tuple[Vector, Vector, Vector, bool]:
    """Examples (rows), labels and weights; whether the model has an intercept."""
    xs, ys, ws = [], [], []
    for data in sets:
        matrix = _columns(data, names)
        if method == "pointwise":
            rows = np.arange(len(data.ids))
            xs.append(matrix)
            ys.append(data.label.astype(np.float64))
            ws.append(_weights(data, rows))
            continue
        pairs: list[Vector] = []
        owners: list[int] = []
        for index in range(len(data.questions)):
            rows = data.rows_of(index)
            right = rows[data.label[rows] == 1]
            wrong = rows[data.label[rows] == 0][:_NEGATIVES]
            for r in right:
                for w in wrong:
                    pairs.append(matrix[r] - matrix[w])
                    owners.append(index)
        if not pairs:
            continue
        diff = np.asarray(pairs)
        per = np.bincount(owners, minlength=len(data.questions)).astype(np.float64)
        weight = 1.0 / (max(1, int(np.count_nonzero(per))) * per[owners])
        xs += [diff, -diff]
        ys += [np.ones(len(diff)), np.zeros(len(diff))]
        ws += [weight / 2, weight / 2]
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws), method == "pointwise"


def _logistic(x: Vector, y: Vector, w: Vector, intercept: bool, l2: float) -> Vector:
    """L2-regularised weighted logistic regression by Newton's method: the coefficients
    (the intercept last when there is one)."""
    if intercept:
        x = np.hstack([x, np.ones((len(x), 1))])
    w = w * (len(w) / w.sum())  # mean weight 1: l2 reads as for unweighted rows
    beta = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    if intercept:
        penalty[-1] = 0.0
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30)))
        gradient = x.T @ (w * (p - y)) + penalty * beta
        hessian = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return beta


def fit(
    sets: Sequence[FeatureSet],
    method: Method = "pointwise",
    l2: float = 1.0,
    version: str = "dev",
    names: Sequence[str] | None = None,
) -> LinearRanker:
    """A linear ranker trained on the sets."""
    names = list(names or sets[0].names)
    stacked = np.vstack([_columns(d, names) for d in sets])
    mean, scale = stacked.mean(axis=0), stacked.std(axis=0)
    scale[scale < 1e-9] = 1.0
    x, y, w, intercept = _training(sets, names, method)
    centred = x / scale if method == "pairwise" else (x - mean) / scale
    beta = _logistic(centred, y, w, intercept, l2)
    return LinearRanker(
        version=version,
        features=tuple(names),
        mean=mean,
        scale=scale,
        weights=beta[: len(names)],
        intercept=float(beta[-1]) if intercept else 0.0,
        trained_on=tuple(d.name for d in sets),
    )


@dataclass(frozen=True)
class SetFigures:
    name: str
    questions: int
    hand: dict[str, float]
    plain: dict[str, float]  # the ranker trained on every set, this one included
    held_out: dict[str, float]  # trained without this set


def judge(
    sets: Sequence[FeatureSet],
    method: Method = "pointwise",
    l2: float = 1.0,
    names: Sequence[str] | None = None,
) -> tuple[LinearRanker, list[SetFigures]]:
    """The ranker trained on every set, and each set's hand, plain and held-out figures
    (``names``: the features it reads; default every recorded one)."""
    everything = fit(sets, method, l2, names=names)
    out = []
    for data in sets:
        others = [d for d in sets if d is not data]
        held = fit(others, method, l2, names=names) if others else everything
        out.append(
            SetFigures(
                name=data.name,
                questions=len(data.questions),
                hand=set_figures(data, data.hand),
                plain=set_figures(data, everything.score(data.matrix, data.names)),
                held_out=set_figures(data, held.score(data.matrix, data.names)),
            )
        )
    return everything, out
