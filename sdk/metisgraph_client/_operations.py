"""The GraphQL documents the client sends, and how their answers become typed results."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter

from metisgraph_client._errors import AuthError, NotReady, QueryError
from metisgraph_client._models import (
    OutcomeStats,
    PlanContext,
    RecallResult,
    RecordResult,
    SnippetHit,
)

__all__ = ["Operation", "answer_of", "new_id"]

T = TypeVar("T")
# The scope the key lacks is named: "not allowed to write project(s): …".
_FORBIDDEN = re.compile(r"not allowed to \w+ project")

_EPISODE = "id summary outcome taskId uses successes failures"
PLAN = """
query($project: String!, $task: PlanTaskInput!, $k: Int!, $budget: Int!, $verified: Boolean!) {
  result: planContext(project: $project, task: $task, k: $k, budget: $budget,
                      requireVerified: $verified) {
    memories { label id kind text why score tokens related }
    prompt tokens budget tokenizer leftOut considered abstained reason
  }
}"""
RECALL = f"""
query($project: String!, $query: String!, $context: RecallContext, $k: Int!) {{
  result: recall(project: $project, query: $query, context: $context, k: $k) {{
    hits {{ score episode {{ {_EPISODE} }}
            fixedBy {{ kind action runs confidence episode why error }}
            applies {{ status reasons }} }}
    abstained reason
  }}
}}"""
SEARCH = """
query($project: String!, $query: String, $k: Int!, $verified: Boolean!) {
  result: searchSnippets(project: $project, query: $query, k: $k, requireVerified: $verified) {
    score snippet { id name language template successRate }
  }
}"""
TASK = """
mutation($input: TaskInput!) {
  result: recordTask(input: $input) { id status errors { field message } }
}"""
EPISODE = """
mutation($input: EpisodeInput!) {
  result: recordEpisode(input: $input) { id status errors { field message } }
}"""
OUTCOME = """
mutation($project: String!, $id: String!, $success: Boolean!, $note: String, $key: String!) {
  result: recordOutcome(project: $project, memoryId: $id, success: $success, note: $note,
                        idempotencyKey: $key) {
    memoryId kind uses successes failures successRate duplicate
  }
}"""


@dataclass(frozen=True)
class Operation(Generic[T]):
    """One request: its document, its variables, what its answer parses into, and whether
    sending it twice is harmless (a read, or a write keyed by an id the client chose)."""

    document: str
    variables: dict[str, Any]
    result: TypeAdapter[T]
    repeatable: bool = True


def new_id(prefix: str) -> str:
    """An id chosen by the client once per call: repeats of the call write the same record."""
    return f"{prefix}-{uuid.uuid4().hex[:20]}"


def answer_of(operation: Operation[T], status: int, body: Any) -> T:
    """The typed result of a GraphQL answer, or the error it carries."""
    if status == 401:
        raise AuthError("the service wants a valid bearer token (401)")
    if not isinstance(body, dict):
        raise QueryError([f"not a GraphQL answer (HTTP {status})"])
    errors = [str(e.get("message", e)) for e in body.get("errors") or []]
    if errors:
        if any(_FORBIDDEN.match(m) for m in errors):
            raise AuthError("; ".join(errors))
        if any(m.startswith("metisgraph is starting") for m in errors):
            raise NotReady("; ".join(errors))
        raise QueryError(errors)
    return operation.result.validate_python((body.get("data") or {}).get("result"))


def _adapter(model: Any) -> TypeAdapter[Any]:
    return TypeAdapter(model)


PLAN_RESULT = _adapter(PlanContext)
RECALL_RESULT = _adapter(RecallResult)
SEARCH_RESULT = _adapter(list[SnippetHit])
RECORD_RESULT = _adapter(RecordResult)
OUTCOME_RESULT = _adapter(OutcomeStats)


def _clean(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def plan_context(project: str, goal: str, *, description: str | None = None,
                 state: str | None = None, error: str | None = None,
                 environment: dict[str, Any] | None = None, tools: list[str] | None = None,
                 k: int = 8, budget: int = 2000,
                 require_verified: bool = False) -> Operation[PlanContext]:  # fmt: skip
    task = _clean({"goal": goal, "description": description, "state": state, "error": error,
                   "environment": environment, "tools": tools})  # fmt: skip
    variables = {"project": project, "task": task, "k": k, "budget": budget,
                 "verified": require_verified}  # fmt: skip
    return Operation(PLAN, variables, PLAN_RESULT)


def recall(project: str, query: str, *, k: int = 5,
           context: dict[str, Any] | None = None) -> Operation[RecallResult]:  # fmt: skip
    return Operation(RECALL, {"project": project, "query": query, "k": k, "context": context},
                     RECALL_RESULT)  # fmt: skip


def search_snippets(project: str, query: str, *, k: int = 5,
                    require_verified: bool = False) -> Operation[list[SnippetHit]]:  # fmt: skip
    variables = {"project": project, "query": query, "k": k, "verified": require_verified}
    return Operation(SEARCH, variables, SEARCH_RESULT)


def record_task(project: str, goal: str, **fields: Any) -> Operation[RecordResult]:
    fields["id"] = fields.get("id") or new_id("task")
    return Operation(TASK, {"input": _clean({"project": project, "goal": goal, **fields})},
                     RECORD_RESULT)  # fmt: skip


def record_episode(project: str, summary: str, **fields: Any) -> Operation[RecordResult]:
    fields["id"] = fields.get("id") or new_id("ep")
    return Operation(EPISODE, {"input": _clean({"project": project, "summary": summary,
                                                **fields})}, RECORD_RESULT)  # fmt: skip


def record_outcome(project: str, memory_id: str, success: bool, note: str | None = None,
                   key: str | None = None) -> Operation[OutcomeStats]:  # fmt: skip
    """One reuse reported under an idempotency key: the caller's, else one chosen once per
    call. Its retries send the same key, and the service counts a key once."""
    variables = {"project": project, "id": memory_id, "success": success, "note": note,
                 "key": key or new_id("outcome")}  # fmt: skip
    return Operation(OUTCOME, variables, OUTCOME_RESULT)
