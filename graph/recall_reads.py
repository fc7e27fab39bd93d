"""What recall reads of its shortlist: the expansion of the best candidates, asked once the
channels are fused, or — on an otherwise idle server — early, for the full-text channels'
own shortlist while the vector channels are asked (`Early`), the rest after the fusion."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any

from metisgraph.graph.channel_registry import channel
from metisgraph.graph.channels import LIST_FILLER, ChannelAnswers
from metisgraph.graph.conflicts import Similarities, pairs_of
from metisgraph.graph.cypher import query
from metisgraph.graph.fusion import Fused, fuse
from metisgraph.graph.recall_request import RecallRequest
from metisgraph.graph.rows import moment_of_micros
from metisgraph.graph.snippets import with_episode_snippets
from metisgraph.graph.store import GraphStore

__all__ = [
    "EXPAND_EXTRA",
    "Early",
    "ShortlistReads",
    "expand_rows",
    "returnable",
    "shortlist_of",
    "shortlist_reads",
    "with_moments",
]

log = logging.getLogger("metisgraph.recall")
_Key = tuple[str, str]

EXPAND_EXTRA = 3  # candidates expanded per hit asked for: trust can reorder them
# A key no episode holds: the expansion's key lists are filled to one length, so that
# however many keys a read asks it meets the one plan (Neo4j plans a query again for each
# size group of a list parameter, ~0.3-0.5 s on first use).
_NO_KEY = {"project": LIST_FILLER, "id": LIST_FILLER}
# recall_expand's instants, sent as epoch microseconds (graph/rows.moment_of_micros)
_EPISODE_MOMENTS = ("created_at", "last_used_at", "confirmed_at", "active_at")
_TASK_MOMENTS = ("started_at", "ended_at")


def with_moments(row: dict[str, Any]) -> dict[str, Any]:
    """A row of recall_expand with its instants as datetimes."""
    episode, task = row["episode"], row.get("task")
    for key in _EPISODE_MOMENTS:
        episode[key] = moment_of_micros(episode.get(key))
    if task:
        for key in _TASK_MOMENTS:
            task[key] = moment_of_micros(task.get(key))
    row["clock"] = moment_of_micros(row.get("clock"))
    for tool in row.get("tools") or []:
        tool["last_used_at"] = moment_of_micros(tool.get("last_used_at"))
    return row


def returnable(fused: list[Fused]) -> list[Fused]:
    """The fused candidates recall may return, best first: a candidate only weak evidence
    found (one tag, one tool …) is not returned."""
    return [f for f in fused if len(f.scores) > 1 or any(channel(n).alone for n in f.scores)]


def shortlist_of(candidates: list[Fused], req: RecallRequest) -> list[Fused]:
    """The returnable candidates recall expands: the best k x 3."""
    return candidates[: req.k * EXPAND_EXTRA]


def _keys(keys: Sequence[_Key], size: int) -> list[dict[str, str]]:
    """Keys as the expansion's parameter, filled with `_NO_KEY` to ``size``."""
    asked = [{"project": p, "id": i} for p, i in keys]
    return asked + [_NO_KEY] * (size - len(asked))


async def expand_rows(
    store: GraphStore, req: RecallRequest, keys: Sequence[_Key], linked: Sequence[_Key]
) -> list[dict[str, Any]]:
    """recall_expand of ``keys``, and of the conflict partners of ``linked``: its lists
    filled to k x 3 and k keys, so that every read of a question meets one plan."""
    steps = query("recall_steps" if req.steps else "recall_no_steps").text
    expand = with_episode_snippets("recall_expand", steps=steps, keys=query("recall_keys").text)
    params = {
        "keys": _keys(keys, req.k * EXPAND_EXTRA),
        "linked": _keys(linked, req.k),
    }
    return [with_moments(row) for row in await store.run_query(expand, params)]


@dataclass(frozen=True)
class ShortlistReads:
    """What recall reads of its shortlist after the fusion (`shortlist_reads`)."""

    rows: list[dict[str, Any]]  # recall_expand's, of the keys not read early and the partners
    patterns: list[dict[str, Any]]  # recall_patterns' rows
    alike: Similarities  # how alike each pair is (empty when no conflict is looked for)


async def shortlist_reads(
    store: GraphStore,
    req: RecallRequest,
    keys: Sequence[_Key],
    done: frozenset[_Key],
    vector: list[float],
) -> ShortlistReads:
    """The fused shortlist's reads in one round trip (recall_shortlist): the expansion of
    ``keys`` less ``done`` (read early) and of the conflict partners of the first k, the
    patterns that summarize some of them, and how alike each pair is — three queries that
    were three statements, each part the named query it was."""
    if not keys:
        return ShortlistReads([], [], {})
    sources = list(keys[: req.k]) if req.conflicts else []
    steps = query("recall_steps" if req.steps else "recall_no_steps").text
    left = f"{query('recall_keys').text}\n{query('recall_keys_left').text}"
    expand = with_episode_snippets("recall_expand", steps=steps, keys=left)
    if req.filters.wants("pattern"):
        patterns = query("recall_shortlist_patterns").filled(patterns=query("recall_patterns").text)
    else:
        patterns = query("recall_shortlist_no_patterns")
    if req.conflicts:
        similar = query("episode_similarities").filled(keys=query("recall_keys").text)
        alike = query("recall_shortlist_similarities").filled(similarities=similar.text)
    else:
        alike = query("recall_shortlist_no_similarities")
    together = query("recall_shortlist").filled(
        expand=expand.text, patterns=patterns.text, similarities=alike.text
    )
    params = {
        "keys": _keys(keys, req.k * EXPAND_EXTRA),
        "linked": _keys(sources, req.k),
        "done": _keys(sorted(done), req.k * EXPAND_EXTRA),
        "min_support": req.settings.pattern_min_support,
        "vector": vector,
        "members": req.settings.pattern_members,
    }
    row = (await store.run_query(together, params))[0]
    return ShortlistReads(
        rows=[with_moments(r) for r in row["expanded"]],
        patterns=list(row["patterns"]),
        alike=pairs_of(row["pairs"]),
    )


class Early:
    """The expansion of the lexical channels' shortlist, asked while the vector channels are.

    The lexical union answers while the question is embedded; its own shortlist holds most
    of the final one (11 of 15 on the bench's questions). Expanding those beside the vector
    union leaves the expansion after it only the rest: a core that would wait does the work
    first. Asked only when the server is otherwise idle (``recall``): under load the keys
    that do not make the shortlist are work another caller's question needs."""

    def __init__(
        self, store: GraphStore, req: RecallRequest, lexical: Awaitable[ChannelAnswers]
    ) -> None:
        self.keys: frozenset[_Key] | None = None  # known once the lexical union answered
        self.task = asyncio.ensure_future(self._read(store, req, lexical))

    async def _read(
        self, store: GraphStore, req: RecallRequest, lexical: Awaitable[ChannelAnswers]
    ) -> list[dict[str, Any]] | None:
        found = await lexical
        keys = [f.key for f in shortlist_of(returnable(fuse(found.candidates, req.settings)), req)]
        self.keys = frozenset(keys)
        if not keys:
            return []
        try:
            return await expand_rows(store, req, keys, ())
        except Exception:  # None: `_expand` reads them with the rest
            log.debug("recall's early expansion failed; read after the channels", exc_info=True)
            return None

    async def stop(self) -> None:
        if not self.task.done():
            self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
