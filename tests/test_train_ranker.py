"""A project's own ranker (issue 26 item 4): `eval train-ranker` from labelled questions and a
feedback log of recorded use, judged on held-out folds, installed on the project only when
better than the shipped ranker, and read by recall's `learned` ranker in its place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typer
from neo4j import GraphDatabase
from typer.testing import CliRunner

from metisgraph.api.cli import eval as cli_eval
from metisgraph.api.eval.ranker_data import FeatureSet
from metisgraph.api.eval.ranker_fit import fit, set_figures
from metisgraph.api.eval.train_ranker import held_out_scores, read_feedback, subset
from metisgraph.graph.cypher import query
from metisgraph.graph.ranker import LinearRanker
from metisgraph.graph.settings import Neo4jSettings


def _log(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def test_the_log_makes_each_use_that_worked_a_right_answer_of_its_question(
    tmp_path: Path,
) -> None:
    use = {"project": "p", "question": "build runs out of memory", "memory": "m1"}
    log = _log(tmp_path / "uses.jsonl", [
        {**use, "signal": "cited", "episode": "s1"},  # the step: never its own answer
        {**use, "memory": "m2", "signal": "applied", "success": True},
        {**use, "memory": "m3", "signal": "outcome", "success": False},  # failed: left out
        {**use, "question": "deploy hangs", "error": "Timeout", "signal": "approved",
         "success": False},  # an approval counts whatever the flag
        {**use, "signal": "liked"},
        {"project": "p", "memory": "m1", "signal": "cited"},
        "not json",
    ])  # fmt: skip
    feedback = read_feedback(log)
    assert [(q.project, q.text, q.error, q.relevant, q.exclude) for q in feedback.questions] == [
        ("p", "build runs out of memory", None, frozenset({"m1", "m2"}), frozenset({"s1"})),
        ("p", "deploy hangs", "Timeout", frozenset({"m1"}), frozenset()),
    ]
    assert feedback.failed_uses == 1
    assert [r.split(": ", 1)[1] for r in feedback.refused] == [
        "field 'signal': 'liked': one of cited, outcome, applied, approved",
        "field 'question': a non-empty string is required",
        "invalid JSON: Expecting value: line 1 column 1 (char 0)",
    ]
    assert all(r.startswith(f"{log}:") for r in feedback.refused)


def _opposed(questions: int) -> FeatureSet:
    """Two candidates a question; feature x marks the right one in even questions and the
    wrong one in odd ones: a ranker learns whichever questions it was trained on."""
    rows = [(q, int(right == (q % 2 == 0)), right) for q in range(questions) for right in (1, 0)]
    return FeatureSet(
        name="opposed",
        names=("x",),
        matrix=np.asarray([[float(x)] for _, _, x in rows]),
        query=np.asarray([q for q, _, _ in rows], dtype=np.int64),
        label=np.asarray([y for _, y, _ in rows], dtype=np.int8),
        hand=np.zeros(len(rows)),
        ids=[f"{q}-{x}" for q, _, x in rows],
        questions=[
            {"id": str(q), "relevant": [f"{q}-{int(q % 2 == 0)}"]} for q in range(questions)
        ],
    )


def test_each_fold_is_ranked_by_a_ranker_that_never_saw_it() -> None:
    data = _opposed(12)
    # Folds dealt in turn by 2: each fold holds only even or only odd questions, and is
    # ranked by a ranker trained on the other kind — wrong on every question.
    held = set_figures(data, held_out_scores(data, 2, "pointwise", 1.0, ["x"]))
    assert held["r1"] == 0.0
    # Trained and judged on the even questions alone, the same model is right on each.
    even = subset(data, list(range(0, 12, 2)))
    model = fit([even], "pointwise", 1.0, names=["x"])
    assert set_figures(even, model.score(even.matrix, even.names))["r1"] == 1.0


@pytest.fixture(scope="module")
def cli() -> typer.Typer:
    from metisgraph.api.cli import eval_ranker  # noqa: F401 - registers the commands

    root = typer.Typer()
    root.add_typer(cli_eval.app, name="eval")
    return root


def _driver(settings: Neo4jSettings) -> Any:
    password = settings.password.get_secret_value() if settings.password else ""
    return GraphDatabase.driver(settings.uri or "", auth=("neo4j", password))


@pytest.mark.slow
def test_train_ranker_judges_a_log_made_from_a_set_on_questions_it_was_not_trained_on(
    cli: typer.Typer,
    fixtures_dir: Path,
    neo4j_settings: Neo4jSettings,
    embedder: Any,  # the commands take the session's model (conftest)
    project: str,
    tmp_path: Path,
) -> None:
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    runner = CliRunner(env={"NEO4J_URI": neo4j_settings.uri or "", "NEO4J_PASSWORD": password})
    small = fixtures_dir / "retrieval" / "small"
    namespace = f"{project}-"
    kept = ["eval", "retrieval", str(small), "--keep", "--namespace", namespace, "--json",
            "--no-baselines"]  # fmt: skip
    assert runner.invoke(cli, kept).exit_code == 0
    # The log: each labelled question's right answers, used in a plan that succeeded.
    queries = [json.loads(line) for line in (small / "queries.jsonl").read_text().splitlines()]
    uses = [{"project": q["project"], "question": q["text"], "error": q["error"], "memory": m,
             "signal": "cited", **({"episode": q["exclude"][0]} if q["exclude"] else {})}
            for q in queries for m in q["relevant"]]  # fmt: skip
    log = _log(tmp_path / "uses.jsonl", [*uses, {**uses[0], "signal": "outcome", "success": False}])
    args = ["eval", "train-ranker", "--feedback", str(log), "--namespace", namespace,
            "--folds", "2", "--json"]  # fmt: skip
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["project"] == f"{namespace}shop" and report["failed"] == 0
    assert (report["questions"], report["from_feedback"], report["labelled"]) == (4, 4, 0)
    assert report["folds"] == 2 and report["feedback"] == {"failed_uses": 1, "refused": 0}
    for ranked_by in ("hand", "shipped", "held_out"):
        assert 0.0 <= report[ranked_by]["r1"] <= report[ranked_by]["r5"] <= 1.0
    assert report["better"] == (
        report["held_out"]["mrr"] > report["shipped"]["mrr"]
        and report["held_out"]["r5"] >= report["shipped"]["r5"]
    )
    with _driver(neo4j_settings) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (p:Project {name: $p}) RETURN p.ranker AS r", p=report["project"]
        )
    assert (records[0]["r"] is not None) == report["installed"] == report["better"]


RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
RECALL = """
query($project: String!, $query: String!, $preset: String!) {
  recall(project: $project, query: $query, k: 4, preset: $preset) {
    hits { episode { id } why { features { feature contribution } } }
  }
}"""


def test_recall_learned_reads_the_ranker_installed_on_its_project(
    gql: Any, project: str, neo4j_settings: Neo4jSettings
) -> None:
    texts = [
        "The nightly build failed: the Gradle daemon ran out of memory",
        "Raised the Gradle daemon heap to 4g; the nightly build passes",
        "The build cache was cleared after the Gradle upgrade",
        "Renamed the staging bucket in the deploy script",
    ]
    inputs = [{"project": project, "id": f"m{i}", "summary": t} for i, t in enumerate(texts)]
    assert gql(RECORD_MANY, {"inputs": inputs})["data"]["recordEpisodes"]["written"] == 4
    ask = {"project": project, "query": "gradle daemon out of memory in the nightly build"}
    asked = gql(RECALL, {**ask, "preset": "hand"})["data"]["recall"]["hits"]
    hand = [h["episode"]["id"] for h in asked]
    # The project's own ranker: the hand order read backwards (one feature, weight -1).
    backwards = LinearRanker("test-backwards", ("hand.rank",), np.zeros(1), np.ones(1),
                             -np.ones(1), 0.0, (project,))  # fmt: skip
    with _driver(neo4j_settings) as driver:
        driver.execute_query(
            query("install_ranker").text,
            project=project,
            ranker=json.dumps(backwards.as_json()),
            version=backwards.version,
        )
    hits = gql(RECALL, {**ask, "preset": "learned"})["data"]["recall"]["hits"]
    assert [h["episode"]["id"] for h in hits] == hand[::-1] and len(hand) == 4
    assert all({t["feature"] for t in h["why"]["features"]} == {"hand.rank"} for h in hits)
