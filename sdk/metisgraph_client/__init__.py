"""metisgraph-client: the Python client of metisgraph (httpx and pydantic only)."""

from metisgraph_client._client import AsyncClient, Client
from metisgraph_client._errors import (
    AuthError,
    MetisgraphError,
    NotReady,
    QueryError,
    RateLimited,
    TransportError,
    Unavailable,
)
from metisgraph_client._loop import (
    Executor,
    Model,
    ModelReplyError,
    Observation,
    Step,
    StepRecord,
    TaskReport,
    parse_step,
    run_task,
)
from metisgraph_client._models import (
    Applies,
    HitFix,
    OutcomeStats,
    PlanContext,
    PlanMemory,
    RecallResult,
    RecordResult,
    SnippetHit,
)
from metisgraph_client._openai import OpenAIChatModel

__all__ = [
    "Applies",
    "AsyncClient",
    "AuthError",
    "Client",
    "Executor",
    "HitFix",
    "MetisgraphError",
    "Model",
    "ModelReplyError",
    "NotReady",
    "Observation",
    "OpenAIChatModel",
    "OutcomeStats",
    "PlanContext",
    "PlanMemory",
    "QueryError",
    "RateLimited",
    "RecallResult",
    "RecordResult",
    "SnippetHit",
    "Step",
    "StepRecord",
    "TaskReport",
    "TransportError",
    "Unavailable",
    "parse_step",
    "run_task",
]
