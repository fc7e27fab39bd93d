"""Memories that disagree: a similar situation with a contradicting outcome or action."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from metisgraph.graph.cypher import query
from metisgraph.graph.store import GraphStore

__all__ = [
    "Conflict",
    "Similarities",
    "find_conflicts",
    "pairs_of",
    "partners_of",
    "similarities",
]

Row = dict[str, Any]
Key = tuple[str, str]
# How alike two episodes are (cosine), by the pair of their (project, id).
Similarities = dict[frozenset[Key], float]
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


async def similarities(store: GraphStore, keys: Sequence[Key], linked_of: int = 0) -> Similarities:
    """How alike each pair of the given episodes is, computed by the server where their
    vectors are (one number a pair comes back, not their vectors); with the recallable
    episodes the first ``linked_of`` of them CONTRADICT or SUPERSEDE among them."""
    if len(keys) < 2 and not (keys and linked_of):
        return {}
    similar = query("episode_similarities").filled(keys=query("recall_keys").text)
    asked = [{"project": p, "id": i} for p, i in keys]
    rows = await store.run_query(similar, {"keys": asked, "linked": asked[:linked_of]})
    return pairs_of(rows[0]["pairs"] if rows else [])


def pairs_of(pairs: Sequence[Sequence[Any]]) -> Similarities:
    """episode_similarities' pairs, [project, id, project, id, cosine] each, by pair."""
    return {frozenset({(ap, ai), (bp, bi)}): float(s) for ap, ai, bp, bi, s in pairs}


def partners_of(linked: Mapping[Key, Sequence[str]], shown: Sequence[Key]) -> list[Key]:
    """The other side of a recorded disagreement outside the top k: the recallable episodes
    the shown ones CONTRADICT or SUPERSEDE, either way (``linked``: each one's, by id, read
    with its expansion), in (project, id) order, PARTNERS_PER_HIT a shown one at most."""
    inside = set(shown)
    found = {(p, other) for p, i in shown for other in linked.get((p, i), ())} - inside
    return sorted(found)[: len(shown) * PARTNERS_PER_HIT]


def find_conflicts(
    episodes: Sequence[Mapping[str, Any]], threshold: float, alike: Similarities | None = None
) -> list[Conflict]:
    """Pairs among the returned episodes that contradict each other, with the reason.

    Explicit CONTRADICTS links always count, and so does a newer fix that SUPERSEDES an
    older one (`superseded_by` on the older). Otherwise two episodes conflict when their
    situations are alike (cosine of their vectors >= threshold, or the same error) and
    their outcomes are opposite, or one succeeded with a different action than the other.
    Steps of one task are not in conflict: a task's own failures led to its success.
    ``alike``: the pairs' similarities where known (else from the episodes' `embedding`).
    """
    out: list[Conflict] = []
    for a, b in combinations(episodes, 2):
        pair = frozenset(
            {(str(a.get("project")), str(a["id"])), (str(b.get("project")), str(b["id"]))}
        )
        similarity = (alike or {}).get(pair)
        if similarity is None:
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
