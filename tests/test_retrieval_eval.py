"""`metisgraph eval retrieval` against the real Neo4j and model, on a small set written for
these tests: ingest through the normal path, recall as the API does, the own record excluded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from neo4j import GraphDatabase
from typer.testing import CliRunner, Result

from metisgraph.api.cli import eval as cli_eval
from metisgraph.api.eval.retrieval import metrics
from metisgraph.graph.settings import Neo4jSettings


@pytest.fixture(scope="module")
def cli() -> typer.Typer:
    root = typer.Typer()
    root.add_typer(cli_eval.app, name="eval")
    return root


@pytest.fixture
def runner(neo4j_settings: Neo4jSettings, embedder: Any) -> CliRunner:
    # embedder: the commands take the session's model (conftest), not a model of their own
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    env = {"NEO4J_URI": neo4j_settings.uri or "", "NEO4J_PASSWORD": password, "COLUMNS": "300"}
    return CliRunner(env=env)


def _set(fixtures_dir: Path, name: str) -> str:
    return str(fixtures_dir / "retrieval" / name)


def test_metrics_of_one_ranking() -> None:
    got = metrics(["a", "x", "b", "y"], frozenset({"b", "z"}))
    assert (got["r1"], got["r5"], got["r10"]) == (0.0, 1.0, 1.0)
    assert got["mrr"] == pytest.approx(1 / 3)
    # One of two relevant found at rank 3: (1 / log2 4) / (1 + 1 / log2 3).
    assert got["ndcg"] == pytest.approx(0.5 / (1 + 1 / 1.584962500721156))
    assert metrics([], frozenset({"a"})) == {
        "r1": 0.0,
        "r5": 0.0,
        "r10": 0.0,
        "mrr": 0.0,
        "ndcg": 0.0,
    }


@pytest.mark.slow
@pytest.mark.long  # a whole evaluation run: 6-7 s
def test_eval_retrieval_prints_the_figures_as_json(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path, tmp_path: Path
) -> None:
    rankings = tmp_path / "rankings.jsonl"
    args = ["eval", "retrieval", _set(fixtures_dir, "small"), "--json", "--rankings", rankings]
    result = runner.invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    # Each query's ranked ids, in query order, with the excluded record never among them.
    ranked = [json.loads(line) for line in rankings.read_text().splitlines()]
    assert [r["id"] for r in ranked] == ["q1", "q2", "q3", "q4"]
    assert "r8" not in ranked[3]["ranked"] and "r2" in ranked[3]["ranked"][:5]
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report) >= {"n", "recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10"}
    assert report["n"] == 4
    assert set(report["latency_ms"]) == {"p50", "p95"}
    assert 0 < report["latency_ms"]["p50"] <= report["latency_ms"]["p95"]
    # Paraphrases and a shared stack frame: every right answer among the first five, even
    # where the question is a copy of a record that is excluded (q1, q4).
    assert report["recall@5"] == 1.0
    assert report["recall@1"] <= report["recall@5"] <= report["recall@10"]
    assert 0.5 <= report["mrr@10"] <= 1.0


EPISODES_UNDER = "MATCH (e:Episode) WHERE e.project STARTS WITH $prefix RETURN count(e) AS n"
# Every node of any label whose project (or name, for Project nodes) has the prefix.
NODES_UNDER = (
    "MATCH (n) WHERE n.project STARTS WITH $prefix "
    "OR (n:Project AND n.name STARTS WITH $prefix) RETURN count(n) AS n"
)


def _count(settings: Neo4jSettings, cypher: str, prefix: str) -> int:
    password = settings.password.get_secret_value() if settings.password else ""
    with GraphDatabase.driver(settings.uri or "", auth=("neo4j", password)) as driver:
        records, _, _ = driver.execute_query(cypher, prefix=prefix)
    return int(records[0]["n"])


@pytest.mark.slow
def test_eval_retrieval_keeps_nothing_unless_asked(
    cli: typer.Typer,
    runner: CliRunner,
    fixtures_dir: Path,
    neo4j_settings: Neo4jSettings,
    project: str,
) -> None:
    namespace = f"{project}-"
    args = ["eval", "retrieval", _set(fixtures_dir, "small"), "--json", "--namespace", namespace]
    assert runner.invoke(cli, args).exit_code == 0
    assert _count(neo4j_settings, EPISODES_UNDER, namespace) == 0
    assert runner.invoke(cli, [*args, "--keep"]).exit_code == 0
    assert _count(neo4j_settings, EPISODES_UNDER, namespace) == 8


def test_eval_retrieval_names_the_bad_line(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path
) -> None:
    result = runner.invoke(cli, ["eval", "retrieval", _set(fixtures_dir, "bad")])
    assert result.exit_code == 1
    assert "queries.jsonl:2: field 'relevant': expected a list of ids" in result.stderr


def test_every_bad_query_line_is_named_with_its_field(tmp_path: Path) -> None:
    from metisgraph.api.eval.retrieval import RetrievalSetError, load_queries

    lines = [
        {"id": "q1", "project": "p", "text": "fine", "relevant": ["a"]},
        {"id": "q2", "project": "p", "text": "one id as a string", "relevant": "ep-1"},
        {"id": "q3", "project": "p", "text": None, "error": None, "relevant": ["a"]},
        {"id": "q4", "project": "p", "text": "x", "error": 5, "relevant": ["a"]},
        {"id": "q5", "project": "p", "text": "x", "relevant": []},
    ]
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "{cut\n")
    with pytest.raises(RetrievalSetError) as raised:
        load_queries(path)
    message = str(raised.value)
    assert f"{path}:2: field 'relevant': expected a list of ids, got 'ep-1'" in message
    assert f"{path}:3: field 'text': a query needs a text or an error" in message
    assert f"{path}:4: field 'error': expected a non-empty string" in message
    assert f"{path}:5: field 'relevant': expected at least one id" in message
    assert f"{path}:6: invalid JSON" in message
    assert ":1:" not in message


def test_eval_retrieval_refuses_a_folder_without_the_set(
    cli: typer.Typer, runner: CliRunner, tmp_path: Path
) -> None:
    result = runner.invoke(cli, ["eval", "retrieval", str(tmp_path)])
    assert result.exit_code == 1
    assert "corpus.jsonl: missing" in result.stderr


@pytest.fixture
def run_extended(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path, tmp_path: Path, project: str
) -> Callable[[list[dict[str, Any]], list[dict[str, Any]]], tuple[Result, str]]:
    """Run the small set plus extra corpus records and queries under a namespace of the
    test's own; the result and the namespace."""

    def run(corpus: list[dict[str, Any]], queries: list[dict[str, Any]]) -> tuple[Result, str]:
        small = Path(_set(fixtures_dir, "small"))
        folder = tmp_path / "set"
        folder.mkdir()
        for name, extra in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
            lines = "".join(json.dumps(r) + "\n" for r in extra)
            (folder / name).write_text((small / name).read_text() + lines)
        namespace = f"{project}-"
        args = ["eval", "retrieval", str(folder), "--json", "--namespace", namespace]
        return runner.invoke(cli, args), namespace

    return run


