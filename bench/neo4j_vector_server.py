"""The floor of any answer a Neo4j store gives: one vector-index search over HTTP.

It embeds the question exactly as the ChromaDB baseline does (one text, the question and the
error it carries, through ``Embedder.encode_fresh_queries``) and asks the store's own
``episode_vectors`` index (the one recall searches) for the k nearest episodes of the
project by their text vector, in one read query through the same async driver and pool
settings metisgraph serves with. No channels, no fusion, no expansion, no GraphQL: what is
left of metisgraph's latency above this floor is the graph's own work; what separates this
floor from ChromaDB is the store (a Bolt round trip and a Lucene HNSW in another process
against an in-process HNSW).

``--hybrid``: the floor of a *hybrid* answer of recall's shape, the least the issue's recall
(semantic and full-text search, then a graph read of what it returns) asks of this store.
One full-text search of `episode_text` (the question's terms, the project's recallable
episodes; asked while the question is embedded, as recall asks its lexical channels), the
vector search above for k x 3, the two fused by reciprocal rank, and recall's own expansion
(`recall_expand`, neighbouring steps not read) of the k fused first — three statements, two
of them after the embedding, as recall's. No other channel, no ranking, patterns, conflicts
or GraphQL. ``--hybrid search``: the two searches fused, and no graph read.

    python bench/neo4j_vector_server.py --uri bolt://127.0.0.1:7690 --password P --port PORT
    python bench/neo4j_vector_server.py ... --hybrid read     # or: --hybrid search
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from types import SimpleNamespace
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import anyio  # noqa: E402
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from metisgraph.api.eval.baselines import rrf  # noqa: E402
from metisgraph.graph.lucene import lucene_terms  # noqa: E402
from metisgraph.graph.recall_reads import EXPAND_EXTRA, expand_rows  # noqa: E402
from metisgraph.graph.recall_request import RecallRequest  # noqa: E402
from metisgraph.graph.store import GraphStore, open_driver  # noqa: E402
from metisgraph.graph.vectors import Vector  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402


async def hybrid_ids(
    store: GraphStore,
    project: str,
    vector: Vector,
    k: int,
    lexical: Awaitable[list[str]],
    read: bool,
) -> list[str]:
    """The vector search for k x 3, fused with the full-text search's ids (``lexical``,
    awaited), and with ``read`` recall's expansion of the k fused first: their ids in that
    order."""
    nearest = await store.run("bench_nearest_episodes", vector=vector, project=project,
                              k=k * EXPAND_EXTRA)  # fmt: skip
    first = rrf([[r["id"] for r in nearest], await lexical])[:k]  # eval's baseline fusion
    if not read:
        return first
    req = cast(RecallRequest, SimpleNamespace(k=k, steps=False))  # what expand_rows reads
    rows = await expand_rows(store, req, [(project, i) for i in first], ())
    found = {r["id"] for r in rows}
    return [i for i in first if i in found]


def build_app(uri: str, password: str, project: str, hybrid: str | None = None) -> Starlette:
    embedder = Embedder()
    embedder.load()
    embedder.load_query_path()  # the question path metisgraph and the baseline use
    limiter = anyio.CapacityLimiter(embedder.question_lanes)  # as metisgraph's lanes
    state: dict[str, GraphStore] = {}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        driver = open_driver(uri, "neo4j", password)
        state["store"] = GraphStore(driver)
        try:
            yield
        finally:
            await driver.close()

    def embed(text: str) -> list[float]:
        return embedder.encode_fresh_queries([text])[0].tolist()

    async def lexical(text: str, k: int) -> list[str]:
        terms = lucene_terms(text)
        if not terms:
            return []
        rows = await state["store"].run(
            "bench_fulltext_episodes", terms=terms, project=project, k=k
        )
        return [r["id"] for r in rows]

    async def query(request: Request) -> JSONResponse:
        body = await request.json()
        text, k = str(body["text"]), int(body.get("k", 5))
        if hybrid:  # the full-text search while the question is embedded
            words = asyncio.ensure_future(lexical(text, k * EXPAND_EXTRA))
            try:
                vector = await anyio.to_thread.run_sync(embed, text, limiter=limiter)
            except BaseException:
                words.cancel()
                raise
            read = hybrid == "read"
            ids = await hybrid_ids(state["store"], project, Vector(vector), k, words, read)
            return JSONResponse({"ids": ids})
        vector = await anyio.to_thread.run_sync(embed, text, limiter=limiter)
        rows = await state["store"].run(
            "bench_nearest_episodes", vector=Vector(vector), project=project, k=k
        )
        return JSONResponse({"ids": [r["id"] for r in rows]})

    async def ready(request: Request) -> JSONResponse:
        await state["store"].run("bench_corpus_signature", project=project)
        return JSONResponse({"ready": True})

    return Starlette(
        routes=[Route("/query", query, methods=["POST"]), Route("/readyz", ready)],
        lifespan=lifespan,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--project", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--hybrid", choices=("search", "read"), help="the floor of a hybrid answer")
    args = parser.parse_args()
    app = build_app(args.uri, args.password, args.project, args.hybrid)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
