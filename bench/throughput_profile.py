"""Where 8 concurrent recall clients spend the machine: CPU per request, by process.

    python bench/throughput_profile.py --home bench/.cache/neo4j-7790-n10000 --size 10000
    python bench/throughput_profile.py ... --py-spy /tmp/api.txt   # the API's stacks too

`metisgraph serve` on the benchmark's store (its Neo4j started here or reused), warmed with
``--warmup`` questions asked one at a time, then ``--clients`` threads ask the corpus's
questions for ``--seconds``. Reported: requests per second and, from /proc, each process's
CPU milliseconds per answered request (the API's, Neo4j's) — figures that do not move with
the machine's load as latency does. With ``--py-spy`` (a profiler installed by hand, not a
dependency) the API's stacks during the load are written as collapsed lines.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import httpx  # noqa: E402

from bench.corpus import Corpus  # noqa: E402
from bench.database import running_neo4j  # noqa: E402
from bench.recall_bench import _ask_metisgraph, listening_pid, metisgraph_server  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_ms(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / _TICK  # utime + stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--port", type=int, default=7790)
    parser.add_argument("--api-port", type=int, default=8890)
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--pagecache", default="1g")
    parser.add_argument("--warmup", type=int, default=1500)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--py-spy", type=Path)
    args = parser.parse_args()
    corpus = Corpus(args.seed, args.size, project=f"bench-s{args.seed}-n{args.size}")
    questions = corpus.queries(400)
    log = ROOT / "bench" / "results" / "logs" / "throughput-serve.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with (
        running_neo4j(args.home, args.port, args.heap, args.pagecache) as neo4j,
        metisgraph_server(neo4j, args.api_port, log) as url,
    ):
        with httpx.Client(timeout=60) as client:
            for q in itertools.islice(itertools.cycle(questions), args.warmup):
                _ask_metisgraph(client, url, corpus.project, q)
        api, db = listening_pid(args.api_port), listening_pid(args.port)
        spy = None
        if args.py_spy:
            spy = subprocess.Popen(
                ["py-spy", "record", "-p", str(api), "-d", str(int(args.seconds)), "-r", "250",
                 "-f", "raw", "-o", str(args.py_spy), "--threads", "--nonblocking"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
        pending = itertools.cycle(questions)
        lock = threading.Lock()
        latencies: list[float] = []
        errors = [0]
        stop = time.monotonic() + args.seconds
        cpu0 = (_cpu_ms(api), _cpu_ms(db))

        def client_loop() -> None:
            with httpx.Client(timeout=60) as client:
                while time.monotonic() < stop:
                    with lock:
                        q = next(pending)
                    started = time.perf_counter()
                    try:
                        _ask_metisgraph(client, url, corpus.project, q)
                    except Exception:  # counted: errors are a figure here
                        errors[0] += 1
                        continue
                    with lock:
                        latencies.append((time.perf_counter() - started) * 1000)

        threads = [threading.Thread(target=client_loop) for _ in range(args.clients)]
        began = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - began
        cpu1 = (_cpu_ms(api), _cpu_ms(db))
        if spy is not None:
            spy.wait(timeout=120)
    n = len(latencies)
    latencies.sort()
    print(json.dumps({
        "clients": args.clients, "requests": n, "errors": errors[0],
        "rps": round(n / wall, 1),
        "p50_ms": round(latencies[n // 2], 1), "p95_ms": round(latencies[int(n * 0.95)], 1),
        "api_cpu_ms_per_request": round((cpu1[0] - cpu0[0]) / n, 2),
        "neo4j_cpu_ms_per_request": round((cpu1[1] - cpu0[1]) / n, 2),
        "load": Path("/proc/loadavg").read_text().split()[:3],
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
