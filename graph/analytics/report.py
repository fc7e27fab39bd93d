"""Analytics on a bounded subgraph: pull it, then measure it with networkx off the loop."""

from __future__ import annotations

from datetime import datetime

import anyio

from metisgraph.graph.analytics.errors import error_clusters, root_causes
from metisgraph.graph.analytics.hubs import BETWEENNESS_SOURCES, hubs
from metisgraph.graph.analytics.lift import MIN_SUPPORT, over_represented
from metisgraph.graph.analytics.model import DEFAULT_CAP, Analytics
from metisgraph.graph.analytics.paths import fix_paths
from metisgraph.graph.analytics.pull import Pulled, pull
from metisgraph.graph.analytics.tasks import error_stats, task_chains, task_errors
from metisgraph.graph.store import GraphStore

__all__ = ["analytics", "measure"]


async def analytics(
    store: GraphStore,
    projects: list[str],
    since: datetime | None = None,
    until: datetime | None = None,
    cap: int = DEFAULT_CAP,
) -> Analytics:
    """Clusters, root causes, hubs, fix paths and over-represented packages of the projects."""
    pulled = await pull(store, projects, since, until, cap)
    return await anyio.to_thread.run_sync(measure, pulled)


def measure(pulled: Pulled, seed: int = 7) -> Analytics:
    """Every measure of one pulled subgraph (CPU only: run it in a worker thread)."""
    chains = task_chains(pulled.episodes)
    per_task = task_errors(chains)
    stats = error_stats(pulled)
    result = Analytics(
        projects=pulled.projects,
        since=pulled.since,
        until=pulled.until,
        episodes=len(pulled.episodes),
        cap=pulled.cap,
        truncated=pulled.truncated,
    )
    result.clusters = error_clusters(per_task, stats, seed=seed)
    result.root_causes = root_causes(per_task, stats)
    result.hubs, sampled = hubs(pulled, seed=seed)
    result.fix_paths = fix_paths(pulled, chains, stats)
    result.over_represented = over_represented(pulled)
    if pulled.truncated:
        result.warnings.append(
            f"node cap reached: only the {pulled.cap:,} most recent episodes of the window were "
            "measured; narrow the window or raise the cap"
        )
    if sampled:
        result.warnings.append(
            f"hub betweenness estimated from {BETWEENNESS_SOURCES} sampled sources"
        )
    if not result.over_represented:
        result.warnings.append(
            f"no package over-represented among failing runs (support >= {MIN_SUPPORT})"
        )
    return result
