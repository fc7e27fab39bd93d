"""Feedback that moves trust: outcome reports, the Beta posterior, independent confirmations,
idempotency, the bridge read as feedback — through GraphQL, the real Neo4j and the model.

The posterior is Beta(prior mean x strength + weighted successes, (1 - prior mean) x
strength + weighted failures); an executed memory's prior is 0.8 worth 4 reports
(graph/confidence.py). The n-th report of one outcome from one context (project, task,
agent) counts 0.5 ** (n - 1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from metisgraph.graph import CONFIDENCE, ConfidenceSettings, Posterior, posterior

RECORD = """
mutation($inputs: [EpisodeInput!]!) {
  recordEpisodes(inputs: $inputs) { refused results { id status errors { field message } } }
}"""
TASK = "mutation($input: TaskInput!) { recordTask(input: $input) { id status } }"
OUTCOME = """
mutation($p: String!, $id: String!, $ok: Boolean!, $in: String, $key: String, $note: String) {
  recordOutcome(project: $p, memoryId: $id, success: $ok, appliedIn: $in, idempotencyKey: $key,
                note: $note) {
    memoryId kind uses successes failures confidence priorConfidence weightedSuccesses
    weightedFailures independentConfirmations lastUsedAt duplicate
  }
}"""
RECALL = """
query($p: String!, $q: String!) {
  recall(project: $p, query: $q, k: 5) {
    hits { score episode { id confidence }
           why { trust { factor value }
                 evidence { successes failures independentConfirmations posteriorMean } } }
  }
}"""


# --- the arithmetic, without a database ------------------------------------------------


def test_repeats_from_one_context_count_less_than_independent_reports() -> None:
    assert CONFIDENCE.weight(1) == 1.0
    assert CONFIDENCE.weight(3) == pytest.approx(1.75)  # 1 + 0.5 + 0.25
    assert CONFIDENCE.weight(50) < 2.0  # repeats never add up to two independent reports


def test_the_posterior_of_given_reports() -> None:
    executed = {"source": "executed", "prior_confidence": 0.8, "prior_strength": 4.0}
    assert posterior(executed).mean == pytest.approx(0.8)
    two_and_one = posterior({**executed, "evidence_for": 2.0, "evidence_against": 1.0})
    assert two_and_one.mean == pytest.approx(5.2 / 7)
    # Unknown sources get the weakest known prior; a stored prior wins over the source's.
    assert posterior({"source": "rumour"}).mean == pytest.approx(0.5)
    assert posterior({"source": "user", "prior_confidence": 0.3}).mean == pytest.approx(0.3)
    # Ranking is cautious: more evidence at the same mean ranks higher.
    assert Posterior(8, 2).cautious(1.0) > Posterior(0.8, 0.2).cautious(1.0)


def test_settings_refuse_what_would_break_the_arithmetic() -> None:
    with pytest.raises(ValueError, match="repeat_weight"):
        ConfidenceSettings(repeat_weight=1.0)


# --- through the service -----------------------------------------------------------------


def _record(gql: Any, inputs: list[dict[str, Any]]) -> None:
    body = gql(RECORD, {"inputs": inputs})
    assert "errors" not in body and body["data"]["recordEpisodes"]["refused"] == 0, body


def _report(gql: Any, project: str, memory: str, ok: bool, **more: Any) -> dict[str, Any]:
    variables = {"p": project, "id": memory, "ok": ok, **more}
    body = gql(OUTCOME, variables)
    assert "errors" not in body, body
    stats: dict[str, Any] = body["data"]["recordOutcome"]
    return stats


def _applications(gql: Any, project: str, tasks: int, agent: str = "agent-a") -> list[str]:
    """One task per application, each with the episode the memory was applied in."""
    ids = []
    for n in range(tasks):
        task = f"task-{n}"
        body = gql(TASK, {"input": {"project": project, "id": task, "goal": f"job {n}",
                                    "agent": agent}})  # fmt: skip
        assert "errors" not in body, body
        _record(gql, [{"project": project, "id": f"applied-{n}", "taskId": task,
                       "summary": f"Applied what memory said, job {n}"}])  # fmt: skip
        ids.append(f"applied-{n}")
    return ids


def _recall(gql: Any, project: str, question: str) -> list[dict[str, Any]]:
    body = gql(RECALL, {"p": project, "q": question})
    assert "errors" not in body, body
    hits: list[dict[str, Any]] = body["data"]["recall"]["hits"]
    return hits


def _rank(hits: list[dict[str, Any]], memory: str) -> int:
    return [h["episode"]["id"] for h in hits].index(memory)


@pytest.mark.slow
def test_posterior_after_given_outcomes(gql: Any, project: str) -> None:
    _record(gql, [{"project": project, "id": "fix", "summary": "Raised the JVM heap to 4g",
                   "source": "executed", "outcome": "success"}])  # fmt: skip
    applied = _applications(gql, project, 3)
    _report(gql, project, "fix", True, **{"in": applied[0]})
    _report(gql, project, "fix", True, **{"in": applied[1]})
    stats = _report(gql, project, "fix", False, **{"in": applied[2]})
    assert (stats["kind"], stats["uses"], stats["successes"], stats["failures"]) == (
        "Episode", 3, 2, 1)  # fmt: skip
    assert stats["priorConfidence"] == pytest.approx(0.8)
    assert stats["confidence"] == pytest.approx((3.2 + 2) / (4 + 3))  # 0.743
    assert stats["independentConfirmations"] == 2 and stats["lastUsedAt"]
    # Two more successes from the first task are repeats: 1 + 0.5 + 0.25 from it.
    _report(gql, project, "fix", True, **{"in": applied[0]})
    stats = _report(gql, project, "fix", True, **{"in": applied[0]})
    assert stats["weightedSuccesses"] == pytest.approx(1.75 + 1.0)
    assert stats["confidence"] == pytest.approx((3.2 + 2.75) / (4 + 2.75 + 1))  # 0.768
    assert stats["independentConfirmations"] == 2


@pytest.mark.slow
def test_the_same_report_sent_twice_counts_once(gql: Any, project: str) -> None:
    _record(gql, [{"project": project, "id": "tip", "summary": "Clear the pip cache first"}])
    first = _report(gql, project, "tip", True, key="run-7/step-3", note="worked")
    again = _report(gql, project, "tip", True, key="run-7/step-3", note="worked")
    assert (first["uses"], first["duplicate"]) == (1, False)
    assert (again["uses"], again["duplicate"], again["confidence"]) == (
        1, True, first["confidence"])  # fmt: skip
    other = gql(OUTCOME, {"p": project, "id": "tip", "ok": False, "key": "run-7/step-3"})
    assert "idempotencyKey 'run-7/step-3' was used for another report" in str(other["errors"])
    assert _report(gql, project, "tip", True, key="run-8/step-1")["uses"] == 2


def test_idempotency_keys_belong_to_their_project(gql: Any, project: str) -> None:
    elsewhere = project + "-b"
    for p in (project, elsewhere):
        _record(gql, [{"project": p, "id": "tip", "summary": "Clear the pip cache first"}])
        assert _report(gql, p, "tip", True, key="shared-key")["duplicate"] is False


def test_applied_in_must_name_an_episode(gql: Any, project: str) -> None:
    _record(gql, [{"project": project, "id": "tip", "summary": "Clear the pip cache first"}])
    body = gql(OUTCOME, {"p": project, "id": "tip", "ok": True, "in": "nowhere"})
    assert "appliedIn: no episode 'nowhere'" in body["errors"][0]["message"]
    body = gql(OUTCOME, {"p": project, "id": "tip", "ok": True, "in": "tip"})
    assert "appliedIn: a memory is not applied in itself" in body["errors"][0]["message"]


@pytest.mark.slow
@pytest.mark.anyio
async def test_applied_in_is_linked(gql: Any, store: Any, project: str) -> None:
    _record(gql, [{"project": project, "id": "tip", "summary": "Clear the pip cache first"}])
    applied = _applications(gql, project, 1)
    _report(gql, project, "tip", False, **{"in": applied[0]})
    rows = await store.run_text(
        """MATCH (:Episode {project: $p, id: 'tip'})-[a:APPLIED_IN]->(e:Episode {project: $p})
           RETURN e.id AS id, a.success AS success""",
        {"p": project},
        read=True,
    )
    assert rows == [{"id": "applied-0", "success": False}]


# --- ranking: the scenarios of issue 10, with the real model ----------------------------

QUESTION = "the worker's memory keeps growing for days until it is killed, how was it fixed?"
# Two fixes of the same symptom, as relevant as each other; and memories of other things,
# so that relevance is scored against a spread of candidates, as in a real project.
LEAK_FIXES = [
    {"id": "restart", "source": "executed", "outcome": "success",
     "summary": "Worker memory kept growing for days until the worker was killed; fixed by "
                "restarting the worker every hour"},
    {"id": "free", "source": "executed", "outcome": "success",
     "summary": "Worker memory kept growing for days until the worker was killed; fixed by "
                "freeing the parse buffers in parse_data"},
]  # fmt: skip


OTHER_MEMORIES = [
    "Report dates were off by one hour after the DST change; stored timestamps in UTC",
    "The Docker build failed: pg_config not found; installed libpq-dev",
    "A test failed now and then on CI; it depended on dict order",
    "Fixed the install command in the README",
    "The API returned 502 under load; raised the gunicorn worker timeout",
    "Login redirected in a loop; the session cookie lacked SameSite=None",
    "CSV export broke on names with commas; quoted every field",
    "Migrations ran twice on deploy; took an advisory lock first",
    "The nightly job ran out of disk; rotated the logs daily",
    "mypy complained about Optional; narrowed the type before the call",
    "The worker could not reach Redis after the network change; fixed the host name",
    "Parsing a huge JSON file was slow; streamed it with ijson",
    "Uploads over 10 MB were rejected; raised client_max_body_size in nginx",
    "Cron emails stopped; the mail relay password had expired",
]


@pytest.fixture
def leak_project(gql: Any, project: str) -> str:
    others = [{"id": f"other-{n}", "summary": text} for n, text in enumerate(OTHER_MEMORIES)]
    _record(gql, [{"project": project, **memory} for memory in LEAK_FIXES + others])
    return project


def _fixes_in_order(hits: list[dict[str, Any]]) -> tuple[str, str]:
    first, second = sorted(("restart", "free"), key=lambda memory: _rank(hits, memory))
    return first, second


@pytest.mark.slow
def test_three_failures_move_the_top_hit_below_a_confirmed_alternative(
    gql: Any, leak_project: str
) -> None:
    p = leak_project
    top, other = _fixes_in_order(_recall(gql, p, QUESTION))
    applied = _applications(gql, p, 4)
    _report(gql, p, other, True, **{"in": applied[0]})
    for episode in applied[1:]:
        _report(gql, p, top, False, **{"in": episode})
    after = _recall(gql, p, QUESTION)
    assert _fixes_in_order(after) == (other, top)
    demoted = after[_rank(after, top)]
    assert demoted["episode"]["confidence"] == pytest.approx(3.2 / 7)  # 0.46: three failures
    factors = {t["factor"]: t["value"] for t in demoted["why"]["trust"]}
    assert factors["confidence"] < 1.0  # below a coin flip's weight: it lowers the hit


@pytest.mark.slow
def test_one_failure_does_not_flip_a_well_confirmed_memory(gql: Any, leak_project: str) -> None:
    p = leak_project
    top, other = _fixes_in_order(_recall(gql, p, QUESTION))
    applied = _applications(gql, p, 5)
    for episode in applied[:4]:
        _report(gql, p, top, True, **{"in": episode})
    stats = _report(gql, p, top, False, **{"in": applied[4]})
    assert stats["confidence"] == pytest.approx(7.2 / 9)  # 0.8: where its prior started
    hits = _recall(gql, p, QUESTION)
    assert _fixes_in_order(hits) == (top, other)
    why = hits[_rank(hits, top)]["why"]["evidence"]
    assert (why["successes"], why["failures"], why["independentConfirmations"]) == (4, 1, 4)


@pytest.mark.slow
def test_confirmations_from_three_tasks_count_more_than_three_from_one(
    gql: Any, project: str
) -> None:
    same = "Pinned urllib3 below 2 so the old requests stopped failing with SSL errors"
    _record(gql, [
        {"project": project, "id": "pin-a", "summary": same, "source": "user"},
        {"project": project, "id": "pin-b", "summary": same, "source": "user"},
    ])  # fmt: skip
    applied = _applications(gql, project, 3)
    spread = [_report(gql, project, "pin-a", True, **{"in": e}) for e in applied][-1]
    repeated = [_report(gql, project, "pin-b", True, **{"in": applied[0]}) for _ in range(3)][-1]
    assert spread["weightedSuccesses"] == pytest.approx(3.0)
    assert repeated["weightedSuccesses"] == pytest.approx(1.75)
    assert spread["confidence"] > repeated["confidence"]
    hits = _recall(gql, project, "requests fails with an SSL error after an upgrade")
    assert _rank(hits, "pin-a") < _rank(hits, "pin-b")


@pytest.mark.slow
def test_a_report_from_another_project_is_independent(gql: Any, project: str) -> None:
    _record(gql, [{"project": project, "id": "tip", "summary": "Clear the pip cache first"}])
    mine = _applications(gql, project, 1, agent="agent-a")
    _report(gql, project, "tip", True, **{"in": mine[0]})
    theirs = project + "-other"  # the same task id in another project is another context
    _record(gql, [{"project": theirs, "id": "applied-0", "summary": "Applied it there"}])
    body = gql(
        OUTCOME.replace(
            "idempotencyKey: $key", "idempotencyKey: $key, appliedInProject: $ap"
        ).replace("$note: String)", "$note: String, $ap: String)"),
        {"p": project, "id": "tip", "ok": True, "in": "applied-0", "ap": theirs},
    )
    assert "errors" not in body, body
    assert body["data"]["recordOutcome"]["independentConfirmations"] == 2


# --- the bridge read as feedback ----------------------------------------------------------

FETCH = (Path(__file__).resolve().parent / "fixtures" / "snippets" / "fetch_json.py").read_text()
SNIPPET = """query($p: String!, $q: String!) {
  searchSnippets(project: $p, query: $q, k: 1) { snippet { id uses successes failures } }
}"""


def _ran_fetch(project: str, episode: str, task: str, outcome: str) -> dict[str, Any]:
    command = f"cat > fetch.py <<'EOF'\n{FETCH}EOF\npython3 fetch.py"
    return {"project": project, "id": episode, "taskId": task, "outcome": outcome,
            "summary": f"Fetched the report ({outcome})", "source": "executed",
            "action": {"type": "command", "command": command}}  # fmt: skip


@pytest.mark.slow
def test_episodes_that_ran_code_report_its_outcome(gql: Any, project: str) -> None:
    def stats() -> dict[str, Any]:
        body = gql(SNIPPET, {"p": project, "q": "fetch json over http"})
        assert "errors" not in body, body
        found: dict[str, Any] = body["data"]["searchSnippets"][0]["snippet"]
        return found

    _record(gql, [_ran_fetch(project, "ok-1", "t1", "success"),
                  _ran_fetch(project, "ok-2", "t2", "success"),
                  _ran_fetch(project, "bad", "t3", "failure")])  # fmt: skip
    assert (stats()["uses"], stats()["successes"], stats()["failures"]) == (3, 2, 1)
    _record(gql, [_ran_fetch(project, "ok-1", "t1", "success")])  # the same episode again
    assert stats()["uses"] == 3


# --- the same scenario on real agent runs (../shared/trajectories) ------------------------


async def _real_questions(store: Any, project: str, n: int) -> list[str]:
    """The goals of the first tasks of the run (by id), cut to a question's length."""
    rows = await store.run_text(
        "MATCH (t:Task {project: $p}) WHERE t.goal IS NOT NULL "
        "RETURN t.goal AS goal ORDER BY t.id LIMIT $n",
        {"p": project, "n": n},
        read=True,
    )
    assert len(rows) == n
    return [str(r["goal"])[:400] for r in rows]


