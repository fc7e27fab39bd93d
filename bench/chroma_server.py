"""The flat vector-store baseline over HTTP: the seeds' prototype design.

One ChromaDB collection of episode vectors (the same MiniLM vectors metisgraph stores),
and one endpoint that embeds the question with the same model and returns the k nearest
episodes. Served by uvicorn like metisgraph, so both are measured through HTTP.

    python bench/chroma_server.py --path DIR --collection NAME --port PORT
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import anyio  # noqa: E402
import chromadb  # noqa: E402
import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from metisgraph.ingest.embeddings import Embedder  # noqa: E402


def build_app(path: Path, collection: str) -> Starlette:
    embedder = Embedder()
    embedder.load()
    # The question is embedded the way metisgraph embeds one (ONNX or torch, as the
    # settings say, no cache): the ratio then measures everything but the model.
    embedder.load_query_path()
    client = chromadb.PersistentClient(path=str(path))
    episodes = client.get_collection(collection)
    # As many questions at once as metisgraph embeds (its question lanes): with one, the
    # baseline's throughput was its own queue's, not the store's or the cores'.
    limiter = anyio.CapacityLimiter(embedder.question_lanes)

    def search(text: str, k: int) -> list[str]:
        vector = embedder.encode_fresh_queries([text])[0].tolist()
        found = episodes.query(query_embeddings=[vector], n_results=k, include=[])
        return list(found["ids"][0])

    async def query(request: Request) -> JSONResponse:
        body = await request.json()
        ids = await anyio.to_thread.run_sync(
            search, str(body["text"]), int(body.get("k", 5)), limiter=limiter
        )
        return JSONResponse({"ids": ids})

    async def ready(request: Request) -> JSONResponse:
        return JSONResponse({"ready": True, "count": episodes.count()})

    return Starlette(routes=[Route("/query", query, methods=["POST"]), Route("/readyz", ready)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--path", type=Path, required=True)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = build_app(args.path, args.collection)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
