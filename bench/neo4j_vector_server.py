"""The floor of any answer a Neo4j store gives: one vector-index search over HTTP.

It embeds the question exactly as the ChromaDB baseline does (one text, the question and the
error it carries, through ``Embedder.encode_fresh_queries``) and asks the store's own
``episode_vectors`` index (the one recall searches) for the k nearest episodes of the
project by their text vector, in one read query through the same async driver and pool
settings metisgraph serves with. No channels, no fusion, no expansion, no GraphQL: what is
left of metisgraph's latency above this floor is the graph's own work; what separates this
floor from ChromaDB is the store (a Bolt round trip and a Lucene HNSW in another process
against an in-process HNSW).

    python bench/neo4j_vector_server.py --uri bolt://127.0.0.1:7690 --password P --port PORT
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import anyio  # noqa: E402
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from metisgraph.graph.store import GraphStore, open_driver  # noqa: E402
from metisgraph.graph.vectors import Vector  # noqa: E402
from metisgraph.ingest.embeddings import Embedder  # noqa: E402


def build_app(uri: str, password: str, project: str) -> Starlette:
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

    async def query(request: Request) -> JSONResponse:
        body = await request.json()
        vector = await anyio.to_thread.run_sync(embed, str(body["text"]), limiter=limiter)
        rows = await state["store"].run(
            "bench_nearest_episodes",
            vector=Vector(vector),
            project=project,
            k=int(body.get("k", 5)),
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
    args = parser.parse_args()
    app = build_app(args.uri, args.password, args.project)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
