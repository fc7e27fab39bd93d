"""Recall over HTTP next to a flat vector-store baseline, on the same corpus and questions.

metisgraph runs as `metisgraph serve` (uvicorn) in a subprocess against the benchmark's
Neo4j; the baseline is ChromaDB with the same MiniLM vectors behind a small uvicorn app
(bench/chroma_server.py). Beside them, three floors in the same Neo4j
(bench/neo4j_vector_server.py): one vector search, and two hybrid answers (a full-text and a
vector search fused; the same with recall's expansion of the k returned). Each question goes
to every system, in an order that rotates, one request at a time; latency is the client's
wall time for the HTTP request.

Then the throughput phase: 8 clients (threads, each with its own connection) take the
next question in turn, against one system at a time. Its questions are new to every system
(metisgraph remembers question vectors, the baselines embed every time), and all get the
same ones: pass 1 metisgraph, ChromaDB, the floors on one half, pass 2 the reverse on the
other, so a load that drifts during the run weighs on all alike. The floors are what the
store itself serves at that concurrency, for one search and for a hybrid answer. It reports
requests per second, p50/p95 under concurrency, R@5 and the errors.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import math
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.corpus import Corpus, Query
from bench.database import BenchNeo4j
from bench.ingest_bench import parsed_items
from bench.long_questions import LONG_SETS, long_questions
from metisgraph.graph.store import GraphStore
from metisgraph.ingest.embeddings import Embedder
from metisgraph.ingest.pipeline import Ingestor
from metisgraph.ingest.prepare.episode import PIPELINE_VERSION

__all__ = ["RecallFigures", "bench_recall", "load_corpus"]

ROOT = Path(__file__).resolve().parents[1]
GENERATOR_VERSION = "1"
_WARMUP = 20  # questions asked first and not measured
# How many warm-up asks, cycling through those 20 (the measured and throughput questions stay
# the same whatever the number). Neo4j's JIT needs thousands of queries to reach its steady
# state on this machine (a trivial read took 3.2 ms of wall time in the first 2,000, 1.0 ms
# after 10,000), so a short warm-up measures a JVM no long-running service is: `--warmup`.
WARMUP_ASKS = 20
LONG_QUESTIONS = 100  # the long-question phase (bench/long_questions.py)
_AGAINST_OFFSET = 100  # `--against`: the other checkout's server on the API port + 100
CLIENTS = 8  # concurrent clients in the throughput phase (issue 13 asks for 8)
RECALL = """
query Recall($project: String!, $query: String!, $error: String) {
  recall(project: $project, query: $query, k: 5, context: {error: $error}) {
    abstained
    hits {
      score
      episode { id summary outcome }
      task { id goal status }
      errors { key kind }
      environment { key os runtime }
      snippets { relation compatible snippet { id name kind } }
    }
  }
}
"""


def corpus_signature(seed: int, size: int, model: str, vectors: str) -> str:
    parts = f"{seed}:{size}:{model}:{vectors}:{PIPELINE_VERSION}:{GENERATOR_VERSION}"
    return hashlib.sha256(parts.encode()).hexdigest()[:12]


async def load_corpus(
    store: GraphStore, embedder: Embedder, corpus: Corpus, signature: str, batch_size: int
) -> dict[str, Any]:
    """Ingest the corpus unless this very corpus is loaded already; what it took."""
    rows = await store.run("bench_corpus_signature", project=corpus.project)
    if rows and rows[0]["signature"] == signature:
        return {"reused": True}
    if rows:
        await store.run("forget_project", project=corpus.project)
    started = time.perf_counter()
    summary = await Ingestor(store, embedder, batch_size=batch_size).ingest(parsed_items(corpus))
    seconds = time.perf_counter() - started
    await store.run("bench_mark_corpus", project=corpus.project, signature=signature)
    return {"reused": False, "seconds": round(seconds, 1), **summary.as_dict()}


async def build_chroma(store: GraphStore, project: str, path: Path, size: int) -> str:
    """A Chroma collection of the stored episode vectors (reused when complete)."""
    import chromadb

    client = chromadb.PersistentClient(path=str(path))
    name = "episodes"
    existing = {c.name for c in client.list_collections()}
    if name in existing and client.get_collection(name).count() == size:
        return name
    if name in existing:
        client.delete_collection(name)
    collection = client.create_collection(name, metadata={"hnsw:space": "cosine"})
    after = ""
    while True:
        rows = await store.run("bench_episode_vectors", project=project, after=after, limit=5000)
        if not rows:
            break
        collection.add(
            ids=[r["id"] for r in rows],
            embeddings=[r["embedding"] for r in rows],
            documents=[r["summary"] for r in rows],
        )
        after = rows[-1]["id"]
    return name


@contextlib.contextmanager
def _server(cmd: list[str], env: dict[str, str], ready_url: str, log: Path) -> Iterator[None]:
    with log.open("w") as out:
        process = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"{cmd[0]} exited with {process.returncode}; see {log}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(ready_url, timeout=2).status_code == 200:
                    break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"{ready_url} never became ready; see {log}")
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def metisgraph_server(
    neo4j: BenchNeo4j, port: int, log: Path, executable: Path | None = None
) -> Iterator[str]:
    """`metisgraph serve` on the corpus's Neo4j: this checkout's, or ``executable`` (another
    checkout's `metisgraph`, for a side-by-side run)."""
    env = {
        **os.environ,
        "NEO4J_URI": neo4j.uri,
        "NEO4J_USERNAME": "neo4j",
        "NEO4J_PASSWORD": neo4j.password,
        "METISGRAPH_HOST": "127.0.0.1",
        "METISGRAPH_PORT": str(port),
    }
    cmd = [str(executable or Path(sys.executable).parent / "metisgraph"), "serve"]
    base = f"http://127.0.0.1:{port}"
    with _server(cmd, env, f"{base}/readyz", log):
        yield f"{base}/graphql"


@contextlib.contextmanager
def _query_server(script: str, options: list[str], port: int, log: Path) -> Iterator[str]:
    """One of bench/'s small uvicorn apps answering POST /query with {"ids": [...]}."""
    cmd = [sys.executable, str(ROOT / "bench" / script), *options, "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with _server(cmd, dict(os.environ), f"{base}/readyz", log):
        yield f"{base}/query"


def floor_server(
    neo4j: BenchNeo4j, project: str, port: int, log: Path, hybrid: str | None = None
) -> contextlib.AbstractContextManager[str]:
    """bench/neo4j_vector_server.py: one vector search in the same Neo4j (the floor); with
    ``hybrid``, the floor of a hybrid answer: a full-text search beside it, the two fused
    ("search"), and recall's expansion of the k returned ("read")."""
    options = ["--uri", neo4j.uri, "--password", neo4j.password, "--project", project]
    if hybrid:
        options += ["--hybrid", hybrid]
    return _query_server("neo4j_vector_server.py", options, port, log)


def chroma_server(
    path: Path, collection: str, port: int, log: Path
) -> contextlib.AbstractContextManager[str]:
    """bench/chroma_server.py: the flat vector-store baseline."""
    options = ["--path", str(path), "--collection", collection]
    return _query_server("chroma_server.py", options, port, log)


def listening_pid(port: int) -> int:
    """The process listening on ``port`` on loopback (IndexError/ValueError: none)."""
    out = subprocess.run(
        ["ss", "-ltnp", f"sport = :{port}"], capture_output=True, text=True, check=False
    ).stdout
    return int(out.split("pid=")[1].split(",")[0])


def rss_mb(port: int) -> float | None:
    """Resident memory (MB) of the process listening on ``port`` on loopback (from /proc)."""
    try:
        pid = listening_pid(port)
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (IndexError, ValueError, OSError):
        return None
    return None


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass
class SystemFigures:
    latencies_ms: list[float] = field(default_factory=list)
    hits: int = 0
    abstained: int = 0
    server_ms: dict[str, float] = field(default_factory=dict)  # mean of each recall stage

    def summary(self, n: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "p50_ms": round(statistics.median(self.latencies_ms), 2),
            "p95_ms": round(percentile(self.latencies_ms, 0.95), 2),
            "mean_ms": round(statistics.mean(self.latencies_ms), 2),
            "recall@5": round(self.hits / n, 4),
        }
        if self.server_ms:
            out["abstained"] = self.abstained
            out["server_mean_ms"] = {k: round(v, 2) for k, v in sorted(self.server_ms.items())}
        return out


@dataclass
class RecallFigures:
    size: int
    queries: int
    metisgraph: dict[str, Any]
    chroma: dict[str, Any]
    latency_ratio_p50: float
    latency_ratio_p95: float
    load: dict[str, Any]
    warmup: int = WARMUP_ASKS
    throughput: dict[str, Any] = field(default_factory=dict)
    # One vector search in the same Neo4j, asked in the same rotation: the floor of any
    # answer from this store, and its ratio to ChromaDB.
    neo4j_vector: dict[str, Any] = field(default_factory=dict)
    floor_ratio_p50: float | None = None
    floor_ratio_p95: float | None = None
    # The floor of a hybrid answer (bench/neo4j_vector_server.py --hybrid), in the rotation too:
    # what this store allows an answer that searches text and vectors and reads the graph
    # (`hybrid`), or that only searches both (`hybrid_search`).
    hybrid: dict[str, Any] = field(default_factory=dict)
    hybrid_search: dict[str, Any] = field(default_factory=dict)
    rss_mb: dict[str, float | None] = field(default_factory=dict)  # after the throughput phase
    before: dict[str, Any] = field(default_factory=dict)  # `--against`: the other checkout
    long_questions: dict[str, Any] = field(default_factory=dict)  # pasted traces and reports
    cold_start: dict[str, Any] = field(default_factory=dict)  # the first questions, alone


def _ask_metisgraph(
    client: httpx.Client, url: str, project: str, q: Query
) -> tuple[list[str], dict[str, Any]]:
    variables = {"project": project, "query": q.text, "error": q.error}
    response = client.post(url, json={"query": RECALL, "variables": variables})
    response.raise_for_status()
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(f"recall failed: {body['errors']}")
    result = body["data"]["recall"]
    return [h["episode"]["id"] for h in result["hits"]], result


_STAGE = "metisgraph_recall_stage_duration_seconds"


def _stage_seconds(client: httpx.Client, graphql_url: str) -> dict[str, tuple[float, float]]:
    """Recall's stages as the server's /metrics has them: (seconds in all, recalls)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = client.get(graphql_url.removesuffix("/graphql") + "/metrics").text
    stages: dict[str, tuple[float, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            stage = sample.labels.get("stage")
            if stage and sample.name in (f"{_STAGE}_sum", f"{_STAGE}_count"):
                total, count = stages.get(stage, (0.0, 0.0))
                if sample.name.endswith("_sum"):
                    stages[stage] = (sample.value, count)
                else:
                    stages[stage] = (total, sample.value)
    return stages


def _stage_means_ms(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]]
) -> dict[str, float]:
    out: dict[str, float] = {}
    for stage, (total, count) in after.items():
        was_total, was_count = before.get(stage, (0.0, 0.0))
        if count > was_count:
            out[stage] = (total - was_total) / (count - was_count) * 1000
    return out


def _ask_ids(client: httpx.Client, url: str, q: Query) -> list[str]:
    """One question to a /query server (ChromaDB or the Neo4j floor): the ids it returns."""
    text = f"{q.text}\n{q.error}" if q.error else q.text
    response = client.post(url, json={"text": text, "k": 5})
    response.raise_for_status()
    return list(response.json()["ids"])


@dataclass
class ConcurrentFigures:
    """One system's passes of the throughput phase, added up."""

    latencies_ms: list[float] = field(default_factory=list)  # answered requests only
    seconds: float = 0.0  # wall time of its passes, first request sent to last answer
    hits: int = 0
    errors: Counter[str] = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        answered = len(self.latencies_ms)
        out: dict[str, Any] = {
            "requests": answered + sum(self.errors.values()),
            "errors": dict(self.errors),
            "seconds": round(self.seconds, 2),
            "rps": round(answered / self.seconds, 2) if self.seconds else 0.0,
        }
        if answered:
            out["p50_ms"] = round(statistics.median(self.latencies_ms), 2)
            out["p95_ms"] = round(percentile(self.latencies_ms, 0.95), 2)
            out["recall@5"] = round(self.hits / answered, 4)
        return out


Asker = Callable[[httpx.Client, Query], list[str]]
# A system asked one question: the ids it returns, and recall's answer when it is metisgraph.
Ask = Callable[[httpx.Client, Query], tuple[list[str], dict[str, Any] | None]]


def _concurrent_pass(
    ask: Asker, queries: list[Query], clients: int, figures: ConcurrentFigures
) -> None:
    """Every question asked once, by ``clients`` threads taking the next one in turn."""
    lock = threading.Lock()
    pending = iter(queries)

    def client_loop() -> None:
        with httpx.Client(timeout=60) as client:
            while True:
                with lock:
                    q = next(pending, None)
                if q is None:
                    return
                started = time.perf_counter()
                try:
                    ids = ask(client, q)
                except Exception as error:  # counted, not raised: errors are a figure here
                    kind = type(error).__name__
                    if isinstance(error, httpx.HTTPStatusError):
                        kind = f"HTTP {error.response.status_code}"
                    with lock:
                        figures.errors[kind] += 1
                    continue
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    figures.latencies_ms.append(elapsed)
                    figures.hits += any(i in q.relevant for i in ids[:5])

    threads = [threading.Thread(target=client_loop) for _ in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    figures.seconds += time.perf_counter() - started


def run_throughput(
    askers: dict[str, Ask], halves: tuple[list[Query], list[Query]], clients: int = CLIENTS
) -> dict[str, Any]:
    """Requests per second with ``clients`` at once, each system alone: A B (C ...) on the
    first half of the questions, (... C) B A on the second. The floor (one vector search in
    the same Neo4j, the question embedded on as many lanes) is asked too: what the store
    itself serves at this concurrency, against which metisgraph's and ChromaDB's figures
    are read (``rps_ratio``: ChromaDB ÷ metisgraph; ``floor_rps_ratio``: ChromaDB ÷ the
    floor; ``of_floor``: metisgraph ÷ the floor)."""
    figures = {name: ConcurrentFigures() for name in askers}
    names = list(askers)
    for questions, order in ((halves[0], names), (halves[1], names[::-1])):
        for name in order:
            ask = askers[name]
            _concurrent_pass(lambda c, q, ask=ask: ask(c, q)[0], questions, clients, figures[name])
    out: dict[str, Any] = {"clients": clients, "passes": 2}
    out |= {name: f.summary() for name, f in figures.items()}
    m, c = out["metisgraph"], out["chroma"]
    out["rps_ratio"] = round(c["rps"] / m["rps"], 2) if m["rps"] else None
    if "floor" in out:
        f = out["floor"]
        out["floor_rps_ratio"] = round(c["rps"] / f["rps"], 2) if f["rps"] else None
        out["of_floor"] = round(m["rps"] / f["rps"], 2) if f["rps"] else None
    for name in ("hybrid", "hybrid_search"):  # ChromaDB ÷ the floor of a hybrid answer
        if name in out:
            h = out[name]
            out[f"{name}_rps_ratio"] = round(c["rps"] / h["rps"], 2) if h["rps"] else None
    return out


def _orders(names: list[str]) -> list[list[str]]:
    """Each system first, second, ... equally often: every rotation and its reverse (for
    three systems, every permutation)."""
    out: list[list[str]] = []
    for shift in range(len(names)):
        turn = names[shift:] + names[:shift]
        out += [turn, turn[::-1]]
    return out


def run_queries(
    askers: dict[str, Ask], queries: list[Query], warmup: list[Query], metrics: dict[str, str]
) -> dict[str, SystemFigures]:
    """Warm up on questions that are not measured (metisgraph remembers question vectors).
    Each question goes to every system, the order rotating so that each is first as often
    as the others. ``metrics``: the systems with recall's stage timings on /metrics (their
    GraphQL URL): the stages' means over the measured questions."""
    figures = {name: SystemFigures() for name in askers}
    orders = _orders(list(askers))
    with httpx.Client(timeout=60) as client:
        for q in warmup:
            for ask in askers.values():
                ask(client, q)
        stages = {name: _stage_seconds(client, url) for name, url in metrics.items()}
        for number, q in enumerate(queries):
            for name in orders[number % len(orders)]:
                started = time.perf_counter()
                ids, result = askers[name](client, q)
                system = figures[name]
                system.latencies_ms.append((time.perf_counter() - started) * 1000)
                system.hits += any(i in q.relevant for i in ids[:5])
                if result is not None:
                    system.abstained += bool(result["abstained"])
        for name, url in metrics.items():
            figures[name].server_ms = _stage_means_ms(stages[name], _stage_seconds(client, url))
    return figures


def _throughput_questions(
    corpus: Corpus, count: int, seen: set[str]
) -> tuple[list[Query], list[Query]]:
    """``count`` questions neither system was asked before, in two halves."""
    more = corpus.queries(count + _WARMUP + count)[count + _WARMUP :]
    fresh = [q for q in more if q.text not in seen]
    middle = len(fresh) // 2
    return fresh[:middle], fresh[middle:]


def _cold_questions(corpus: Corpus, count: int, seen: set[str]) -> list[Query]:
    """``count`` questions asked nowhere else in the run (after the throughput ones)."""
    more = corpus.queries(3 * count + _WARMUP + count)[3 * count + _WARMUP :]
    return [q for q in more if q.text not in seen][:count]


def _metis_asker(url: str, project: str) -> Ask:
    return lambda client, q: _ask_metisgraph(client, url, project, q)


def _ids_asker(url: str) -> Ask:
    return lambda client, q: (_ask_ids(client, url, q), None)


def _cold_start(url: str, project: str, questions: list[Query], ready_s: float) -> dict[str, Any]:
    """The first questions a fresh server (and a fresh Neo4j) answers, metisgraph alone."""
    figures = run_queries({"metisgraph": _metis_asker(url, project)}, questions, [], {})
    out = figures["metisgraph"].summary(len(questions))
    return {"ready_s": round(ready_s, 1), "questions": len(questions), **out}


def _long_phase(
    askers: dict[str, Ask], metrics: dict[str, str], count: int
) -> dict[str, Any] | None:
    """Pasted traces and bug reports, every system in rotation (latency only)."""
    questions = long_questions(count)
    if not questions:
        return None
    figures = run_queries(askers, questions, [], metrics)
    out: dict[str, Any] = {"questions": len(questions), "sets": list(LONG_SETS)}
    for name, system in figures.items():
        summary = system.summary(len(questions))
        summary.pop("recall@5")
        out[name] = summary
    return out


def bench_recall(
    neo4j: BenchNeo4j,
    corpus: Corpus,
    chroma_path: Path,
    queries: int,
    ports: tuple[int, int, int],
    logs: Path,
    load: dict[str, Any],
    warmup_questions: int = WARMUP_ASKS,
    against: Path | None = None,
    long_count: int = LONG_QUESTIONS,
) -> RecallFigures:
    """Cold start (metisgraph's first questions, alone), warm-up, the short questions and the
    long ones (every system in rotation), then the throughput phase. ``against``: another
    checkout's `metisgraph`, served beside this one (API port + 100) and asked the same."""
    asked = corpus.queries(queries + _WARMUP)
    asked, warmup = asked[:queries], asked[queries:]
    halves = _throughput_questions(corpus, queries, {q.text for q in asked + warmup})
    seen = {q.text for q in [*asked, *warmup, *halves[0], *halves[1]]}
    cold = _cold_questions(corpus, queries, seen)
    warmup = list(itertools.islice(itertools.cycle(warmup), max(warmup_questions, len(warmup))))
    logs.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as servers:
        chroma_url = servers.enter_context(
            chroma_server(chroma_path, "episodes", ports[1], logs / "chroma-serve.log")
        )
        floor_url = servers.enter_context(
            floor_server(neo4j, corpus.project, ports[2], logs / "floor-serve.log")
        )
        hybrid_urls = {
            name: servers.enter_context(
                floor_server(neo4j, corpus.project, port, logs / f"{name}-serve.log", kind)
            )
            for name, port, kind in (
                ("hybrid", ports[2] + 1, "read"),
                ("hybrid_search", ports[2] + 2, "search"),
            )
        }
        metrics: dict[str, str] = {}
        if against is not None:
            log = logs / "metisgraph-serve-against.log"
            metrics["before"] = servers.enter_context(
                metisgraph_server(neo4j, ports[0] + _AGAINST_OFFSET, log, against)
            )
        started = time.monotonic()
        metrics["metisgraph"] = servers.enter_context(
            metisgraph_server(neo4j, ports[0], logs / "metisgraph-serve.log")
        )
        cold_start = _cold_start(
            metrics["metisgraph"], corpus.project, cold, time.monotonic() - started
        )
        askers = {name: _metis_asker(url, corpus.project) for name, url in metrics.items()}
        askers |= {"chroma": _ids_asker(chroma_url), "floor": _ids_asker(floor_url)}
        askers |= {name: _ids_asker(url) for name, url in hybrid_urls.items()}
        figures = run_queries(askers, asked, warmup, metrics)
        long = _long_phase(askers, metrics, long_count)
        throughput = run_throughput(askers, halves)
        memory = {"metisgraph_api": rss_mb(ports[0]), "chroma_api": rss_mb(ports[1])}
        memory["neo4j"] = rss_mb(int(neo4j.uri.rsplit(":", 1)[1]))
    m, c, f = (figures[n].summary(len(asked)) for n in ("metisgraph", "chroma", "floor"))
    before = figures["before"].summary(len(asked)) if "before" in figures else {}
    return RecallFigures(
        size=corpus.size,
        queries=len(asked),
        metisgraph=m,
        chroma=c,
        latency_ratio_p50=round(m["p50_ms"] / c["p50_ms"], 2),
        latency_ratio_p95=round(m["p95_ms"] / c["p95_ms"], 2),
        load=load,
        warmup=warmup_questions,
        throughput=throughput,
        neo4j_vector=f,
        floor_ratio_p50=round(f["p50_ms"] / c["p50_ms"], 2),
        floor_ratio_p95=round(f["p95_ms"] / c["p95_ms"], 2),
        hybrid=figures["hybrid"].summary(len(asked)),
        hybrid_search=figures["hybrid_search"].summary(len(asked)),
        rss_mb=memory,
        before=before,
        long_questions=long or {},
        cold_start=cold_start,
    )
