"""`metisgraph ingest --bulk`: a new store built through import files (the bulk path).

The records go through the pipeline's preparation and are written as node and relationship
files (ingest/pipeline/bulk.py), the chained steps' context vectors with them; the
embedded Neo4j is stopped, `neo4j-admin database import` loads the files into its database,
it is started again, and what each batch leaves to the graph (chains, context texts,
resolution, code, attribution, situations, families, staleness, the kept counts) is derived
by the pipeline's own statements. Only into the
embedded Neo4j, and only into an empty store: the import replaces the database.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import typer
from rich.console import Console

__all__ = ["bulk_ingest"]

err = Console(stderr=True, soft_wrap=True)


async def bulk_ingest(
    path: Path,
    format: str | None,
    project: str | None,
    dead_letter: Path | None,
    work: Path | None,
    batch_size: int,
) -> dict[str, Any]:
    from metisgraph.api.services import open_graph, open_services
    from metisgraph.api.settings import load_settings
    from metisgraph.graph import GraphStore, record_current
    from metisgraph.graph.embedded import EmbeddedNeo4j, import_database
    from metisgraph.ingest import MIGRATIONS, Embedder
    from metisgraph.ingest.adapters import read_path
    from metisgraph.ingest.pipeline import BulkIngestor, DeadLetter

    settings = load_settings()
    if settings.neo4j.external:
        err.print("[red]--bulk imports into the embedded Neo4j: unset NEO4J_URI")
        raise typer.Exit(2)
    async with open_graph(settings) as graph:
        nodes = (await graph.run("bulk_store_nodes"))[0]["nodes"]
    if nodes:
        err.print(
            f"[red]--bulk builds a new store, and this one holds {nodes} nodes.[/] Point "
            "METISGRAPH_NEO4J_HOME at an empty folder, or ingest without --bulk.",
            highlight=False,
        )
        raise typer.Exit(2)
    folder = work or Path(tempfile.mkdtemp(prefix="metisgraph-bulk-"))
    embedder = Embedder(settings.embedding)
    bulk = BulkIngestor(embedder, batch_size=batch_size)
    letters = DeadLetter.open(dead_letter) if dead_letter else None
    started = time.perf_counter()
    try:
        items = read_path(path, format=format, project=project)
        files = await bulk.write_files(items, folder, dead_letter=letters)
    finally:
        if letters:
            letters.close()
    prepared = time.perf_counter()
    embedded = EmbeddedNeo4j(settings.embedded)
    await anyio.to_thread.run_sync(embedded.stop)
    run = await anyio.to_thread.run_sync(lambda: import_database(embedded, files.arguments))
    async with open_graph(settings) as graph:  # started again on the imported database
        await record_current(graph, MIGRATIONS)
        imported = time.perf_counter()
        # writes under the batch timeout: episode_vectors populates beside the derive, and
        # its final merge holds writes for as long as it runs (minutes at 1M)
        deriving = GraphStore(graph.driver, graph.database, timeout=graph.batch_timeout)
        await bulk.derive(files, deriving)
    done = time.perf_counter()
    async with open_services(settings):  # the model's stamp, as any first start writes it
        pass
    err.print(
        f"bulk load: files {prepared - started:.1f} s, import {run.seconds:.1f} s, "
        f"derived {done - imported:.1f} s, all {done - started:.1f} s (files in {folder})",
        highlight=False,
    )
    return files.summary.as_dict()
