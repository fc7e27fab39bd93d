"""Ordering the shortlist with the learned ranker (``ranker: learned``), and keeping the
shortlist's features when asked (``features: true``, what `eval retrieval --features`
records to train a ranker on).

The shortlist is the hand-set fusion's best k x 3, expanded in recall's one round trip:
every feature is computed from what that trip and the channels returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from metisgraph.graph.fusion import Candidate
from metisgraph.graph.rank_features import FeatureTable, candidate_features
from metisgraph.graph.ranker import LinearRanker, shipped_ranker
from metisgraph.graph.recall_request import RecallRequest

if TYPE_CHECKING:
    from metisgraph.graph.recall_hit import Hit

__all__ = ["rerank"]


def rerank(
    hits: Sequence[Hit], answers: Mapping[str, Sequence[Candidate]], req: RecallRequest
) -> FeatureTable | None:
    """The hits (in hand order) scored by the learned ranker when the settings say so —
    each hit's ``score`` replaced and its ``features`` set to each feature's contribution —
    and their features when asked for; None when neither is."""
    learned = req.settings.ranker == "learned"
    if not hits or not (learned or req.settings.features):
        return None
    table = candidate_features(hits, answers, req)
    if learned:
        # The asked project's own ranker when one is installed (a question asked in several
        # projects: the first that has one), else the shipped one.
        own: list[LinearRanker] = [req.rankers[p] for p in req.projects if p in req.rankers]
        ranker = own[0] if own else shipped_ranker()
        scores = ranker.score(table.matrix)
        terms = ranker.contributions(table.matrix)
        names = ranker.named()
        for hit, score, row in zip(hits, scores, terms, strict=True):
            hit.score = float(score)
            hit.features = {n: float(v) for n, v in zip(names, row, strict=True) if v}
    return table
