"""Code memory for the pipeline: find, analyse, version and write the snippets of a batch.

Identity is content: the project and the analysis' content key (the template with comments
and layout removed), so the same code recorded again is the same node, counted once per
episode or record that holds it. New code in a known lineage becomes the next version.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from metisgraph.graph import GraphStore, Query, lineage_heads, snippet_state
from metisgraph.ingest.code import SnippetAnalysis, analyze_snippet
from metisgraph.ingest.environment import extract_environment
from metisgraph.ingest.prepare.episode import PreparedEpisode
from metisgraph.ingest.records import SnippetRecord, SnippetRelation
from metisgraph.ingest.snippets.prepare import PreparedSnippet, prepare_occurrence
from metisgraph.ingest.snippets.rows import write_steps
from metisgraph.ingest.snippets.runner_commands import attach_test_commands
from metisgraph.ingest.snippets.sources import Occurrence, episode_occurrences, input_occurrence
from metisgraph.ingest.snippets.verdicts import verdict_for
from metisgraph.ingest.snippets.versions import change_summary

__all__ = [
    "PreparedSnippet",
    "place_versions",
    "prepare_snippets",
    "snippet_record_results",
    "snippet_write_steps",
    "snippets_to_embed",
    "verdict_for",
]


def prepare_snippets(
    episodes: list[PreparedEpisode], records: list[SnippetRecord]
) -> list[PreparedSnippet]:
    """Every snippet of the batch: from each episode, then each snippet record, analysed."""
    analyse = _Analyser()
    out: list[PreparedSnippet] = []
    for episode in episodes:
        packages = dict(episode.environment.packages) if episode.environment else {}
        seen: set[str] = set()
        for occurrence in episode_occurrences(episode):
            snippet = analyse(occurrence, episode.project, packages, episode.task_id)
            if snippet is None or snippet.id in seen:
                continue  # the first finding of a piece of code in an episode decides its relation
            seen.add(snippet.id)
            snippet.episode_id = episode.id
            snippet.outcome = episode.props.get("outcome")
            snippet.source = str(episode.props.get("source") or snippet.source)
            out.append(snippet)
    attach_test_commands(episodes, out)
    for record in records:
        stated = extract_environment((), record.environment) if record.environment else None
        packages = dict(stated.packages) if stated else {}  # as stored: names settled, redacted
        snippet = analyse(input_occurrence(record, "record"), record.project, packages, None)
        if snippet is None:
            continue
        snippet.record = record
        snippet.episode_id = record.episode_id
        snippet.record_key = _record_key(record, snippet)
        out.append(snippet)
    return out


class _Analyser:
    """analyze_snippet once per distinct code, language, kind, path and environment."""

    def __init__(self) -> None:
        self._cache: dict[tuple[Any, ...], SnippetAnalysis | None] = {}

    def __call__(
        self, found: Occurrence, project: str, packages: dict[str, str], task_id: str | None
    ) -> PreparedSnippet | None:
        key = (found.code, found.language, found.kind, found.path, tuple(sorted(packages.items())))
        if key not in self._cache:
            self._cache[key] = _analyse(found, packages)
        analysis = self._cache[key]
        if analysis is None:
            return None
        return prepare_occurrence(found, analysis, project, task_id)


def _analyse(found: Occurrence, packages: dict[str, str]) -> SnippetAnalysis | None:
    if not found.code.strip():
        return None  # blank code has nothing to remember
    return analyze_snippet(
        found.code, found.language, found.kind, path=found.path, environment=packages
    )


def _record_key(record: SnippetRecord, snippet: PreparedSnippet) -> str:
    """One recording per record id; an anonymous record counts once per what it says."""
    if record.id:
        return f"record:{record.id}"
    blob = json.dumps([snippet.id, record.episode_id, snippet.name, snippet.description])
    return "record:anonymous:" + hashlib.sha256(blob.encode()).hexdigest()[:16]


async def snippets_to_embed(
    store: GraphStore, snippets: list[PreparedSnippet]
) -> list[PreparedSnippet]:
    """The snippets not yet stored with an embedding, once each; notes on every occurrence
    whether its node and its recording are stored already, and whether it ever worked."""
    keys = {(s.project, s.id, s.record_key) for s in snippets}
    state = await snippet_state(
        store, [{"project": p, "id": i, "record_key": r} for p, i, r in sorted(keys, key=str)]
    )
    todo: dict[tuple[str, str], PreparedSnippet] = {}
    for snippet in snippets:
        found = state.get((snippet.project, snippet.id, snippet.record_key))
        snippet.stored = found is not None
        snippet.known = bool(found and found["known_record"])
        snippet.worked = bool(found and found["worked"])
        if not (found and found["embedded"]):
            todo.setdefault((snippet.project, snippet.id), snippet)
    return list(todo.values())


async def place_versions(store: GraphStore, snippets: list[PreparedSnippet]) -> None:
    """Give each new snippet in a known lineage the next version, its parent and the reason.

    Runs after `snippets_to_embed` (which says what is stored). Within a batch, versions
    follow the order of the records; an extracted snippet that changes code becomes MODIFIED.
    """
    if any(s.stored is None for s in snippets):
        raise ValueError("place_versions needs the stored state from snippets_to_embed")
    fresh = [s for s in snippets if not s.stored and s.lineage]
    if not fresh:
        return
    heads = await lineage_heads(
        store,
        [
            {"project": p, "lineage": lin}
            for p, lin in sorted({(s.project, s.lineage) for s in fresh})
        ],
    )
    placed: dict[str, PreparedSnippet] = {}
    for snippet in fresh:
        key = (snippet.project, str(snippet.lineage))
        if snippet.id in placed:
            _copy_version(placed[snippet.id], snippet)
            continue
        head = heads.get(key)
        if head is not None and head["id"] != snippet.id:
            snippet.version = int(head["version"] or 1) + 1
            snippet.parent_id = head["id"]
            snippet.reason = snippet.description or change_summary(head, snippet.props)
            if not snippet.relation_given:
                snippet.relation = SnippetRelation.modified.value
        heads[key] = {"id": snippet.id, "version": snippet.version, **snippet.props}
        placed[snippet.id] = snippet


def _copy_version(first: PreparedSnippet, other: PreparedSnippet) -> None:
    other.version, other.parent_id, other.reason = first.version, first.parent_id, first.reason
    if first.parent_id and not other.relation_given:
        other.relation = SnippetRelation.modified.value


def snippet_record_results(
    records: Sequence[SnippetRecord], snippets: Sequence[PreparedSnippet]
) -> list[tuple[str | None, str, list[str]]]:
    """(id, written | unchanged | refused, errors) for each snippet record, in order.

    A record is unchanged when its snippet already held this very recording.
    """
    by_record = {id(s.record): s for s in snippets if s.record is not None}
    results: list[tuple[str | None, str, list[str]]] = []
    for record in records:
        snippet = by_record.get(id(record))
        if snippet is None:
            results.append((None, "refused", ["code: must contain more than white space"]))
        else:
            results.append((snippet.id, "unchanged" if snippet.known else "written", []))
    return results


def snippet_write_steps(
    snippets: Sequence[PreparedSnippet], embedded: Mapping[tuple[str, str], list[float]]
) -> list[tuple[str | Query, dict[str, Any]]]:
    """The named queries (cypher/snippets.cypher) that write these snippets, in order."""
    return write_steps(snippets, embedded)
