"""The learned ranker (issue 26): candidate features, the linear model read from its weights
file, training and leave-one-set-out judging, and recall ordered by it (preset learned)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from metisgraph.api.eval.ranker_data import FeatureSet
from metisgraph.api.eval.ranker_fit import fit, judge
from metisgraph.graph import RecallRequest
from metisgraph.graph.fusion import Candidate
from metisgraph.graph.rank_features import FEATURES, candidate_features
from metisgraph.graph.ranker import LinearRanker, RankerFileError, shipped_ranker
from metisgraph.graph.recall import Hit


def _hit(ident: str, score: float, **kw: Any) -> Hit:
    episode = {"project": "p", "id": ident, "tags": kw.pop("tags", []), **kw.pop("episode", {})}
    return Hit(episode=episode, task=kw.pop("task", None), score=score, relevance=score,
               channels=kw.pop("channels", {}), ranks=kw.pop("ranks", {}), contributions={},
               trust={"confidence": 1.0, "review": 1.0, "decay": 1.0}, **kw)  # fmt: skip


def test_graph_evidence_is_read_from_what_recall_fetched() -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    error = {"key": "abc", "family": "f1", "frames": ["org.acme.Plot.draw"]}
    kin = {"key": "other", "family": "f1", "frames": ["org.acme.Axis.paint"]}
    hits = [
        _hit("a", 3.0, errors=[error], task={"id": "t1"},
             episode={"step": 1, "created_at": now}, channels={"vector": 0.9}, ranks={"vector": 1}),
        _hit("b", 2.0, errors=[kin], task={"id": "t1"},
             episode={"step": 2, "created_at": now - timedelta(days=10)}),
        _hit("c", 1.0, episode={"created_at": now - timedelta(days=1)},
             channels={"vector": 0.5}, ranks={"vector": 2}),
    ]  # fmt: skip
    answers = {"vector": [Candidate(("p", "a"), 0.9), Candidate(("p", "c"), 0.5)]}
    req = RecallRequest(projects=("p",), text="q", error_keys=("abc",), symbols=("Plot.draw",))
    table = candidate_features(hits, answers, req)
    assert table.matrix.shape == (3, len(FEATURES))
    a, b, c = (table.row(i) for i in range(3))
    assert (a["question.errors"], b["question.errors"]) == (1.0, 0.0)  # its own error key
    assert a["question.symbols"] > 0 == c["question.symbols"]  # a stack frame names it
    # b shares a's error family, not its key nor frames; both of task t1, a step apart.
    assert (b["top.errors"], b["top.families"], b["top.symbols"]) == (0.0, 0.5, 0.0)
    assert a["top.task"] == b["top.task"] == 0.5 and c["top.task"] == 0.0
    assert a["task.near_top"] == b["task.near_top"] == 0.5 and c["task.near_top"] == 0.0
    assert b["recency"] > c["recency"] > a["recency"] == 0.0
    # Spread over the shortlist's links from the hand order; hops from the question's error.
    assert (a["spread.shortlist"], b["spread.shortlist"], c["spread.shortlist"]) == (
        pytest.approx(0.2),
        pytest.approx(0.4),
        0.0,
    )
    assert (a["question.hops"], b["question.hops"], c["question.hops"]) == (1.0, 0.5, 0.0)
    # A ranked channel: standardised over its own answers, an absent candidate at its floor.
    assert (a["vector.score"], b["vector.score"], c["vector.score"]) == pytest.approx((1, -1, -1))
    assert (a["vector.rank"], b["vector.rank"], c["vector.rank"]) == (1.0, 0.0, 0.5)
    assert a["hand.rank"] == 1.0 and a["hand.score"] > b["hand.score"] > c["hand.score"]


def test_propagation_reaches_what_the_question_and_the_top_hits_are_linked_to() -> None:
    # a: the channels' best; b: no channel found it high, shares a's error; c: linked to
    # nothing; d: names the question's symbol (through a file of its snippet); e: shares
    # only d's tool, two links from the question.
    snippet = {"symbols": [], "files": ["src/acme/Parser.java"]}
    hits = [
        _hit("a", 3.0, errors=[{"key": "k1"}], ranks={"vector": 1, "fulltext": 1}),
        _hit("b", 2.0, errors=[{"key": "k1"}], ranks={"vector": 20}),
        _hit("c", 1.9, ranks={"vector": 15}),
        _hit("d", 1.8, snippets=[snippet], tools=[{"name": "mvn"}], ranks={"vector": 25}),
        _hit("e", 1.7, tools=[{"name": "mvn"}], ranks={"vector": 30}),
    ]
    req = RecallRequest(projects=("p",), text="q", symbols=("Parser.java",))
    table = candidate_features(hits, {}, req)
    score = {k: table.row(i)["ppr.score"] for i, k in enumerate("abcde")}
    received = {k: table.row(i)["ppr.received"] for i, k in enumerate("abcde")}
    assert received["c"] == 0.0 < received["e"] < received["d"]
    assert received["b"] > 0.0 and score["b"] > score["c"]
    assert score["d"] > score["b"]  # the question's own entity is a start of its own
    assert score["e"] > score["c"]  # two hops from the question beat no link at all
    # Without the question's entity, d holds only what its own channel rank gives it.
    alone = candidate_features(hits, {}, RecallRequest(projects=("p",), text="q"))
    assert alone.row(3)["ppr.score"] < score["d"] / 4 and alone.row(0)["ppr.score"] == 1.0


def test_the_score_is_the_sum_of_the_terms_shown() -> None:
    rng = np.random.default_rng(7)
    names = (*FEATURES[:5], "not.computed")
    ranker = LinearRanker(
        version="t",
        features=names,
        mean=rng.normal(size=6),
        scale=np.abs(rng.normal(size=6)) + 0.5,
        weights=rng.normal(size=6),
        intercept=0.25,
    )
    matrix = rng.normal(size=(100, len(FEATURES)))
    scores, terms = ranker.score(matrix), ranker.contributions(matrix)
    assert scores.shape == (100,) and terms.shape == (100, 5)  # the unknown one adds nothing
    assert np.allclose(scores, terms.sum(axis=1) + 0.25)
    expected = (matrix[:, :5] - ranker.mean[:5]) / ranker.scale[:5] @ ranker.weights[:5] + 0.25
    assert np.allclose(scores, expected)
    assert ranker.named() == list(FEATURES[:5])
    again = LinearRanker.from_json(ranker.as_json())
    assert np.allclose(again.score(matrix), scores, atol=1e-4)


def test_a_weights_file_of_another_layout_is_refused_by_field() -> None:
    data = shipped_ranker().as_json()
    with pytest.raises(RankerFileError, match="'format'"):
        LinearRanker.from_json({**data, "format": 99})
    with pytest.raises(RankerFileError, match="'weights'"):
        LinearRanker.from_json({**data, "weights": [1.0]})


def test_the_shipped_ranker_reads_what_recall_computes() -> None:
    shipped = shipped_ranker()
    assert set(shipped.features) <= set(FEATURES) and shipped.named() == list(shipped.features)
    assert len(shipped.trained_on) >= 3 and np.all(np.isfinite(shipped.weights))


def _synthetic(name: str, rng: np.random.Generator, questions: int = 40) -> FeatureSet:
    """Shortlists of ten where one feature marks the right answer and hand order is noise."""
    matrix = rng.normal(size=(questions * 10, len(FEATURES)))
    right = rng.integers(10, size=questions) + 10 * np.arange(questions)
    label = np.zeros(questions * 10, dtype=np.int8)
    label[right] = 1
    matrix[:, FEATURES.index("top.errors")] = label * (1.0 + rng.normal(0, 0.2, size=len(label)))
    ids = [f"{name}-{i}" for i in range(questions * 10)]
    return FeatureSet(
        name=name,
        names=FEATURES,
        matrix=matrix,
        query=np.repeat(np.arange(questions), 10),
        label=label,
        hand=rng.normal(size=questions * 10),
        ids=ids,
        questions=[{"id": f"q{q}", "relevant": [ids[r]]} for q, r in enumerate(right)],
    )


@pytest.mark.parametrize("method", ["pairwise", "pointwise"])
def test_a_ranker_trained_without_a_set_carries_to_it(method: str) -> None:
    rng = np.random.default_rng(3)
    sets = [_synthetic(s, rng) for s in ("one", "two", "three")]
    trained, figures = judge(sets, method)  # type: ignore[arg-type]
    assert trained.trained_on == ("one", "two", "three")
    best = max(zip(trained.features, trained.weights, strict=True), key=lambda kv: abs(kv[1]))
    assert best[0] == "top.errors" and best[1] > 0
    for f in figures:
        assert f.held_out["r1"] >= 0.9 > f.hand["r1"]
        assert f.plain["mrr"] >= f.held_out["mrr"] - 0.05
    # Every set weighs the same: one set ten times the others does not outweigh them.
    assert fit([sets[0], sets[1]]).trained_on == ("one", "two")


RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
RECALL = """
query($project: String!, $query: String!, $preset: String!) {
  recall(project: $project, query: $query, k: 3, preset: $preset) {
    hits {
      score episode { id }
      why { relevance trustAdjustment features { feature contribution } }
    }
  }
}"""


def test_recall_under_the_learned_preset_is_ordered_by_the_ranker_and_says_why(
    gql: Any, project: str
) -> None:
    inputs = [
        {"project": project, "id": f"m{i}", "summary": text, "outcome": "success"}
        for i, text in enumerate([
            "The nightly build failed: the Gradle daemon ran out of memory",
            "Raised the Gradle daemon heap to 4g; the nightly build passes",
            "Renamed the staging bucket in the deploy script",
            "The build cache was cleared after the Gradle upgrade",
        ])
    ]  # fmt: skip
    assert gql(RECORD_MANY, {"inputs": inputs})["data"]["recordEpisodes"]["written"] == 4
    ask = {"project": project, "query": "gradle daemon out of memory in the nightly build"}
    learned = gql(RECALL, {**ask, "preset": "learned"})["data"]["recall"]["hits"]
    hand = gql(RECALL, {**ask, "preset": "balanced"})["data"]["recall"]["hits"]
    assert learned and all(h["why"]["features"] == [] for h in hand)
    intercept = shipped_ranker().intercept
    for hit in learned:
        terms = {t["feature"]: t["contribution"] for t in hit["why"]["features"]}
        assert terms and set(terms) <= set(FEATURES)
        assert hit["score"] == pytest.approx(sum(terms.values()) + intercept, abs=1e-6)
        trust = sum(v for k, v in terms.items() if k.startswith("trust."))
        assert hit["why"]["trustAdjustment"] == pytest.approx(trust)
    scores = [h["score"] for h in learned]
    assert scores == sorted(scores, reverse=True)
