"""The fix comes with the error: a recalled step that hit an error carries the steps that
fixed it (recall's `fixedBy`, by the lineage's fix links) and planContext shows the fix as a
memory to follow, above the hit, with how many runs it fixed; a workaround is labelled and
ranked below. Real app, real Neo4j, real model; the fix links are written in the shape the
lineage's evidence rules write (RESOLVED {kind, task, rule, why, confidence})."""

from __future__ import annotations

from typing import Any

import pytest

RECORD = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
RECALL = """
query($project: String!, $query: String!) {
  recall(project: $project, query: $query, k: 8) {
    hits { episode { id taskId step outcome }
           fixedBy { kind action runs links confidence episode why error } }
  }
}"""
PLAN = """
query($project: String!, $task: PlanTaskInput!) {
  planContext(project: $project, task: $task, k: 8, budget: 2000) {
    memories { label id kind text } prompt tokens leftOut
  }
}"""
ERROR = "ModuleNotFoundError: No module named 'sqlparse'"
TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/testbed/reproduce.py", line 3, in <module>\n'
    "    import sqlparse\n" + ERROR
)
SCRIPT = "cat <<'EOF' > reproduce.py\n" + "\n".join(
    f"print('checking format {n}')" for n in range(40)
) + "\nimport sqlparse\nEOF\npython reproduce.py"  # fmt: skip
LINK = """
MATCH (t:Task {project: $project, id: $task})-[:HAS_EPISODE]->(hit:Episode {step: 1})
      -[:HIT]->(r:Error {project: $project})
MATCH (t)-[:HAS_EPISODE]->(f:Episode {step: 2})
MERGE (f)-[x:RESOLVED]->(r)
SET x += {kind: $kind, task: t.id, rule: $rule, why: $why, confidence: $confidence}
RETURN count(x) AS links"""


def _run(project: str, task: str, second: str, outcome: str) -> list[dict[str, Any]]:
    return [
        {"project": project, "taskId": task, "step": 1,
         "summary": "Ran the reproduction script for the SQL formatting issue",
         "action": {"command": SCRIPT}, "error": TRACE, "outcome": "failure"},
        {"project": project, "taskId": task, "step": 2, "summary": "Dealt with the missing module",
         "action": {"command": second}, "outcome": outcome},
        {"project": project, "taskId": task, "step": 3, "summary": "Ran the script again: OK",
         "action": {"command": "python reproduce.py"}, "observation": "OK", "outcome": "success"},
    ]  # fmt: skip


@pytest.fixture
async def fixed(gql: Any, store: Any, project: str) -> str:
    runs = [(f"run-{n}", "pip install sqlparse -q", "success") for n in range(3)]
    runs.append(("run-w", "sed -i 's/^import sqlparse$//' reproduce.py", "success"))
    inputs = [row for task, cmd, outcome in runs for row in _run(project, task, cmd, outcome)]
    done = gql(RECORD, {"inputs": inputs})
    assert done["data"]["recordEpisodes"] == {"written": 12, "refused": 0}, done
    for task, _, _ in runs:
        workaround = task == "run-w"
        rows = await store.run_text(LINK, {
            "project": project, "task": task, "kind": "workaround" if workaround else "fixed",
            "rule": "other-means" if workaround else "module",
            "why": "the import was removed" if workaround else
                   "installed the module the error names; it did not come back",
            "confidence": 0.6 if workaround else 0.9})  # fmt: skip
        assert rows[0]["links"] >= 1, task
    return project


