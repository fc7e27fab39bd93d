"""Hubs: the snippets, tools and packages at the crossroads of failures and fixes."""

from __future__ import annotations

from collections import defaultdict

import networkx as nx

from metisgraph.graph.analytics.model import Hub
from metisgraph.graph.analytics.pull import Pulled
from metisgraph.graph.refs import NodeRef

__all__ = ["BETWEENNESS_SOURCES", "hub_graph", "hubs"]

BETWEENNESS_SOURCES = 256  # beyond this many nodes, betweenness is estimated from a sample

Node = tuple[str, ...]


def hub_graph(pulled: Pulled) -> tuple[nx.Graph, dict[Node, int], dict[Node, set[str]]]:
    """Errors linked to the tools, packages and snippets of the episodes that hit them, and to
    the code that fixed them. Also: failing episodes per node, and each node's projects."""
    graph = nx.Graph()
    failures: dict[Node, int] = defaultdict(int)
    projects: dict[Node, set[str]] = defaultdict(set)
    for e in pulled.episodes:
        touched: list[Node] = [("tool", t) for t in e.tools]
        touched += [("snippet", e.project, s) for s in e.snippets]
        if e.environment:
            touched += [("package", p) for p in pulled.packages.get((e.project, e.environment), {})]
        for node in touched:
            projects[node].add(e.project)
            if e.outcome == "failure":
                failures[node] += 1
        for key in e.errors:
            for node in touched:
                _link(graph, ("error", key), node)
    for (project, key), facts in pulled.errors.items():
        for snippet, _, _ in facts.fixes:
            node = ("snippet", project, snippet)
            projects[node].add(project)
            _link(graph, ("error", key), node, fix=True)
    return graph, failures, projects


def _link(graph: nx.Graph, error: Node, node: Node, *, fix: bool = False) -> None:
    if graph.has_edge(error, node):
        graph[error][node]["weight"] += 1
        graph[error][node]["fixes"] += int(fix)
    else:
        graph.add_edge(error, node, weight=1, fixes=int(fix))


def hubs(pulled: Pulled, seed: int = 7, limit: int = 20) -> tuple[list[Hub], bool]:
    """Non-error nodes by betweenness centrality; True when betweenness was estimated."""
    graph, failures, projects = hub_graph(pulled)
    if graph.number_of_edges() == 0:
        return [], False
    sampled = graph.number_of_nodes() > BETWEENNESS_SOURCES
    centrality = nx.betweenness_centrality(
        graph, k=BETWEENNESS_SOURCES if sampled else None, normalized=True, seed=seed
    )
    candidates = [n for n in graph if n[0] != "error"]
    candidates.sort(key=lambda n: (-centrality[n], -graph.degree(n), n))
    out = []
    for node in candidates[:limit]:
        kind, name = node[0], node[-1]
        node_id = None
        if kind == "snippet":
            info = pulled.snippets.get((node[1], node[2]), {})
            name = info.get("name") or node[2]
            node_id = NodeRef("Snippet", node[1], node[2]).id
        out.append(
            Hub(
                kind=kind,
                name=name,
                projects=sorted(projects[node]),
                betweenness=round(centrality[node], 6),
                errors=graph.degree(node),
                failures=failures[node],
                fixes=sum(d["fixes"] for _, _, d in graph.edges(node, data=True)),
                node_id=node_id,
            )
        )
    return out, sampled
