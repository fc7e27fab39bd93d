"""`metisgraph eval retrieval`: recall quality on a labelled set, through the public paths.

The corpus goes through the normal ingest pipeline into a fresh project namespace; each
query goes through the same recall code as the API (``recall_service.answer``), with the
query's own record excluded. Nothing here knows which set it reads. A question that fails
is reported and scored as a miss, and the run goes on; every project the corpus wrote is
removed afterwards.

A returned memory that holds others counts them (``ranked_ids``): an episode stands for
itself and the duplicates merged into it, a pattern for its members. The ranked list is
those ids in rank order, each once, so R@k always reads k corpus ids: figures with patterns
and merging on stay comparable with figures without.
"""

from __future__ import annotations

import json
import math
import statistics
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from metisgraph.api.eval.baselines import baseline_rankings
from metisgraph.api.eval.off_topic import OffTopic, ask_off_topic, gates_used
from metisgraph.api.graphql.recall_service import answer
from metisgraph.api.services import Services
from metisgraph.graph import (
    DEFAULT_MEMORY_TYPES,
    ConsolidationSettings,
    FeatureTable,
    RecallFilters,
    RecallOutcome,
    RecallSettings,
    consolidate,
)
from metisgraph.ingest import EnvironmentInput
from metisgraph.ingest.adapters import Parsed, Refused, read_path
from metisgraph.ingest.question import Question

__all__ = [
    "AskOptions",
    "EvalQuery",
    "RetrievalReport",
    "ask_all",
    "evaluate_retrieval",
    "load_queries",
    "metrics",
    "ranked_ids",
    "scored",
]

CUTOFFS = (1, 5, 10)


class RetrievalSetError(ValueError):
    """The set is not in the documented format (names the file, line and field)."""


@dataclass(frozen=True)
class EvalQuery:
    id: str
    project: str
    text: str
    error: str | None
    relevant: frozenset[str]
    exclude: frozenset[str]
    environment: EnvironmentInput | None = None  # the caller's, when the set states one


@dataclass
class RetrievalReport:
    n: int
    recall: dict[int, float]
    mrr10: float
    ndcg10: float
    latency_ms: dict[str, float]
    ingest: dict[str, int] = field(default_factory=dict)
    abstained: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)  # {id, error}: scored as misses
    rankings: dict[str, list[str]] = field(default_factory=dict)  # query id -> ranked ids
    patterns_top5: int = 0  # questions with a pattern among the first five memories
    maintain: list[dict[str, Any]] = field(default_factory=list)  # maintain's reports
    # answerable / off-topic abstentions and each project's threshold (api/eval/off_topic.py)
    abstention: dict[str, Any] = field(default_factory=dict)
    # The plain baselines over the same corpus and queries (api/eval/baselines.py)
    baselines: dict[str, dict[str, float]] = field(default_factory=dict)
    # Each question's shortlist features, when the settings keep them (train a ranker)
    features: dict[str, FeatureTable] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "abstention": self.abstention,
            "baselines": self.baselines,
            "patterns_top5": self.patterns_top5,
            "maintain": self.maintain,
            "n": self.n,
            "failed": len(self.failures),
            "failures": self.failures,
            **{f"recall@{k}": round(v, 4) for k, v in self.recall.items()},
            "mrr@10": round(self.mrr10, 4),
            "ndcg@10": round(self.ndcg10, 4),
            "latency_ms": {k: round(v, 2) for k, v in self.latency_ms.items()},
            "abstained": self.abstained,
            "ingest": self.ingest,
        }


def load_queries(path: Path) -> list[EvalQuery]:
    """The queries of a set; every bad line is named (line and field) before any is asked."""
    out: list[EvalQuery] = []
    problems: list[str] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise RetrievalSetError(f"{path}: not UTF-8: {exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(_query(json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: invalid JSON: {exc}")
        except _BadField as exc:
            problems.append(f"{path}:{number}: field {exc.field!r}: {exc.message}")
    if problems:
        shown = problems[:20] + (
            [f"... and {len(problems) - 20} more"] if len(problems) > 20 else []
        )
        raise RetrievalSetError("\n".join(shown))
    return out


