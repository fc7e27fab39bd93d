"""The bounded subgraph analytics measure: recent episodes of some projects in a window."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from metisgraph.graph.analytics.model import DEFAULT_CAP, MAX_CAP
from metisgraph.graph.rows import native_time
from metisgraph.graph.store import GraphStore

__all__ = ["EpisodeFacts", "ErrorFacts", "Pulled", "pull"]


@dataclass(frozen=True)
class EpisodeFacts:
    project: str
    id: str
    task: str | None
    step: int | None
    at: datetime | None
    outcome: str | None
    errors: tuple[str, ...]
    environment: str | None
    tools: tuple[str, ...]
    snippets: tuple[str, ...]


@dataclass(frozen=True)
class ErrorFacts:
    project: str
    key: str
    kind: str | None
    signature: str | None
    template: str | None
    fixes: tuple[tuple[str, str | None, str | None], ...]  # (snippet id, task, episode)


@dataclass
class Pulled:
    """What analytics measure, with how it was bounded."""

    projects: list[str]
    since: datetime | None
    until: datetime | None
    cap: int
    episodes: list[EpisodeFacts]
    truncated: bool  # more episodes lie in the window than the cap
    errors: dict[tuple[str, str], ErrorFacts] = field(default_factory=dict)
    packages: dict[tuple[str, str], dict[str, str | None]] = field(default_factory=dict)
    snippets: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


async def pull(
    store: GraphStore,
    projects: list[str],
    since: datetime | None = None,
    until: datetime | None = None,
    cap: int = DEFAULT_CAP,
) -> Pulled:
    """The ``cap`` most recent episodes of ``projects`` in the window, and what they touch.

    Two stages of reads whatever the size: the episodes, then their errors (with fixes),
    environments (with packages) and snippets side by side.
    """
    if not 1 <= cap <= MAX_CAP:
        raise ValueError(f"cap: between 1 and {MAX_CAP}, got {cap}")
    if since and until and since >= until:
        raise ValueError("since: must be before until")
    scope = sorted(set(projects))
    rows = await store.run("analytics_episodes", projects=scope, since=since, until=until, cap=cap)
    episodes = [_episode(r) for r in rows[:cap]]
    errors = {(e.project, k) for e in episodes for k in e.errors}
    envs = {(e.project, e.environment) for e in episodes if e.environment}
    snippets = {(e.project, s) for e in episodes for s in e.snippets}
    error_rows, env_rows, snippet_rows = await asyncio.gather(
        store.run("analytics_errors", keys=[{"project": p, "key": k} for p, k in sorted(errors)]),
        store.run(
            "analytics_environments", keys=[{"project": p, "key": k} for p, k in sorted(envs)]
        ),
        store.run(
            "analytics_snippets", keys=[{"project": p, "id": i} for p, i in sorted(snippets)]
        ),
    )
    pulled = Pulled(scope, since, until, cap, episodes, truncated=len(rows) > cap)
    for r in error_rows:
        fixes = tuple((f["snippet"], f.get("task"), f.get("episode")) for f in r["fixes"])
        pulled.errors[(r["project"], r["key"])] = ErrorFacts(
            r["project"], r["key"], r.get("kind"), r.get("signature"), r.get("template"), fixes
        )
    for r in env_rows:
        pulled.packages[(r["project"], r["key"])] = {
            str(name): (None if version is None else str(version))
            for name, version in r["packages"]
        }
    for r in snippet_rows:
        pulled.snippets[(r["project"], r["id"])] = r
    return pulled


def _episode(r: dict[str, Any]) -> EpisodeFacts:
    return EpisodeFacts(
        project=r["project"],
        id=r["id"],
        task=r.get("task"),
        step=r.get("step"),
        at=native_time(r.get("at")),
        outcome=r.get("outcome"),
        errors=tuple(r.get("errors") or ()),
        environment=r.get("environment"),
        tools=tuple(r.get("tools") or ()),
        snippets=tuple(r.get("snippets") or ()),
    )
