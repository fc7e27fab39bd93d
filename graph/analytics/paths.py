"""Error → fix paths: from a sighting, along the steps of its task, to the code that fixed it."""

from __future__ import annotations

from itertools import pairwise

import networkx as nx

from metisgraph.graph.analytics.model import ErrorStat, FixPath, PathStep
from metisgraph.graph.analytics.pull import EpisodeFacts, Pulled
from metisgraph.graph.refs import NodeRef

__all__ = ["fix_paths", "path_graph"]

Node = tuple[str, ...]


def path_graph(pulled: Pulled, chains: dict[tuple[str, str], list[EpisodeFacts]]) -> nx.DiGraph:
    """error -> each episode that hit it -> the next steps of its task -> the code of the
    step that fixed an error (FIXES names the step: the same code run in a failing step
    before it is no fix)."""
    graph = nx.DiGraph()
    for e in pulled.episodes:
        here = ("episode", e.project, e.id)
        graph.add_node(here, facts=e)
        for key in e.errors:
            graph.add_edge(("error", key), here)
    for (project, _), facts in pulled.errors.items():
        for snippet, _, episode in facts.fixes:
            step = ("episode", project, episode)
            if episode is not None and step in graph:
                graph.add_edge(step, ("snippet", project, snippet))
    for chain in chains.values():
        for a, b in pairwise(chain):
            graph.add_edge(("episode", a.project, a.id), ("episode", b.project, b.id))
    return graph


def fix_paths(
    pulled: Pulled,
    chains: dict[tuple[str, str], list[EpisodeFacts]],
    stats: dict[str, ErrorStat],
    limit: int = 20,
) -> list[FixPath]:
    """For each fixed error (most sighted first), the shortest path to a snippet fixing it."""
    graph = path_graph(pulled, chains)
    targets: dict[str, set[Node]] = {}
    for (project, key), facts in pulled.errors.items():
        for snippet, _, _ in facts.fixes:
            targets.setdefault(key, set()).add(("snippet", project, snippet))
    out = []
    for key in sorted(targets, key=lambda k: (-stats[k].sightings, k) if k in stats else (0, k)):
        source = ("error", key)
        if key not in stats or source not in graph:
            continue
        reach = nx.single_source_shortest_path(graph, source)
        found = sorted((len(reach[t]), t) for t in targets[key] if t in reach)
        if not found:
            continue
        path = reach[found[0][1]]
        out.append(
            FixPath(
                error=stats[key],
                snippet=_snippet_name(pulled, found[0][1]),
                steps=sum(node[0] == "episode" for node in path),
                path=[_step(pulled, graph, node, stats) for node in path],
            )
        )
        if len(out) >= limit:
            break
    return out


def _snippet_name(pulled: Pulled, node: Node) -> str:
    info = pulled.snippets.get((node[1], node[2]), {})
    return str(info.get("name") or node[2])


def _step(pulled: Pulled, graph: nx.DiGraph, node: Node, stats: dict[str, ErrorStat]) -> PathStep:
    if node[0] == "error":
        stat = stats[node[1]]
        project = stat.projects[0]
        return PathStep("Error", NodeRef("Error", project, node[1]).id, stat.kind or node[1])
    if node[0] == "snippet":
        ref = NodeRef("Snippet", node[1], node[2])
        return PathStep("Snippet", ref.id, _snippet_name(pulled, node))
    facts: EpisodeFacts = graph.nodes[node]["facts"]
    label = f"step {facts.step}" if facts.step is not None else "step"
    label += f" · {facts.outcome}" if facts.outcome else ""
    return PathStep("Episode", NodeRef("Episode", node[1], node[2]).id, label)
