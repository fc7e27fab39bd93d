"""Memories that fit: a long memory is shortened to its share of the budget, never dropped for
its length alone, and the prompt never says no memory applies when memories were left out —
the fitting on its own (the real tokenizer), and planContext on the real app, the real Neo4j
and the real model with a run whose failing step is a 40-line heredoc."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.api.graphql.plan_compact import decisive, error_line, outline
from metisgraph.api.graphql.plan_prompt import Memory, PlanTask, fit
from metisgraph.api.graphql.prompt_tokens import prompt_tokenizer

SCRIPT_LINES = [f"    check_{n}(settings, connection)  # step {n} of the reproduction" for n in
                range(40)]  # fmt: skip
HEREDOC = "cat <<'EOF' > reproduce.py\nimport django\n" + "\n".join(SCRIPT_LINES) + (
    "\nEOF\npython reproduce.py")  # fmt: skip
TRACE = "\n".join(
    ["Traceback (most recent call last):"]
    + [f'  File "/testbed/django/db/module_{n}.py", line {n}, in load_{n}' for n in range(30)]
    + ["ModuleNotFoundError: No module named 'sqlparse'"]
)


def _big(n: int) -> Memory:
    return Memory(
        kind="failure", id=f"ep-big-{n}",
        heading=f"Ran the script {n}, it failed {'again ' * 40}(outcome failure; id ep-big-{n})",
        lines=(f"did: {HEREDOC}", f"cause: {TRACE}", "output: " + "\n".join(SCRIPT_LINES)),
        why=f"recall #{n} of 9 (score 0.9)", score=0.9,
    )  # fmt: skip


def _small(n: int) -> Memory:
    heading = f"Installed sqlparse {n} (outcome success; id ep-small-{n})"
    return Memory(kind="success", id=f"ep-small-{n}", heading=heading,
                  lines=("did: pip install sqlparse -q",), why="recall", score=0.5)  # fmt: skip


TASK = PlanTask(goal="django/django: ModuleNotFoundError: No module named 'sqlparse'")


def test_a_memory_longer_than_the_budget_is_shortened_not_dropped() -> None:
    count = prompt_tokenizer().count
    big = _big(1)
    assert count(big.block("M1")) > 1200  # larger than what a 1200 budget leaves for memories
    memories = [big, _small(1), _big(2), _small(2)]
    fitted = fit(TASK, memories, 1200, count)
    assert fitted.tokens == count(fitted.prompt) <= 1200
    assert [m.id for m in fitted.memories][:2] == ["ep-big-1", "ep-small-1"]
    assert "no memory applies" not in fitted.prompt
    assert "more lines cut" in fitted.prompt  # the marker says what was cut
    assert "pip install sqlparse -q" in fitted.prompt
    assert list(fitted.memory_tokens) == [
        count(m.block(f"M{n}")) for n, m in enumerate(fitted.memories, start=1)
    ]


@pytest.mark.parametrize("budget", [330, 360, 420, 600, 900, 2000])
def test_no_prompt_says_no_memory_applies_while_memories_are_left_out(budget: int) -> None:
    count = prompt_tokenizer().count
    memories = [_big(n) for n in range(12)]
    try:
        fitted = fit(TASK, memories, budget, count)
    except ValueError:  # the bare prompt is larger than the budget: refused, as before
        return
    assert fitted.tokens == count(fitted.prompt) <= budget
    assert fitted.left_out == 12 - len(fitted.memories)
    assert "no memory applies" not in fitted.prompt
    if fitted.left_out:
        assert f"({fitted.left_out} " in fitted.prompt and f"token budget of {budget}" in (
            fitted.prompt)  # fmt: skip
    if budget >= 900:
        assert len(fitted.memories) >= 3  # each shortened to a share, none dropped for length


def test_memories_shown_keep_their_order_and_id() -> None:
    count = prompt_tokenizer().count
    memories = [_big(n) if n % 2 else _small(n) for n in range(10)]
    fitted = fit(TASK, memories, 1500, count)
    ids = [m.id for m in fitted.memories]
    assert ids == [m.id for m in memories][: len(ids)]
    for memory in fitted.memories:
        assert memory.block("M1").splitlines()[0].endswith(f"; id {memory.id})")


def test_a_heredoc_is_cut_to_its_shell_lines_with_a_marker() -> None:
    cut = decisive(HEREDOC)
    lines = cut.splitlines()
    assert lines[0] == "cat <<'EOF' > reproduce.py"
    assert "python reproduce.py" in lines and "EOF" in lines
    assert any("more lines of the EOF body cut" in line for line in lines)
    assert len(lines) <= 8 and "step 30 of" not in cut
    assert decisive("pip install sqlparse -q") == "pip install sqlparse -q"


def test_the_error_line_stands_for_a_whole_traceback() -> None:
    assert error_line(TRACE) == "ModuleNotFoundError: No module named 'sqlparse'"
    assert error_line("") is None
    short = outline("12000 rows loaded")
    assert short == "12000 rows loaded"
    long = outline("\n".join(SCRIPT_LINES))
    assert long is not None and "lines cut" in long and len(long.splitlines()) == 4
    failed = outline("collecting\n" * 20 + "E   AssertionError: 3 != 4\n1 failed")
    assert failed is not None and failed.startswith("E   AssertionError: 3 != 4")


# --- planContext on the real app: a run whose failing step is a 40-line heredoc ------------

PLAN = """
query($project: String!, $task: PlanTaskInput!, $budget: Int!) {
  planContext(project: $project, task: $task, k: 8, budget: $budget) {
    memories { label id kind text tokens } prompt tokens leftOut considered
  }
}"""
RECORD = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""


def _run(project: str, task: str) -> list[dict[str, Any]]:
    output = TRACE + "\n" + "\n".join(f"output line {n}: checked" for n in range(60))
    return [
        {"project": project, "taskId": task, "step": 1,
         "summary": "Wrote a 40-line reproduction script and ran it; the import of sqlparse "
                    "failed", "action": {"command": HEREDOC}, "error": TRACE,
         "observation": output, "outcome": "failure"},
        {"project": project, "taskId": task, "step": 2,
         "summary": "Installed the missing sqlparse package",
         "action": {"command": "pip install sqlparse -q"}, "observation": "",
         "outcome": "success"},
        {"project": project, "taskId": task, "step": 3,
         "summary": "Ran the reproduction script again; it passed",
         "action": {"command": "python reproduce.py"}, "observation": "OK",
         "outcome": "success"},
    ]  # fmt: skip


@pytest.mark.slow
def test_plan_context_shows_the_long_step_compactly_at_budget_2000(gql: Any, project: str) -> None:
    inputs = [row for n in range(4) for row in _run(project, f"run-{n}")]
    done = gql(RECORD, {"inputs": inputs})
    assert done["data"]["recordEpisodes"] == {"written": 12, "refused": 0}, done
    goal = "django/django: ModuleNotFoundError: No module named 'sqlparse'"
    body = gql(PLAN, {"project": project, "task": {"goal": goal}, "budget": 2000})
    assert "errors" not in body, body
    plan = body["data"]["planContext"]
    assert plan["tokens"] <= 2000 and plan["considered"] >= 4
    assert "no memory applies" not in plan["prompt"]
    assert len(plan["memories"]) >= 3, plan["prompt"]
    assert "pip install sqlparse -q" in plan["prompt"]
    # The failing step is there, shortened: its command line, a marker, the error line —
    # not its 40-line body nor its 60 lines of output.
    assert "cat <<'EOF' > reproduce.py" in plan["prompt"]
    assert "body cut" in plan["prompt"] and "output line 30" not in plan["prompt"]
    assert "ModuleNotFoundError: No module named 'sqlparse'" in plan["prompt"]
    if plan["leftOut"]:
        assert f"{plan['leftOut']} lower-ranked memories left out" in plan["prompt"]


def test_the_prompt_is_counted_by_its_pieces_never_whole() -> None:
    """Counting is fitting's cost: with the prompt's tokenizer each piece is counted once
    and the prompt's tokens are their sum (no token spans the newlines that join them),
    never a count of the whole prompt; the same prompt as when the whole is counted."""
    count = prompt_tokenizer().count
    asked: list[str] = []

    def counting(text: str) -> int:
        asked.append(text)
        return count(text)

    many = [_big(1), _small(1), _big(2), _small(2), _small(3)]
    for memories, budget in ((many, 380), (many, 600), (many, 2000), ([], 2000)):
        fitted = fit(TASK, memories, budget, counting, additive=True)
        assert fitted.tokens == count(fitted.prompt) <= budget
        assert fitted.prompt not in asked
        assert fit(TASK, memories, budget, count) == fitted  # as when the whole is counted
