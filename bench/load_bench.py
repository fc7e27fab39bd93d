"""Load: concurrent clients mixing recall and record for a while, Neo4j stopped in the middle.

    .venv/bin/python bench/load_bench.py                      # 50 clients, 60 s, 10 s outage
    .venv/bin/python bench/load_bench.py --clients 20 --seconds 20 --outage 0

`metisgraph serve` runs in a subprocess (its default concurrency limit and queue) against
the benchmark's own embedded Neo4j (port METISGRAPH_NEO4J_PORT, else 7694; data under
bench/.cache/neo4j-load), on loopback only (API port METISGRAPH_PORT, else 8794). Each
client loops: a recall (4 in 5) or a record of a new episode (1 in 5). Neo4j is stopped
for ``--outage`` seconds in the middle of the run.
Reported: requests by status, the share of deliberate 503s (``BUSY`` from the concurrency
limit, ``UNAVAILABLE`` while Neo4j is away; a 503 without Retry-After is not deliberate)
and of anything else that failed, p50/p95 latency of the answers that succeeded, the API
process's largest resident memory (read from /metrics each second), how long after Neo4j
came back the first success came, and the machine's load average (it is shared). The
UNAVAILABLE answers *answered* before the stop (``unavailable_answered_before_stop``) are the
ones a healthy Neo4j should never give; those sent before it but answered after are not.
The JSON goes to bench/results/load-<time>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

from bench.database import running_neo4j  # noqa: E402
from bench.recall_bench import metisgraph_server, percentile  # noqa: E402
from metisgraph.graph.embedded import EmbeddedNeo4j  # noqa: E402

RESULTS = ROOT / "bench" / "results"
PROJECT = "load"
RECALL = """query($q: String!) { recall(project: "load", query: $q, k: 5) { hits { score } } }"""
RECORD = """mutation($input: EpisodeInput!) { recordEpisode(input: $input) { status } }"""
TOPICS = [
    "the worker's memory grows for days until it is killed",
    "requests to the billing API fail after a DNS failover",
    "a test fails around midnight comparing local dates with UTC",
    "the build agent runs out of disk space with old Docker layers",
    "a migration locks the users table for minutes",
    "TLS handshakes fail after the certificate was rotated",
    "the cache returns stale prices after a deploy",
    "pytest hangs on a fixture waiting for a port",
]


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="metisgraph load benchmark")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--outage", type=float, default=10.0, help="Neo4j stopped (s); 0: none")
    parser.add_argument("--seed-episodes", type=int, default=200)
    neo4j_port = int(os.environ.get("METISGRAPH_NEO4J_PORT", "7694"))
    parser.add_argument("--neo4j-port", type=int, default=neo4j_port)
    parser.add_argument(
        "--api-port", type=int, default=int(os.environ.get("METISGRAPH_PORT", "8794"))
    )
    parser.add_argument("--seed", type=int, default=7)
    return parser.parse_args()


def _episode(rng: random.Random, n: int) -> dict[str, Any]:
    topic = rng.choice(TOPICS)
    return {
        "project": PROJECT,
        "id": f"ep-{n}",
        "summary": f"{topic} (case {n}, seen on host {rng.randint(1, 40)})",
        "outcome": rng.choice(["success", "failure"]),
    }


class Tally:
    def __init__(self) -> None:
        self.status: Counter[str] = Counter()
        self.ok_ms: list[float] = []
        self.failures: list[str] = []
        self.successes: list[float] = []  # when each came (monotonic)
        self.answers: list[tuple[float, str, float]] = []  # (sent, "kind outcome", ms)

    def add(
        self,
        kind: str,
        status: int,
        body: dict[str, Any] | None,
        ms: float,
        retry: bool,
        sent: float,
    ) -> None:
        errors = (body or {}).get("errors") or []
        code = (errors[0].get("extensions") or {}).get("code") if errors else None
        if status == 200 and not errors:
            label = f"{kind} 200"
            self.ok_ms.append(ms)
            self.successes.append(time.monotonic())
        elif status == 503 and code in ("BUSY", "UNAVAILABLE") and retry:
            label = f"{kind} 503 {code}"
        else:
            label = f"{kind} {status} other"
            if len(self.failures) < 20:
                self.failures.append(f"{kind} {status}: {json.dumps(body)[:300]}")
        self.status[label] += 1
        self.answers.append((sent, label, ms))

    def transport(self, kind: str, exc: Exception, ms: float, sent: float) -> None:
        label = f"{kind} transport {type(exc).__name__}"
        self.status[label] += 1
        self.answers.append((sent, label, ms))
        if len(self.failures) < 20:
            self.failures.append(f"{label} after {ms:.0f} ms: {exc!r}"[:300])


async def _client(
    http: httpx.AsyncClient, url: str, rng: random.Random, until: float, tally: Tally
) -> None:
    n = 0
    while time.monotonic() < until:
        n += 1
        if rng.random() < 0.8:
            kind, doc = "recall", {"query": RECALL, "variables": {"q": rng.choice(TOPICS)}}
        else:
            ident = rng.randrange(10**9)
            kind, doc = "record", {"query": RECORD, "variables": {"input": _episode(rng, ident)}}
        sent, started = time.monotonic(), time.perf_counter()
        try:
            response = await http.post(url, json=doc, timeout=60)
            body = response.json() if "json" in response.headers.get("content-type", "") else None
            ms = (time.perf_counter() - started) * 1000
            retry = "retry-after" in response.headers
            tally.add(kind, response.status_code, body, ms, retry, sent)
            if response.status_code == 503:
                await asyncio.sleep(float(response.headers.get("retry-after", "1")))
        except httpx.HTTPError as exc:
            tally.transport(kind, exc, (time.perf_counter() - started) * 1000, sent)


async def _memory(http: httpx.AsyncClient, base: str, until: float, peaks: list[float]) -> None:
    while time.monotonic() < until:
        with contextlib.suppress(httpx.HTTPError):
            text = (await http.get(f"{base}/metrics", timeout=5)).text
            for line in text.splitlines():
                if line.startswith("process_resident_memory_bytes "):
                    peaks.append(float(line.split()[1]))
        await asyncio.sleep(1)


async def _outage(
    server: EmbeddedNeo4j, at: float, seconds: float, marks: dict[str, float]
) -> None:
    await asyncio.sleep(at)
    marks["stop"] = time.monotonic()
    await asyncio.to_thread(server.stop)
    marks["stopped"] = time.monotonic()
    await asyncio.sleep(seconds)
    marks["start"] = time.monotonic()
    await asyncio.to_thread(server.start)
    marks["back"] = time.monotonic()


def _phases(
    answers: list[tuple[float, str, float]], started: float, marks: dict[str, float]
) -> dict[str, dict[str, Any]]:
    """The answers by when they were sent: before Neo4j was stopped, while it was away
    (stopped, then restarting), after it was back; with the slowest of each outcome."""
    stop, back = marks.get("stop", float("inf")), marks.get("back", float("inf"))
    phases: dict[str, dict[str, Any]] = {}
    for sent, label, ms in answers:
        phase = "before" if sent < stop else "away" if sent < back else "after"
        entry = phases.setdefault(phase, {"by_status": Counter(), "slowest_ms": {}})
        entry["by_status"][label] += 1
        entry["slowest_ms"][label] = round(max(ms, entry["slowest_ms"].get(label, 0.0)))
    for name, entry in phases.items():
        entry["by_status"] = dict(sorted(entry["by_status"].items()))
        first = {"before": started, "away": stop, "after": back}[name]
        entry["from_s"] = round(first - started, 1)
    return phases


async def run(
    args: argparse.Namespace, url: str, base: str, neo4j: EmbeddedNeo4j
) -> dict[str, Any]:
    rng = random.Random(args.seed)
    limits = httpx.Limits(max_connections=args.clients + 5)
    async with httpx.AsyncClient(limits=limits) as http:
        for n in range(args.seed_episodes):
            seed = {"query": RECORD, "variables": {"input": _episode(rng, n)}}
            await http.post(url, json=seed, timeout=60)  # httpx's 5 s is short on a busy host
        tally, peaks, marks = Tally(), list[float](), dict[str, float]()
        started = time.monotonic()
        until = started + args.seconds
        jobs = [
            _client(http, url, random.Random(rng.random()), until, tally)
            for _ in range(args.clients)
        ]
        jobs.append(_memory(http, base, until, peaks))
        if args.outage > 0:
            middle = max(0.0, (args.seconds - args.outage) / 2)
            jobs.append(_outage(neo4j, middle, args.outage, marks))
        load_before = os.getloadavg()
        await asyncio.gather(*jobs)
        load_after = os.getloadavg()
    total = sum(tally.status.values())
    deliberate = sum(v for k, v in tally.status.items() if " 503 " in k)
    busy = sum(v for k, v in tally.status.items() if k.endswith(" 503 BUSY"))
    other = sum(v for k, v in tally.status.items() if k.endswith(" other") or "transport" in k)
    figures: dict[str, Any] = {
        "clients": args.clients,
        "seconds": args.seconds,
        "requests": total,
        "by_status": dict(sorted(tally.status.items())),
        "deliberate_503_share": round(deliberate / total, 4) if total else None,
        "busy_503_share": round(busy / total, 4) if total else None,
        "other_failures": other,
        "p50_ms": round(percentile(tally.ok_ms, 0.5), 1) if tally.ok_ms else None,
        "p95_ms": round(percentile(tally.ok_ms, 0.95), 1) if tally.ok_ms else None,
        "api_rss_max_mb": round(max(peaks) / 2**20, 1) if peaks else None,
        "failures_sample": tally.failures,
        "load_average_1_5_15": {"before": load_before, "after": load_after},
        "cores": os.cpu_count(),
    }
    figures["by_phase"] = _phases(tally.answers, started, marks)
    # A request sent before the stop but still in flight (or queued) when Neo4j went away is
    # rightly answered UNAVAILABLE: "before" by the time sent counts it. By the time answered,
    # an UNAVAILABLE before the stop is a healthy Neo4j reported away — there must be none.
    stop = marks.get("stop", float("inf"))
    early = Counter(label for sent, label, ms in tally.answers if sent + ms / 1000 < stop)
    figures["answered_before_stop"] = dict(sorted(early.items()))
    figures["unavailable_answered_before_stop"] = sum(
        n for label, n in early.items() if label.endswith(" 503 UNAVAILABLE")
    )
    if marks:
        figures["outage_s"] = round(marks["back"] - marks["stop"], 1)
        # Where the outage's time went: Neo4j stopping (SIGTERM until its process is gone),
        # the deliberate pause, Neo4j starting (spawned until its Bolt port logs in).
        figures["neo4j_stop_s"] = round(marks["stopped"] - marks["stop"], 1)
        figures["neo4j_start_s"] = round(marks["back"] - marks["start"], 1)
        after = [t for t in tally.successes if t > marks["back"]]
        figures["first_success_after_neo4j_back_s"] = (
            round(min(after) - marks["back"], 2) if after else None
        )
        during = [t for t in tally.successes if marks["stop"] + 1 < t < marks["start"]]
        figures["successes_while_neo4j_stopped"] = len(during)
    return figures


def main() -> None:
    args = _options()
    home = ROOT / "bench" / ".cache" / "neo4j-load"
    RESULTS.mkdir(parents=True, exist_ok=True)
    with running_neo4j(home, args.neo4j_port, "1g", "512m") as neo4j:
        server = EmbeddedNeo4j(neo4j.settings)
        log = RESULTS / "logs" / "load-serve.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with metisgraph_server(neo4j, args.api_port, log) as url:
            base = url.rsplit("/", 1)[0]
            figures = asyncio.run(run(args, url, base, server))
        with contextlib.suppress(Exception):  # the outage restarted it under this process
            server.stop()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    out = RESULTS / f"load-{stamp}.json"
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
