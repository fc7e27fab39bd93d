"""The neighbourhood of a chained episode: the steps or turns just before and after it.

A step of a trajectory or a turn of a dialogue often makes sense only with its
neighbours; recall has a channel that sees each chained episode together with them.
The context vector is the normalised sum of the neighbours' and its own vectors (no
extra model call); the context text is their summaries, for the full-text side.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from itertools import groupby
from typing import Any

import numpy as np

from metisgraph.graph import GraphStore, Transaction, Vector, native_value
from metisgraph.ingest.prepare.episode import PreparedEpisode

__all__ = [
    "TEXT_CHARS",
    "chain_contexts",
    "chain_order",
    "context_rows",
    "refresh_context",
    "refresh_within",
]

_WINDOW = 2  # neighbours on each side (2 beat 1 and 3 on dialogue recall: docs/recall.md)
TEXT_CHARS = 600


def context_rows(chain: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Context vector and text for each episode of one chain (in order)."""
    if len(chain) < 2:
        return []
    vectors = np.asarray([row["embedding"] for row in chain], dtype=np.float32)
    rows = []
    for i, row in enumerate(chain):
        lo, hi = max(0, i - _WINDOW), min(len(chain), i + _WINDOW + 1)
        summed = vectors[lo:hi].sum(axis=0)
        norm = float(np.linalg.norm(summed)) or 1.0
        text = "\n".join((chain[j]["summary"] or "")[:TEXT_CHARS] for j in range(lo, hi))
        rows.append(
            {
                "project": row["project"],
                "id": row["id"],
                "vector": Vector((summed / norm).tolist()),
                "text": text,
            }
        )
    return rows


async def refresh_context(store: GraphStore, tasks: list[dict[str, str]]) -> int:
    """Recompute the context of every episode of these tasks (idempotent). Returns how many."""
    done: list[int] = []

    async def refresh(tx: Transaction) -> None:
        done.append(await refresh_within(tasks)(tx))

    await store.write_many([], refresh)
    return done[-1]


def refresh_within(tasks: list[dict[str, str]]) -> Callable[[Transaction], Awaitable[int]]:
    """The context refresh of these tasks as the last step of a write transaction: what it
    reads is what the transaction wrote, and a failure rolls the whole batch back (so a
    re-run writes it again, context and all; a refresh after the commit could be lost)."""

    async def refresh(tx: Transaction) -> int:
        if not tasks:
            return 0
        episodes = await tx.run("task_neighbourhoods", tasks=tasks)
        rows: list[dict[str, Any]] = []
        for _, chain in groupby(episodes, key=lambda r: (r["project"], r["task"])):
            rows.extend(context_rows(list(chain)))
        if rows:
            await tx.run("set_context", rows=rows)
        return len(rows)

    return refresh


def chain_contexts(
    stored: list[dict[str, Any]],
    episodes: list[PreparedEpisode],
    vectors: dict[tuple[str, str], list[float]],
) -> list[dict[str, Any]]:
    """Context rows for whole chains: the stored steps with this batch's steps in their place.

    Orders steps as the graph does (step, then time, then id; missing ones last).
    """
    chains: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for row in stored:
        when = native_value(row.get("created_at"))
        chains.setdefault((row["project"], row["task"]), {})[row["id"]] = {
            **row,
            "order": chain_order(row.get("step"), when, row["id"]),
        }
    for e in episodes:
        assert e.task_id is not None
        chains.setdefault((e.project, e.task_id), {})[e.id] = {
            "project": e.project,
            "id": e.id,
            "summary": e.props.get("summary"),
            "embedding": vectors[(e.project, e.id)],
            "order": chain_order(e.props.get("step"), e.created_at, e.id),
        }
    rows: list[dict[str, Any]] = []
    for key in sorted(chains):
        rows.extend(context_rows(sorted(chains[key].values(), key=lambda r: r["order"])))
    return rows


_LAST_STEP = 2147483647


def chain_order(step: int | None, when: datetime | None, episode_id: str) -> tuple[Any, ...]:
    """A step's place in its chain, as task_neighbourhoods orders them (missing ones last)."""
    return (_LAST_STEP if step is None else step, when is None, when or _EARLIEST, episode_id)


_EARLIEST = datetime.min.replace(tzinfo=UTC)
