"""What an ingest run did: a result per record, the counts, and the dead-letter file of
refused records.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from metisgraph.graph import COUNTERS, WriteBatch
from metisgraph.ingest.adapters import MAX_DEPTH, Refused
from metisgraph.ingest.pipeline.batches import Done
from metisgraph.ingest.sanitize import redact, redact_value
from metisgraph.ingest.snippets.batch import snippet_record_results

__all__ = ["DeadLetter", "IngestRun", "IngestSummary", "RecordResult"]


@dataclass
class RecordResult:
    """What happened to one record: its id and whether it was written, unchanged or refused."""

    kind: str
    id: str | None
    status: str  # written | unchanged | refused
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # stored, but not whole (e.g. a long log cut)


@dataclass
class IngestSummary:
    read: int = 0
    tasks: int = 0
    written: int = 0
    unchanged: int = 0
    refused: int = 0
    errors: int = 0
    environments: int = 0
    tools: int = 0
    snippets: int = 0
    verdicts: int = 0  # harness verdicts read (run, instance)
    cut: int = 0  # episodes stored with a text cut to its head and tail
    refusals: list[Refused] = field(default_factory=list)
    results: list[RecordResult] = field(default_factory=list)
    # What was linked, by key: an error seen in every batch is still one error.
    seen: dict[str, set[tuple[str, str]]] = field(default_factory=dict, repr=False)

    def saw(self, what: str, keys: Iterable[tuple[str, str]]) -> None:
        """Count distinct errors, environments, tools or snippets across every batch."""
        known = self.seen.setdefault(what, set())
        known.update(keys)
        setattr(self, what, len(known))

    def as_dict(self) -> dict[str, int]:
        keys = (
            "read",
            "tasks",
            "written",
            "unchanged",
            "refused",
            "errors",
            "environments",
            "tools",
            "snippets",
            "verdicts",
            "cut",
        )
        return {k: getattr(self, k) for k in keys}


class DeadLetter:
    """Refused records, one JSON object a line, with where they came from and why.

    Only their owner can read the file (0600), and what it keeps is redacted like
    everything we store: where and why stay exact, secrets in the record do not survive.
    """

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle

    @classmethod
    def open(cls, path: Path) -> DeadLetter:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # a file made earlier with the default mode is narrowed too
        return cls(os.fdopen(fd, "a", encoding="utf-8"))

    def keep(self, refused: Refused) -> None:
        entry = refused.as_dead_letter()
        entry["raw"] = redact_value(_within_depth(entry["raw"], 0))
        entry["errors"] = [
            {"field": e.field, "message": redact(e.message).text} for e in refused.errors
        ]
        # ASCII escapes keep a lone surrogate (a reason to refuse) exactly, as valid JSON.
        self._handle.write(json.dumps(entry, default=str, ensure_ascii=True) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def _within_depth(value: object, depth: int) -> object:
    """The value with what lies deeper than ``MAX_DEPTH`` replaced by a note (so walking it
    cannot exhaust the stack: it is what the record was refused for)."""
    if not isinstance(value, Mapping | list | tuple):
        return value
    if depth >= MAX_DEPTH:
        return f"[… nested deeper than {MAX_DEPTH} levels: cut here …]"
    if isinstance(value, Mapping):
        return {str(k): _within_depth(v, depth + 1) for k, v in value.items()}
    return [_within_depth(v, depth + 1) for v in value]


@dataclass
class IngestRun:
    """One ingest call's bookkeeping: a batch is counted once it is stored, a refusal at once."""

    summary: IngestSummary
    keep_results: bool = False
    dead_letter: DeadLetter | None = None
    on_progress: Callable[[int], None] | None = None

    def refused(self, item: Refused) -> None:
        summary = self.summary
        summary.read += 1
        summary.refused += 1
        COUNTERS.increment("ingest_records", outcome="refused")
        summary.refusals.append(item)
        if self.keep_results:
            summary.results.append(RecordResult("record", None, "refused", [item.describe()]))
        if self.dead_letter is not None:
            self.dead_letter.keep(item)
        if self.on_progress:
            self.on_progress(1)

    def stored(self, done: Done, rows: WriteBatch) -> None:
        """Count a batch once it is written."""
        summary, changed = self.summary, done.changed
        # Each record by its id, as in the results: a version replaced later in the same
        # batch counts as its id's last version does (written or unchanged).
        keys = {(e.project, e.id) for e in changed}
        written = sum((e.project, e.id) in keys for e in done.episodes)
        summary.read += len(done.batch)
        summary.tasks += len(done.tasks)
        summary.written += written
        summary.unchanged += len(done.episodes) - written
        COUNTERS.increment("ingest_records", len(done.tasks), outcome="task")
        COUNTERS.increment("ingest_records", written, outcome="written")
        COUNTERS.increment("ingest_records", len(done.episodes) - written, outcome="unchanged")
        summary.cut += sum(bool(e.cut) for e in changed)
        summary.saw("snippets", ((s.project, s.id) for s in done.snippets))
        summary.saw("errors", ((r["project"], r["key"]) for r in rows.errors))
        summary.saw("environments", ((r["project"], r["key"]) for r in rows.environments))
        summary.saw("tools", ((r["project"], r["name"]) for r in rows.tools))
        if self.keep_results:
            self._results(done)
        if self.on_progress:
            self.on_progress(len(done.batch))

    def _results(self, done: Done) -> None:
        results = self.summary.results
        results.extend(RecordResult("task", t.id, "written") for t in done.tasks)
        changed_ids = {(e.project, e.id) for e in done.changed}
        results.extend(
            RecordResult(
                "episode",
                e.id,
                "written" if (e.project, e.id) in changed_ids else "unchanged",
                notes=e.notes(),
            )
            for e in done.episodes
        )
        results.extend(
            RecordResult("snippet", sid, status, errors)
            for sid, status, errors in snippet_record_results(done.batch.snippets, done.snippets)
        )