class _BadField(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def _query(item: object) -> EvalQuery:
    if not isinstance(item, dict):
        raise _BadField("", "expected an object")

    def text(name: str, *, required: bool) -> str | None:
        value = item.get(name)
        if value is None and not required:
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise _BadField(name, f"expected a non-empty string, got {value!r}"[:120])
        return value

    def ids(name: str, *, required: bool) -> frozenset[str]:
        value = item.get(name)
        if value is None and not required:
            return frozenset()
        if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
            raise _BadField(name, f"expected a list of ids, got {value!r}"[:120])
        if required and not value:
            raise _BadField(name, "expected at least one id")
        return frozenset(map(str, value))

    identifier = item.get("id")
    if not isinstance(identifier, str | int):
        raise _BadField("id", f"expected a string, got {identifier!r}"[:120])
    question, error = text("text", required=False), text("error", required=False)
    if not (question or "").strip() and not (error or "").strip():
        raise _BadField("text", "a query needs a text or an error")
    return EvalQuery(
        id=str(identifier),
        project=text("project", required=True) or "",
        text=question or "",
        error=error,
        relevant=ids("relevant", required=True),
        exclude=ids("exclude", required=False),
        environment=_environment(item.get("environment")),
    )


def _environment(value: object) -> EnvironmentInput | None:
    """A query's optional environment (the shared sets carry none), validated as a caller's."""
    if value is None:
        return None
    try:
        return EnvironmentInput.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in ("environment", *first["loc"]))
        raise _BadField(where, first["msg"]) from None


def metrics(ranked: list[str], relevant: frozenset[str]) -> dict[str, float]:
    """Hit at 1/5/10, reciprocal rank and nDCG (binary gains) at 10 for one query."""
    out = {f"r{k}": float(any(r in relevant for r in ranked[:k])) for k in CUTOFFS}
    first = next((i for i, r in enumerate(ranked[:10], start=1) if r in relevant), None)
    out["mrr"] = 1.0 / first if first else 0.0
    dcg = sum(1 / math.log2(i + 1) for i, r in enumerate(ranked[:10], start=1) if r in relevant)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(relevant), 10) + 1))
    out["ndcg"] = dcg / ideal if ideal else 0.0
    return out


def _renamed(
    items: Iterator[Parsed | Refused], namespace: str, created: set[str]
) -> Iterator[Parsed | Refused]:
    """Every record moved into the namespace; each project it writes is added to ``created``."""
    for item in items:
        if isinstance(item, Parsed) and isinstance(getattr(item.record, "project", None), str):
            project = namespace + item.record.project
            created.add(project)
            yield Parsed(item.record.model_copy(update={"project": project}), item.ref)
        else:
            yield item


def ranked_ids(outcome: RecallOutcome) -> list[str]:
    """The corpus ids a result holds, in rank order, each once: an episode with its merged
    duplicates, a pattern with its members (the best-ranked member first)."""
    memories: list[tuple[int, list[str]]] = [
        (h.rank, [h.episode["id"], *h.duplicates]) for h in outcome.hits
    ]
    memories += [(p.rank, p.members) for p in outcome.patterns]
    ordered = [i for _, ids in sorted(memories, key=lambda m: m[0]) for i in ids]
    return list(dict.fromkeys(ordered))


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass
class _Tally:
    """Metric sums, latencies and abstentions over the questions asked so far."""

    totals: dict[str, float] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    abstained: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)
    rankings: dict[str, list[str]] = field(default_factory=dict)
    patterns_top5: int = 0
    features: dict[str, FeatureTable] = field(default_factory=dict)

    def add(self, q: EvalQuery, ranked: list[str], ms: float, abstained: bool) -> None:
        for name, value in metrics(ranked, q.relevant).items():
            self.totals[name] = self.totals.get(name, 0.0) + value
        self.rankings[q.id] = ranked
        self.latencies.append(ms)
        self.abstained += abstained


def check_set(directory: Path) -> list[EvalQuery]:
    """The set's files are there and its queries are well formed (nothing started yet)."""
    _, queries = _set_files(directory)
    return load_queries(queries)


def _set_files(directory: Path) -> tuple[Path, Path]:
    corpus, queries = directory / "corpus.jsonl", directory / "queries.jsonl"
    for path in (corpus, queries):
        if not path.is_file():
            raise RetrievalSetError(
                f"{path}: missing (a retrieval set has corpus.jsonl and queries.jsonl)"
            )
    return corpus, queries


@dataclass(frozen=True)
class AskOptions:
    """How the questions are asked: k, preset or explicit settings, memory types."""

    k: int = 10
    preset: str = "balanced"
    settings: RecallSettings | None = None
    memory_types: tuple[str, ...] = DEFAULT_MEMORY_TYPES
    abstain_below: float | None = None  # None: each project's measured threshold
    off_topic: tuple[OffTopic, ...] = ()  # asked too, in the set's projects in turn