@pytest.mark.slow
@pytest.mark.anyio
async def test_recall_hits_carry_what_fixed_their_error_fixes_first(gql: Any, fixed: str) -> None:
    body = gql(RECALL, {"project": fixed, "query": f"django/django: {ERROR}"})
    assert "errors" not in body, body
    hits = body["data"]["recall"]["hits"]
    failing = [h for h in hits if h["episode"]["step"] == 1]
    assert failing, hits
    fixed_by = failing[0]["fixedBy"]
    kinds = [f["kind"] for f in fixed_by]
    assert "workaround" in kinds and kinds[0] == "fixed", fixed_by
    assert kinds.index("workaround") > max(n for n, k in enumerate(kinds) if k == "fixed")
    fix, workaround = fixed_by[0], fixed_by[kinds.index("workaround")]
    assert fix["action"] == "pip install sqlparse -q" and fix["runs"] == 3 and fix["links"] >= 3
    assert fix["confidence"] == pytest.approx(0.9) and "did not come back" in fix["why"]
    assert workaround["action"].startswith("sed -i") and workaround["runs"] == 1
    # The steps that fixed are not hits of their own error's fixes.
    steps = {h["episode"]["id"]: h for h in hits}
    assert fix["episode"] not in {h["episode"]["id"] for h in failing}
    assert all(f["episode"] != h for h in steps for f in steps[h]["fixedBy"])


@pytest.mark.anyio
@pytest.mark.slow
async def test_plan_shows_the_fix_above_the_hit_and_the_workaround_below(
    gql: Any, fixed: str
) -> None:
    body = gql(PLAN, {"project": fixed, "task": {"goal": f"django/django: {ERROR}"}})
    assert "errors" not in body, body
    plan = body["data"]["planContext"]
    assert plan["tokens"] <= 2000 and "no memory applies" not in plan["prompt"]
    kinds = [m["kind"] for m in plan["memories"]]
    assert "fix" in kinds, plan["prompt"]
    first_fix = kinds.index("fix")
    text = plan["memories"][first_fix]["text"]
    assert "fixed by: `pip install sqlparse -q`, in 3 runs; " in text, text
    assert "times the error did not come back" in text
    # The fix is shown above the failing step it fixes, and above any workaround.
    assert kinds[first_fix + 1] == "failure"
    if "workaround" in kinds:
        assert kinds.index("workaround") > first_fix
        text = plan["memories"][kinds.index("workaround")]["text"]
        assert "worked round by: `sed -i" in text and "without removing its cause" in text


def _hit(episode_id: str, outcome: str, fixed_by: list[dict[str, Any]] | None = None) -> Any:
    from metisgraph.graph import Hit

    episode = {"id": episode_id, "project": "p", "summary": f"step {episode_id}",
               "outcome": outcome, "action_command": f"run {episode_id}"}  # fmt: skip
    return Hit(episode=episode, task=None, score=1.0, relevance=1.0, channels={"vector": 0.5},
               ranks={"vector": 1}, contributions={"vector": 1.0}, trust={},
               fixed_by=fixed_by or [])  # fmt: skip


def test_a_fix_recalled_above_its_error_is_shown_as_its_fix() -> None:
    """Whatever recall ranked first, a step that fixed another hit's error is shown as that
    error's fix, just above it (not as a plain step above the error it fixes), its
    workaround just below; each shown once, the rest in recall's order with their ranks."""
    from metisgraph.api.graphql.plan_memories import memories_from
    from metisgraph.graph import RecallOutcome

    fix = {"kind": "fixed", "action": "pip install sqlparse", "runs": 2, "links": 2,
           "confidence": 0.9, "episode": "fix1", "summary": "installed it", "why": "it held",
           "error": "No module named 'sqlparse'"}  # fmt: skip
    dodge = {**fix, "kind": "workaround", "action": "sed -i", "episode": "dodge"}
    hits = [_hit("fix1", "success"), _hit("other", "success"), _hit("dodge", "success"),
            _hit("failed", "failure", [fix, dodge])]  # fmt: skip
    outcome = RecallOutcome(hits, [], abstained=False, reason=None, timings={}, candidates=4)
    memories = memories_from(outcome, [], verified_only=False)
    placed = [(m.kind, m.id) for m in memories]
    assert placed == [("fix", "fix1"), ("failure", "failed"), ("workaround", "dodge"),
                      ("success", "other")], placed  # fmt: skip
    assert "recall #4 of 4" in memories[1].why and "in 2 runs" in "\n".join(memories[0].lines)