@pytest.mark.slow
def test_eval_retrieval_removes_every_project_it_created(
    run_extended: Any, neo4j_settings: Neo4jSettings
) -> None:
    """Corpus projects no question asks about are removed too, not only the asked ones."""
    unasked = [
        {"id": f"ops{n}", "project": "ops", "kind": "bug_report", "title": f"Disk alert {n}",
         "text": f"The disk of build agent {n} filled up with old layers", "error": None,
         "code": None, "created_at": "2025-03-01T10:00:00Z", "tags": []}
        for n in range(2)
    ]  # fmt: skip
    result, namespace = run_extended(unasked, [])
    assert result.exit_code == 0, result.output
    assert _count(neo4j_settings, NODES_UNDER, namespace) == 0


@pytest.mark.slow
def test_eval_retrieval_goes_on_past_a_question_that_fails(
    run_extended: Any, neo4j_settings: Neo4jSettings
) -> None:
    """A question recall refuses (one over the length limit) is counted, named and scored as
    a miss; the others are asked and the namespace is removed all the same."""
    from metisgraph.ingest.question import MAX_QUESTION_CHARS

    huge = {"id": "q-huge", "project": "shop", "text": "x " * MAX_QUESTION_CHARS,
            "relevant": ["r1"]}  # fmt: skip
    result, namespace = run_extended([], [huge])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["n"] == 5 and report["failed"] == 1
    assert report["failures"][0]["id"] == "q-huge"
    assert "query: at most" in report["failures"][0]["error"]
    assert report["recall@5"] == pytest.approx(4 / 5)  # the failed question counts as a miss
    assert "q-huge" in result.stderr
    assert _count(neo4j_settings, NODES_UNDER, namespace) == 0


