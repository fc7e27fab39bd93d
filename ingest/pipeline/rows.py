"""Prepared episodes as the rows of a write batch: their errors, environments, tools, tags
and symbols, each once per project.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from metisgraph.ingest.environment.extract import environment_row
from metisgraph.ingest.errors import ErrorSignature
from metisgraph.ingest.prepare.episode import PreparedEpisode
from metisgraph.ingest.prepare.keywords import tag_value

__all__ = ["error_row", "group_rows"]


def error_row(
    project: str, error: ErrorSignature, seen: datetime, embedding: list[float] | None
) -> dict[str, Any]:
    return {"project": project, **error.node_properties(), "seen": seen, "embedding": embedding}


def group_rows(episodes: list[PreparedEpisode]) -> tuple[list[dict[str, Any]], ...]:
    environments: dict[tuple[str, str], dict[str, Any]] = {}
    tools: dict[tuple[str, str], dict[str, Any]] = {}
    tags: dict[tuple[str, str], dict[str, Any]] = {}
    symbols: dict[tuple[str, str], dict[str, Any]] = {}
    for ep in episodes:
        env = ep.environment
        if env is not None:
            row = environments.setdefault(
                (ep.project, env.key), environment_row(ep.project, env, [])
            )
            row["episode_ids"].append(ep.id)
        for tool in ep.tools:
            row = tools.setdefault(
                (ep.project, tool.name),
                {"project": ep.project, "name": tool.name, "kind": tool.kind, "episode_ids": []},
            )
            row["episode_ids"].append(ep.id)
        for tag in ep.tags:
            row = tags.setdefault(
                (ep.project, tag),
                {"project": ep.project, "name": tag, "value": tag_value(tag), "episode_ids": []},
            )
            row["episode_ids"].append(ep.id)
        for name in ep.symbols:
            row = symbols.setdefault(
                (ep.project, name), {"project": ep.project, "name": name, "episode_ids": []}
            )
            row["episode_ids"].append(ep.id)
    return (
        list(environments.values()),
        list(tools.values()),
        list(tags.values()),
        list(symbols.values()),
    )
