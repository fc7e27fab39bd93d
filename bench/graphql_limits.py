"""How fast hostile GraphQL documents are refused over HTTP, at the default limits.

    python bench/graphql_limits.py                    # serves the app itself (as `serve`)
    python bench/graphql_limits.py --url http://127.0.0.1:8000 --token T
    python bench/graphql_limits.py --requests 100 --json

Each kind of document (a depth bomb, an alias flood, a fragment cycle, documents over the
token limit, and a plain `{ __typename }` beside them) is sent ``--requests`` times, one
after another, each a different text (a fresh operation name) so that no cache answers
for the parser; the median and p95 of the round trip are reported in milliseconds, with
how many answers were not the expected refusal (should be 0). Without ``--url`` the app
is served on 127.0.0.1:METISGRAPH_PORT with the settings of the environment, and waits
until ready (Neo4j and the model), like `metisgraph serve`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import re
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import httpx  # noqa: E402


def _nested(levels: int) -> str:
    return "recall { " * levels + "abstained" + " }" * levels


def _fragment_depth(name: str) -> str:
    chain = " ".join(f"fragment F{n} on Query {{ recall {{ ...F{n + 1} }} }}" for n in range(20))
    return f"query {name} {{ ...F0 }} {chain} fragment F20 on Query {{ __typename }}"


# kind -> (document for an operation name, what the refusal says; None: must answer)
DOCUMENTS: dict[str, tuple[Callable[[str], str], str | None]] = {
    "plain { __typename }": (lambda n: f"query {n} {{ __typename }}", None),
    "depth 13": (lambda n: f"query {n} {{ {_nested(13)} }}", "exceeds maximum operation depth"),
    "depth bomb (450)": (lambda n: f"query {n} {{ {_nested(450)} }}", "nested too deeply|depth"),
    "depth via fragments": (_fragment_depth, "exceeds maximum operation depth"),
    "alias flood (300)": (
        lambda n: f"query {n} {{ " + " ".join(f"a{i}: __typename" for i in range(300)) + " }",
        "aliases found",
    ),
    "fragment cycle": (
        lambda n: (
            f"query {n} {{ ...A }} fragment A on Query {{ ...B }} fragment B on Query {{ ...A }}"
        ),
        "within itself",
    ),
    "1,001 tokens": (
        lambda n: f"query {n} {{ " + "__typename " * 1_001 + "}",
        "more than",
    ),
    "1 MB document": (
        lambda n: f"query {n} {{ " + "__typename " * 95_000 + "}",
        "more than",
    ),
}


def _measure(client: httpx.Client, requests: int) -> list[dict[str, object]]:
    rows = []
    for kind, (make, expected) in DOCUMENTS.items():
        times, wrong = [], 0
        for n in range(requests):
            document = make(f"B{n}x{time.monotonic_ns()}")
            started = time.perf_counter()
            response = client.post("/graphql", json={"query": document})
            times.append((time.perf_counter() - started) * 1000)
            body = response.json()
            said = " ".join(e.get("message", "") for e in body.get("errors") or [])
            refused = body.get("data") is None and bool(said)
            if expected is None:
                wrong += refused
            else:
                wrong += not (refused and re.search(expected, said))
        ordered = sorted(times)
        rows.append(
            {
                "kind": kind,
                "bytes": len(make("B0").encode()),
                "median_ms": round(statistics.median(times), 2),
                "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
                "not_as_expected": wrong,
            }
        )
    return rows


@contextlib.contextmanager
def _served() -> Iterator[tuple[str, dict[str, str]]]:
    """The app served on loopback in this process, ready; its URL and headers."""
    import uvicorn

    from metisgraph.api.http.app import create_app
    from metisgraph.api.settings import load_settings

    settings = load_settings()
    app = create_app(settings, wait_ready=True)
    config = uvicorn.Config(app, host="127.0.0.1", port=settings.api.port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise SystemExit("the app did not start (see above)")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{settings.api.port}", {}
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a server already running (default: serve one here)")
    parser.add_argument("--token", help="a bearer token for --url")
    parser.add_argument("--requests", type=int, default=50, help="requests per kind")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request otherwise
    if args.url:
        headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
        where: contextlib.AbstractContextManager[tuple[str, dict[str, str]]]
        where = contextlib.nullcontext((args.url, headers))
    else:
        where = _served()
    with where as (url, headers), httpx.Client(base_url=url, headers=headers) as client:
        client.post("/graphql", json={"query": "{ __typename }"})  # a connection, warm
        rows = _measure(client, args.requests)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'document':<22} {'bytes':>9} {'median ms':>10} {'p95 ms':>8} {'unexpected':>10}")
    for r in rows:
        print(
            f"{r['kind']:<22} {r['bytes']:>9,} {r['median_ms']:>10} {r['p95_ms']:>8}"
            f" {r['not_as_expected']:>10}"
        )


if __name__ == "__main__":
    main()
