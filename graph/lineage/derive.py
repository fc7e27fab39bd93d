"""The attribution links of whole tasks derived again: read their steps and errors, weigh
the evidence (attribution.py), write RESOLVED / ATTEMPTED / FIXES (cypher/write.cypher).

Run inside the ingest write transaction for the tasks a batch touches, by migration 4 over
every stored task (``rederive_all``), and after forgetting for the tasks that kept episodes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from metisgraph.graph.lineage.attribution import Link, StepFacts, attribute
from metisgraph.graph.lineage.evidence import ErrorSays, error_says, merged, step_did
from metisgraph.graph.store import GraphStore

__all__ = ["derive_links", "derive_within", "links_of", "rederive_all"]

Row = dict[str, Any]


class Runner(Protocol):
    async def run(self, name: str, **params: Any) -> list[Row]: ...


def links_of(row: Row) -> list[Link]:
    """One task's links from its `attribution_facts` row."""
    steps = [
        StepFacts(
            id=s["id"],
            outcome=s.get("outcome"),
            did=step_did(
                s.get("action_type"),
                s.get("action_command"),
                s.get("action_parameters"),
                s.get("code") or (),
            ),
            hits=frozenset(s.get("hits") or ()),
        )
        for s in row["steps"]
    ]
    # What each error says: its stored sample (its first sighting) and what every step that
    # hit it alone printed (a later sighting may name another library, another file).
    alone: dict[str, list[str]] = {}
    for s in row["steps"]:
        hits = s.get("hits") or []
        if len(hits) == 1 and s.get("said"):
            alone.setdefault(hits[0], []).append(s["said"])
    errors: dict[str, ErrorSays] = {}
    for r in row["errors"]:
        kind, frames, symbols = r.get("kind"), r.get("frames"), r.get("symbols")
        says = error_says(kind, r.get("sample"), frames, symbols)
        for text in alone.get(r["key"], []):
            says = merged(says, error_says(kind, text, frames, symbols))
        errors[r["key"]] = says
    return attribute(steps, errors)


async def derive_links(
    runner: Runner, tasks: list[Row], episodes: list[Row] | None = None
) -> dict[str, int]:
    """Derive the links of the tasks ({project, id}) and of those the episodes belong to.

    Returns how many links of each kind were written."""
    if not tasks and not episodes:
        return {}
    facts = await runner.run("attribution_facts", tasks=tasks, episodes=episodes or [])
    rows: list[Row] = []
    counts: dict[str, int] = {}
    for row in facts:
        links = links_of(row)
        for link in links:
            counts[link.kind] = counts.get(link.kind, 0) + 1
        rows.append(
            {
                "project": row["project"],
                "id": row["task"],
                "links": [
                    {
                        "episode": k.episode,
                        "error": k.error,
                        "kind": k.kind,
                        "rule": k.rule,
                        "why": k.why,
                        "confidence": k.confidence,
                    }
                    for k in links
                ],
            }
        )
    if rows:
        await runner.run("attribution_links", tasks=rows)
        # the fixes kept on the errors (cypher/error_counts.cypher): those the tasks' steps
        # hit, and those they resolved before (a link may have gone)
        errors = sorted(
            {(row["project"], r["key"]) for row in facts for r in row["errors"]}
            | {(row["project"], key) for row in facts for key in row.get("resolved") or ()}
        )
        if errors:
            await runner.run(
                "recount_error_fixes", rows=[{"project": p, "key": k} for p, k in errors]
            )
    return counts


def derive_within(
    tasks: list[Row], episodes: list[Row]
) -> Callable[[Runner], Awaitable[object]] | None:
    """A last step of a write transaction deriving the links of the tasks given."""
    if not tasks and not episodes:
        return None

    async def run(tx: Runner) -> None:
        await derive_links(tx, tasks, episodes)

    return run


async def rederive_all(store: GraphStore, page: int = 200) -> dict[str, int]:
    """Migration 4: every stored task's links derived again from evidence. The links of the
    old rules (a resolved task's last step RESOLVED every error it met; the first code
    written after an error FIXES it) go; the counts before and after are returned."""
    before = (await store.run("lineage_links_count"))[0]
    written: dict[str, int] = {}
    after_key: Row | None = None
    tasks = 0
    while True:
        rows = await store.run("lineage_tasks_page", after=after_key, limit=page)
        if not rows:
            break
        keys = [{"project": r["project"], "id": r["id"]} for r in rows]
        for kind, n in (await derive_links(store, keys)).items():
            written[kind] = written.get(kind, 0) + n
        tasks += len(keys)
        after_key = keys[-1]
    while (await store.run("lineage_unkinded_resolved_delete", limit=10_000))[0]["deleted"]:
        pass
    after = (await store.run("lineage_links_count"))[0]
    out = {"tasks": tasks}
    out |= {f"before_{k}": int(v) for k, v in before.items()}
    out |= {f"after_{k}": int(v) for k, v in after.items()}
    return out