async def ask_all(
    services: Services, queries: list[EvalQuery], namespace: str, options: AskOptions
) -> _Tally:
    tally = _Tally()
    for q in queries:
        question = Question(
            project=namespace + q.project,
            query=q.text or (q.error or "").strip().splitlines()[0],
            error=q.error,
            k=options.k,
            exclude=q.exclude,
            preset=options.preset,
            settings=options.settings,
            filters=RecallFilters(memory_types=options.memory_types),
            environment=q.environment,
            abstain_below=options.abstain_below,
        )
        started = time.perf_counter()
        try:
            result = await answer(services, question)
        except Exception as exc:  # one question's failure is reported; the run goes on
            tally.failures.append({"id": q.id, "error": f"{type(exc).__name__}: {exc}"[:500]})
            tally.add(q, [], (time.perf_counter() - started) * 1000, False)
            continue
        ranked = [i for i in ranked_ids(result) if i not in q.exclude]
        ms = (time.perf_counter() - started) * 1000
        tally.add(q, ranked, ms, result.abstained)
        if result.features is not None:
            tally.features[q.id] = result.features
        tally.patterns_top5 += any(p.rank <= 5 for p in result.patterns)
    return tally


async def _maintained(
    services: Services, projects: set[str], settings: ConsolidationSettings
) -> list[dict[str, Any]]:
    return [(await consolidate(services.store, p, settings)).as_dict() for p in sorted(projects)]


async def evaluate_retrieval(
    services: Services,
    directory: Path,
    *,
    k: int = 10,
    preset: str = "balanced",
    keep: bool = False,
    namespace: str | None = None,
    maintain: ConsolidationSettings | None = None,
    options: AskOptions | None = None,
    baselines: bool = True,
) -> RetrievalReport:
    """Ingest DIR/corpus.jsonl into a fresh namespace (then ``maintain`` it when given), ask
    DIR/queries.jsonl, measure; and the plain baselines over the same corpus and queries."""
    options = options or AskOptions(k=k, preset=preset)
    corpus, queries_file = _set_files(directory)
    queries = load_queries(queries_file)
    # A fixed namespace with keep=True lets a second run skip the embedding work: the
    # pipeline sees unchanged content and writes nothing.
    namespace = namespace or f"eval-{uuid.uuid4().hex[:8]}-"
    created: set[str] = set()
    try:
        summary = await services.ingestor.ingest(
            _renamed(read_path(corpus, format="corpus"), namespace, created)
        )
        maintained = await _maintained(services, created, maintain) if maintain else []
        tally = await ask_all(services, queries, namespace, options)
        abstention = await _abstention(services, tally, created, namespace, options)
        plain = await baseline_rankings(services, corpus, queries, namespace) if baselines else {}
    finally:
        if not keep:  # every project the corpus wrote, asked about or not
            for project in sorted(created):
                await services.store.run("forget_project", project=project)
    n = len(queries) or 1
    return RetrievalReport(
        n=len(queries),
        recall={c: tally.totals.get(f"r{c}", 0.0) / n for c in CUTOFFS},
        mrr10=tally.totals.get("mrr", 0.0) / n,
        ndcg10=tally.totals.get("ndcg", 0.0) / n,
        latency_ms={
            "p50": statistics.median(tally.latencies) if tally.latencies else 0.0,
            "p95": _percentile(tally.latencies, 0.95),
        },
        ingest=summary.as_dict(),
        abstained=tally.abstained,
        failures=tally.failures,
        rankings=tally.rankings,
        patterns_top5=tally.patterns_top5,
        maintain=maintained,
        abstention=abstention,
        baselines={name: scored(queries, ranked) for name, ranked in plain.items()},
        features=tally.features,
    )


async def _abstention(
    services: Services, tally: _Tally, created: set[str], namespace: str, options: AskOptions
) -> dict[str, Any]:
    """Abstentions on the answerable questions and on the off-topic ones, and the
    thresholds the projects were held to."""
    n = len(tally.rankings)
    rate = round(tally.abstained / n, 4) if n else None
    asked = options.abstain_below is not None
    out: dict[str, Any] = {
        "answerable": {"n": n, "abstained": tally.abstained, "rate": rate},
        "thresholds": "request" if asked else await gates_used(services, created, namespace),
    }
    if options.off_topic and created:
        off = await ask_off_topic(
            services,
            options.off_topic,
            sorted(created),
            k=options.k,
            preset=options.preset,
            abstain_below=options.abstain_below,
            memory_types=options.memory_types,
        )
        out["off_topic"] = off.as_json()
    return out


def scored(queries: list[EvalQuery], rankings: dict[str, list[str]]) -> dict[str, float]:
    """R@1/5/10, MRR@10 and nDCG@10 of ranked lists (query id -> ids), over the queries."""
    totals: dict[str, float] = {}
    for q in queries:
        for name, value in metrics(rankings.get(q.id, []), q.relevant).items():
            totals[name] = totals.get(name, 0.0) + value
    n = len(queries) or 1
    names = {"r1": "recall@1", "r5": "recall@5", "r10": "recall@10", "mrr": "mrr@10"}
    return {names.get(k, "ndcg@10"): round(v / n, 4) for k, v in totals.items()}
