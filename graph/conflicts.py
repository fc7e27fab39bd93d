"""Memories that disagree: a similar situation with a contradicting outcome or action."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from metisgraph.graph.store import GraphStore

__all__ = ["Conflict", "ConflictSides", "conflict_sides", "find_conflicts"]

Row = dict[str, Any]
Key = tuple[str, str]
PARTNERS_PER_HIT = 3  # partners outside the hits fetched for each hit, at most

_OPPOSITE = {frozenset({"success", "failure"}), frozenset({"partial", "failure"})}


@dataclass(frozen=True)
class Conflict:
    a: str
    b: str
    reason: str
    similarity: float


def _similarity(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    if not a or not b:
        return 0.0
    va, vb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    denominator = float(np.linalg.norm(va) * np.linalg.norm(vb)) or 1.0
    return float(va @ vb) / denominator


def _differs(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    first, second = a.get("action_command"), b.get("action_command")
    return bool(first and second and first.strip() != second.strip())


def _recorded(episode: Mapping[str, Any], other: str) -> str | None:
    """The reason a CONTRADICTS link between them was written with, if there is one.

    `contradicts` holds {id, reason} (recall's expansion) or bare ids.
    """
    for found in episode.get("contradicts") or ():
        found_id, reason = (
            (found["id"], found.get("reason")) if isinstance(found, Mapping) else (found, None)
        )
        if found_id == other:
            return f"recorded as contradicting: {reason}" if reason else "recorded as contradicting"
    return None


def _superseded(episode: Mapping[str, Any], other: str) -> str | None:
    """Why `other` stands beside `episode` when it is a newer fix of the same error."""
    if other in (episode.get("superseded_by") or ()):
        return f"superseded: {other} is a newer fix of the same error than {episode['id']}"
    return None


@dataclass(frozen=True)
class ConflictSides:
    """The hits' own vectors by (project, id), and (project, id) of the episodes outside
    them that they CONTRADICT or SUPERSEDE."""

    vectors: dict[Key, list[float] | None]
    partners: list[Key]


async def conflict_sides(store: GraphStore, keys: Sequence[Key]) -> ConflictSides:
    """The given episodes' vectors (two alike with opposite outcomes conflict) and the
    episodes they CONTRADICT or SUPERSEDE (either way) that are not among them: the other
    side of a recorded disagreement, outside the top k. One round trip."""
    if not keys:
        return ConflictSides({}, [])
    rows = await store.run(
        "conflict_partners",
        keys=[{"project": p, "id": i} for p, i in keys],
        limit=len(keys) * PARTNERS_PER_HIT,
    )
    row = rows[0] if rows else {"vectors": [], "partners": []}
    vectors = {(v["project"], v["id"]): v["embedding"] for v in row["vectors"]}
    return ConflictSides(vectors, [(p["project"], p["id"]) for p in row["partners"]])


def find_conflicts(episodes: Sequence[Mapping[str, Any]], threshold: float) -> list[Conflict]:
    """Pairs among the returned episodes that contradict each other, with the reason.

    Explicit CONTRADICTS links always count, and so does a newer fix that SUPERSEDES an
    older one (`superseded_by` on the older). Otherwise two episodes conflict when their
    situations are alike (cosine of their vectors >= threshold, or the same error) and
    their outcomes are opposite, or one succeeded with a different action than the other.
    Steps of one task are not in conflict: a task's own failures led to its success.
    """
    out: list[Conflict] = []
    for a, b in combinations(episodes, 2):
        similarity = _similarity(a.get("embedding"), b.get("embedding"))
        recorded = (
            _recorded(a, b["id"])
            or _recorded(b, a["id"])
            or _superseded(a, b["id"])
            or _superseded(b, a["id"])
        )
        if recorded is not None:
            out.append(Conflict(a["id"], b["id"], recorded, similarity))
            continue
        if a.get("task_id") and a.get("task_id") == b.get("task_id"):
            continue
        same_error = bool(set(a.get("error_keys") or ()) & set(b.get("error_keys") or ()))
        if similarity < threshold and not same_error:
            continue
        why = "the same error" if same_error else f"similar situations ({similarity:.2f})"
        outcomes = frozenset({a.get("outcome"), b.get("outcome")})
        if outcomes in _OPPOSITE:
            out.append(
                Conflict(
                    a["id"],
                    b["id"],
                    f"{why} with opposite outcomes ({' vs '.join(sorted(outcomes))})",
                    similarity,
                )
            )
        elif a.get("outcome") == b.get("outcome") == "success" and _differs(a, b):
            out.append(
                Conflict(
                    a["id"],
                    b["id"],
                    f"{why}, different actions both reported as working",
                    similarity,
                )
            )
    return out
