"""Prepared snippets as rows for the named queries of cypher/snippets.cypher.

Occurrences of one snippet merge into one node row; links are deduplicated so every MERGE
runs once per batch. Symbols and versions are written only for snippets not stored yet:
they derive from the content, which a stored node already has. Files depend on where the
code was written, so every occurrence adds its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from metisgraph.graph import (
    CONFIDENCE,
    Query,
    add_evidence_steps,
    bridge_report_key,
    project_scope,
)
from metisgraph.ingest.snippets.prepare import PreparedSnippet

__all__ = ["symbol_tail", "write_steps"]

Row = dict[str, Any]
_TAIL = re.compile(r"[.:/#]+")
# The bridge read as feedback: code an episode generated or used, in an episode that ended
# one way or the other, reports that outcome about the code (not code it only modified).
_REPORTING = ("GENERATED", "USED")
_DECIDED = ("success", "failure")


def symbol_tail(name: str) -> str:
    """The last part of a dotted name: `pandas.read_sql` → `read_sql`."""
    parts = [p for p in _TAIL.split(name) if p]
    return parts[-1] if parts else name


def write_steps(
    snippets: Sequence[PreparedSnippet], embedded: Mapping[tuple[str, str], list[float]]
) -> list[tuple[str | Query, dict[str, Any]]]:
    """The queries that write these snippets, in the order they must run."""
    nodes = _node_rows(snippets, embedded)
    fresh = [s for s in _first_each(snippets) if not s.stored]
    bridge = _episode_rows(snippets)
    reported = [r for r in bridge if r["relation"] in _REPORTING and r["outcome"] in _DECIDED]
    # The reports the bridge may write, by snippet: either outcome (it reads the outcome on
    # every link of the episode to the snippet, an earlier one's too); only those it wrote
    # are marked pending, and add_evidence adds just those.
    told: dict[tuple[str, str], list[str]] = {}
    for r in reported:
        told.setdefault((r["project"], r["id"]), []).extend(
            bridge_report_key(r["episode_id"], r["id"], outcome) for outcome in _DECIDED
        )
    plan: list[tuple[str, Row]] = [
        ("upsert_snippets", {"rows": nodes}),
        ("link_snippet_episodes", {"rows": bridge}),
        # marked pending: add_evidence adds them to the snippets' totals, last
        ("bridge_outcome_reports", {"rows": reported, "pending": True}),
        ("link_snippet_requirements", {"rows": _requirement_rows(snippets)}),
        ("link_snippet_structure", {"rows": [_structure_row(s) for s in fresh]}),
        ("link_snippet_files", {"rows": _file_rows(snippets)}),
        ("link_snippet_versions", {"rows": [_version_row(s) for s in fresh if s.parent_id]}),
        # `recorded` is counted as links and records come: here only a snippet without it
        ("count_unset_snippet_recordings",
         {"rows": [{"project": r["project"], "id": r["id"]} for r in nodes]}),
    ]  # fmt: skip
    steps: list[tuple[str | Query, Row]] = [(name, p) for name, p in plan if p["rows"]]
    keys = [{"project": p, "id": i, "reports": told[p, i]} for p, i in sorted(told)]
    steps += add_evidence_steps("Snippet", keys)
    return steps


def _first_each(snippets: Iterable[PreparedSnippet]) -> list[PreparedSnippet]:
    seen: dict[tuple[str, str], PreparedSnippet] = {}
    for snippet in snippets:
        seen.setdefault((snippet.project, snippet.id), snippet)
    return list(seen.values())


def _node_rows(
    snippets: Sequence[PreparedSnippet], embedded: Mapping[tuple[str, str], list[float]]
) -> list[Row]:
    rows: dict[tuple[str, str], Row] = {}
    for s in snippets:
        key = (s.project, s.id)
        row = rows.get(key)
        if row is None:
            rows[key] = row = {
                "project": s.project, "id": s.id, "scope": project_scope(s.project),
                "props": s.props, "lineage": s.lineage,
                "version": s.version, "review_status": s.review_status, "name": s.name,
                "description": None, "tests": [], "examples": [], "record_keys": [], "files": [],
                "embedding": embedded.get(key), "prior": _prior(s.source), "test_command": None,
            }  # fmt: skip
        row["name"] = row["name"] or s.name
        row["description"] = row["description"] or s.description
        row["test_command"] = row["test_command"] or s.test_command
        row["tests"] = _union(row["tests"], s.tests)
        row["examples"] = _union(row["examples"], s.examples)
        row["record_keys"] = _union(row["record_keys"], [s.record_key] if s.record_key else [])
        row["files"] = _union(row["files"], (f["path"] for f in s.files))
    for row in rows.values():
        row["description"] = row["description"] or row["props"].get("docstring")
    return list(rows.values())


def _prior(source: str) -> Row:
    """The prior confidence of the first occurrence's source (graph/confidence.py)."""
    prior = CONFIDENCE.prior(source)
    return {"source": source, "mean": prior.mean, "strength": prior.strength}


def _union(kept: list[str], more: Iterable[str]) -> list[str]:
    return list(dict.fromkeys([*kept, *more]))


def _episode_rows(snippets: Sequence[PreparedSnippet]) -> list[Row]:
    rows: dict[tuple[str, str, str], Row] = {}
    for s in snippets:
        if s.episode_id and s.relation:
            rows.setdefault((s.project, s.id, s.episode_id), {
                "project": s.project, "id": s.id, "episode_id": s.episode_id,
                "relation": s.relation, "outcome": s.outcome, "verified": s.ran,
            })  # fmt: skip
    return list(rows.values())


def _requirement_rows(snippets: Sequence[PreparedSnippet]) -> list[Row]:
    """One row per snippet and package, with every range it was verified in ('' for any)."""
    rows: dict[tuple[str, str, str], Row] = {}
    for s in snippets:
        for requirement in s.requires:
            row = rows.setdefault((s.project, s.id, requirement.name), {
                "project": s.project, "id": s.id, "name": requirement.name, "specs": [],
            })  # fmt: skip
            row["specs"] = _union(row["specs"], [requirement.spec or ""])
    return list(rows.values())


def _structure_row(s: PreparedSnippet) -> Row:
    def symbols(names: Iterable[str]) -> list[Row]:
        return [{"name": n, "tail": symbol_tail(n)} for n in dict.fromkeys(names) if n]

    return {
        "project": s.project,
        "id": s.id,
        "imports": symbols(s.props["imports"]),
        "calls": symbols(s.props["calls"]),
        "touched": symbols(s.props["symbols"]),
    }


def _file_rows(snippets: Sequence[PreparedSnippet]) -> list[Row]:
    """The files each snippet touches: the same code may be written to several files."""
    rows: dict[tuple[str, str, str], Row] = {}
    for s in snippets:
        for file in s.files:
            rows.setdefault(
                (s.project, s.id, file["path"]), {"project": s.project, "id": s.id, **file}
            )
    return list(rows.values())


def _version_row(s: PreparedSnippet) -> Row:
    return {"project": s.project, "id": s.id, "parent_id": s.parent_id, "reason": s.reason}