@pytest.mark.slow(12)
@pytest.mark.long  # a whole evaluation run: 10-14 s
def test_eval_retrieval_counts_abstentions_on_off_topic_questions(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path
) -> None:
    off_topic = fixtures_dir / "retrieval" / "offtopic" / "questions.jsonl"
    args = ["eval", "retrieval", _set(fixtures_dir, "small"), "--json", "--off-topic", off_topic]
    result = runner.invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    abstention = report["abstention"]
    # Every answerable question answered; the off-topic ones (231, written for this) mostly
    # abstained, each asked once, counted by the file it came from.
    assert abstention["answerable"] == {"n": 4, "abstained": 0, "rate": 0.0}
    off = abstention["off_topic"]
    assert off["n"] == 231 and off["by_source"]["questions"]["n"] == 231
    assert off["rate"] >= 0.8 and off["failed"] == 0
    assert set(abstention["thresholds"]) == {"shop"}
    # A fixed threshold for every question instead of the projects' own.
    fixed = runner.invoke(cli, [str(a) for a in [*args[:4], "--abstain-below", "0.99"]])
    assert fixed.exit_code == 0, fixed.output
    again = json.loads(fixed.stdout.strip().splitlines()[-1])["abstention"]
    # All but the question sharing a stack frame with its answer (strong evidence, q4).
    assert again["thresholds"] == "request" and again["answerable"]["abstained"] == 3


def test_eval_retrieval_scores_the_baselines_beside_the_product_and_records_features(
    cli: typer.Typer, runner: CliRunner, fixtures_dir: Path, tmp_path: Path
) -> None:
    from metisgraph.api.cli import eval_ranker  # noqa: F401 - registers `eval ranker`
    from metisgraph.api.eval.ranker_data import read_features
    from metisgraph.graph.rank_features import FEATURES

    features = tmp_path / "small.npz"
    args = ["eval", "retrieval", _set(fixtures_dir, "small"), "--json", "--features", features]
    result = runner.invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report["baselines"]) == {"bm25", "dense", "rrf"}
    for figures in report["baselines"].values():
        assert set(figures) == {"recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10"}
        assert 0 < figures["recall@10"] <= 1
    # The paraphrased question (q2) has no word of its answer: BM25 alone misses it first.
    assert report["baselines"]["bm25"]["recall@1"] < report["recall@1"]
    recorded = read_features(features)
    assert recorded.names == FEATURES and recorded.name == "small"
    assert [q["id"] for q in recorded.questions] == ["q1", "q2", "q3", "q4"]
    assert recorded.matrix.shape == (len(recorded.ids), len(FEATURES))
    # Every question's right answer is in its shortlist, labelled, the excluded one never.
    assert int(recorded.label.sum()) == 4
    assert "r8" not in [recorded.ids[r] for r in recorded.rows_of(3)]
    order = ["eval", "ranker", str(features), "--json"]
    judged = json.loads(runner.invoke(cli, order).stdout.strip().splitlines()[-1])
    # The hand order recorded gives the product's own figure (same run, same shortlists).
    assert judged["sets"][0]["hand"]["r5"] == pytest.approx(report["recall@5"], abs=1e-4)
