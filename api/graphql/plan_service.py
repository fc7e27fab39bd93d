"""planContext as a service: recall for the task, the code to reuse, fitted into a prompt.

Recall answers as it does for `recall` (``recall_service.answer``) and code comes from the
snippet search (``snippet_service.search``); here the answers become numbered memories and
the planning prompt, within the caller's token budget.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import anyio

from metisgraph.api.graphql.context import UserError
from metisgraph.api.graphql.plan_memories import memories_from
from metisgraph.api.graphql.plan_prompt import BudgetTooSmall, Fitted, Memory, PlanTask, fit
from metisgraph.api.graphql.prompt_tokens import prompt_tokenizer
from metisgraph.api.graphql.recall_service import answer
from metisgraph.api.graphql.snippet_service import search
from metisgraph.api.services import Services
from metisgraph.graph import (
    MEMORY_TYPES,
    NOT_REVIEWING,
    RECALLABLE_REVIEW,
    RecallFilters,
    RecallOutcome,
)
from metisgraph.ingest import EnvironmentInput
from metisgraph.ingest.question import MAX_CONTEXT_TOOLS, Question, QuestionError, check_names

__all__ = ["MAX_BUDGET", "MAX_PLAN_K", "PlanRequest", "Planned", "plan_context", "warm_plans"]

MAX_PLAN_K = 50
MAX_BUDGET = 100_000
_SNIPPETS = 3  # snippets the search adds beside those across the recalled episodes' bridge
_FIELD_CHARS = 20_000  # goal, description, state: a plan's inputs, not a log dump
_OFF = "k=0: memory off, the prompt is planned from the task alone"


@dataclass(frozen=True)
class PlanRequest:
    project: str
    goal: str
    description: str | None = None
    state: str | None = None
    error: str | None = None
    environment: EnvironmentInput | None = None
    tools: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    k: int = 8
    budget: int = 2000
    require_verified: bool = False
    filters: RecallFilters = field(default_factory=RecallFilters)
    abstain_below: float | None = None  # None: each project's measured threshold

    @property
    def all_projects(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.project, *self.projects)))


@dataclass(frozen=True)
class Planned:
    fitted: Fitted
    considered: list[Memory]
    recall: RecallOutcome
    tokenizer: str


def _check(req: PlanRequest) -> None:
    if not req.goal.strip():
        raise UserError("task.goal: must not be blank")
    if not 0 <= req.k <= MAX_PLAN_K:
        raise UserError(f"k must be between 0 and {MAX_PLAN_K}, got {req.k}")
    if not 1 <= req.budget <= MAX_BUDGET:
        raise UserError(f"budget must be between 1 and {MAX_BUDGET} tokens, got {req.budget}")
    for name in ("goal", "description", "state"):
        text = getattr(req, name) or ""
        if len(text) > _FIELD_CHARS:
            raise UserError(f"task.{name}: at most {_FIELD_CHARS} characters, got {len(text)}")
    try:
        check_names("task.tools", req.tools, MAX_CONTEXT_TOOLS)
    except QuestionError as error:
        raise UserError(str(error)) from None


def _environment_text(env: EnvironmentInput | None) -> str | None:
    if env is None:
        return None
    runtime = " ".join(v for v in (env.runtime, env.runtime_version) if v)
    packages = [f"{name} {version}" for name, version in sorted(env.packages.items())]
    parts = [env.os, env.os_version, env.arch, runtime, *packages]
    return ", ".join(p for p in parts if p) or None


def _question(req: PlanRequest) -> Question:
    query = "\n".join(t.strip() for t in (req.goal, req.description or "", req.state or "") if t)
    return Question(
        project=req.project, query=query.strip(), k=req.k, projects=req.projects,
        error=req.error, environment=req.environment, tools=req.tools, filters=req.filters,
        steps=False,  # the memories never show a hit's neighbouring steps
        abstain_below=req.abstain_below,
    )  # fmt: skip


async def plan_context(services: Services, req: PlanRequest) -> Planned:
    """The memories that help plan the task, and the prompt that holds as many as fit."""
    _check(req)
    if req.k == 0:  # memory off: the same prompt from the task alone (a control, a baseline)
        recalled = RecallOutcome([], [], abstained=False, reason=_OFF, timings={}, candidates=0)
        memories: list[Memory] = []
    else:
        # Recall and the snippet search are independent: asked together, each one's
        # round trips to Neo4j overlap the other's. Both embed on the one questions' lane:
        # recall's question first (recall is the longer path), then the goal, remembered
        # when it is the question itself.
        embedded = asyncio.Event()
        recalling = asyncio.ensure_future(answer(services, _question(req), embedded=embedded))
        try:
            searched = await search(
                services, project=req.project, query=req.goal, language=None, kind=None,
                imports=[], calls=[], k=_SNIPPETS, environment=req.environment,
                require_verified=req.require_verified, embed_after=embedded,
                hide_pending="pending" not in (req.filters.review or RECALLABLE_REVIEW),
            )  # fmt: skip
        except BaseException:
            recalling.cancel()
            await asyncio.gather(recalling, return_exceptions=True)
            raise
        recalled = await recalling
        memories = memories_from(recalled, searched, verified_only=req.require_verified)
    task = PlanTask(
        goal=req.goal, description=req.description, state=req.state, error=req.error,
        environment=_environment_text(req.environment), tools=req.tools,
    )  # fmt: skip
    tokenizer = prompt_tokenizer()
    try:
        # Counting a prompt's tokens is CPU work: in a worker thread, off the event loop.
        fitting = partial(fit, task, memories, req.budget, tokenizer.count,
                          additive=tokenizer.additive)  # fmt: skip
        fitted = await anyio.to_thread.run_sync(fitting)
    except BudgetTooSmall as error:
        raise UserError(str(error)) from None
    return Planned(fitted, memories, recalled, tokenizer.name)


# planContext's own first use, asked at start-up after recall's warm-up reads: a question's
# preparation and embedding (recall's warm-up brings its own vectors), the snippet search's
# reads and the prompt's tokenizer. A fresh server's first plans took 0.2-0.7 s each (10k
# bench store) while its recall was warm. A trace as the caller's error: its error vector
# and its names switch recall's channels on.
_WARM_ERROR = (
    'Traceback (most recent call last):\n  File "warm_up.py", line 1, in <module>\n'
    "KeyError: 'metisgraph-warm-up'"
)
_WARM_ENVIRONMENT = EnvironmentInput(os="linux", runtime="python", runtime_version="3.11")


async def warm_plans(services: Services, project: str, texts: Sequence[str]) -> int:
    """Ask planContext of stored episodes' ``texts`` (each a goal) as its callers' requests
    come by default (every memory type), in every combination of what switches its
    queries' text: a goal of one line or several (a title vector), a caller's error (its
    vector and names), a caller who may not review (pending memories left out); with an
    error, also an environment and verified snippets only — the snippet search's every
    read. Returns the plans asked. With a fixed abstention threshold: no project's gate
    is measured (and kept) by a warm-up; reads only."""
    everything = RecallFilters(memory_types=MEMORY_TYPES)  # as plan_types' default
    callers = (everything, replace(everything, review=NOT_REVIEWING))
    asked = 0
    for n, (lines, error, filters) in enumerate(itertools.product((1, 2), (False, True), callers)):
        goal = texts[n % len(texts)]
        req = PlanRequest(
            project=project,
            goal=goal,
            description=texts[(n + 1) % len(texts)] if lines > 1 else None,
            error=_WARM_ERROR if error else None,
            environment=_WARM_ENVIRONMENT if error else None,
            require_verified=error,
            filters=filters,
            abstain_below=0.0,
        )
        await plan_context(services, req)
        asked += 1
    return asked