async def _ask(store: Any, embedder: Any, project: str, question: str) -> list[Any]:
    from metisgraph.graph import recall
    from metisgraph.ingest.question import Question, prepare_question

    prepared = prepare_question(Question(project=project, query=question, k=5))
    return list((await recall(store, prepared.request, prepared.vectors(embedder))).hits)


async def _tell(store: Any, project: str, memory: str, ok: bool, caller: str, nth: int = 0) -> Any:
    """A report from a caller (its own context: independent of other callers'); its n-th
    about the memory is a repeat."""
    from metisgraph.graph import OutcomeReport, record_outcome

    report = OutcomeReport(project=project, memory_id=memory, success=ok, agent=caller,
                           key=f"{caller}:{memory}:{ok}:{nth}")  # fmt: skip
    return await record_outcome(store, report)


@pytest.mark.anyio
@pytest.mark.shared
@pytest.mark.slow
async def test_the_feedback_scenario_on_real_agent_runs(
    store: Any, embedder: Any, shared_run: Any
) -> None:
    """A real run's episodes (SWE-bench tasks); each question is one task's own goal, so the
    hits are that task's steps. Three failures of the top hit against one confirmation of
    the second move trust by a fixed amount: the top hit falls below the second exactly
    when its lead in relevance is smaller than that amount (on this run: 5 of 16 tasks —
    a task's own goal often leads by more; docs/consolidation.md). One failure never flips
    a memory confirmed four times; three confirmations from three callers count more than
    three from one."""
    project, summary = shared_run.project, shared_run.summary  # ingested once per session
    assert summary.written > 100 and not summary.refused
    questions = await _real_questions(store, project, 8)
    demoted = 0
    for n, question in enumerate(questions[:6]):
        before = await _ask(store, embedder, project, question)
        top, second = before[0], before[1]
        lead = top.relevance - second.relevance
        await _tell(store, project, second.episode["id"], True, f"q{n}-ok")
        for caller in range(3):
            await _tell(store, project, top.episode["id"], False, f"q{n}-bad{caller}")
        after = {h.episode["id"]: h for h in await _ask(store, embedder, project, question)}
        fell, kept = after[top.episode["id"]], after[second.episode["id"]]
        swing = (kept.score - kept.relevance) - (fell.score - fell.relevance)
        assert fell.evidence["failures"] == 3 and kept.evidence["successes"] == 1
        assert swing > 0.5  # three failures against one success: a real move
        assert (fell.score < kept.score) == (lead < swing), (n, lead, swing)
        demoted += fell.score < kept.score
    assert demoted >= 1, "no question of the run had a close second"

    confirmed = (await _ask(store, embedder, project, questions[6]))[:2]
    for caller in range(4):
        await _tell(store, project, confirmed[0].episode["id"], True, f"keep-ok{caller}")
    await _tell(store, project, confirmed[0].episode["id"], False, "keep-bad")
    order = [h.episode["id"] for h in await _ask(store, embedder, project, questions[6])]
    assert order.index(confirmed[0].episode["id"]) < order.index(confirmed[1].episode["id"])

    first, second = (await _ask(store, embedder, project, questions[7]))[:2]
    wide = [await _tell(store, project, second.episode["id"], True, f"w{c}") for c in range(3)]
    narrow = [await _tell(store, project, first.episode["id"], True, "one", n) for n in range(3)]
    assert (wide[-1]["contexts"], narrow[-1]["contexts"]) == (3, 1)
    assert wide[-1]["evidence_for"] == pytest.approx(3.0)
    assert narrow[-1]["evidence_for"] == pytest.approx(1.75)
    if wide[-1]["prior_confidence"] == narrow[-1]["prior_confidence"]:
        assert wide[-1]["confidence"] > narrow[-1]["confidence"]
