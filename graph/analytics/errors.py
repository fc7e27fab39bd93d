"""Errors among errors: clusters that meet in the same tasks, and the ones that come first."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

import networkx as nx

from metisgraph.graph.analytics.model import ErrorCluster, ErrorStat, RootCause
from metisgraph.graph.analytics.tasks import TaskErrors

__all__ = ["co_occurrence", "error_clusters", "precedence", "root_causes"]


def co_occurrence(tasks: list[TaskErrors]) -> nx.Graph:
    """Errors linked by the tasks they share; a pair sighted in order counts once more.

    Weight = tasks where both were met + tasks where one was met before the other: errors
    that follow one another are held together more tightly than errors merely side by side.
    """
    graph = nx.Graph()
    for t in tasks:
        for a, b in combinations(sorted(t.first), 2):
            weight = 1 + (t.first[a] != t.first[b])
            if graph.has_edge(a, b):
                graph[a][b]["weight"] += weight
                graph[a][b]["tasks"] += 1
            else:
                graph.add_edge(a, b, weight=weight, tasks=1)
    return graph


def precedence(tasks: list[TaskErrors]) -> nx.DiGraph:
    """a -> b weighted by the tasks in which a was first sighted before b."""
    graph = nx.DiGraph()
    for t in tasks:
        for a, b in combinations(sorted(t.first), 2):
            if t.first[a] == t.first[b]:
                continue
            early, late = (a, b) if t.first[a] < t.first[b] else (b, a)
            weight = graph[early][late]["weight"] + 1 if graph.has_edge(early, late) else 1
            graph.add_edge(early, late, weight=weight)
    return graph


def error_clusters(
    tasks: list[TaskErrors], stats: dict[str, ErrorStat], seed: int = 7, limit: int = 20
) -> list[ErrorCluster]:
    """Louvain communities of the co-occurrence graph with two or more errors, largest first."""
    graph = co_occurrence(tasks)
    if graph.number_of_edges() == 0:
        return []
    communities = nx.community.louvain_communities(graph, weight="weight", seed=seed)
    clusters = []
    for members in communities:
        if len(members) < 2:
            continue
        inside = graph.subgraph(members).size(weight="weight")
        touching = sum(d for _, d in graph.degree(members, weight="weight")) - inside
        shared = [t for t in tasks if sum(k in members for k in t.first) >= 2]
        errors = sorted((stats[k] for k in members), key=lambda s: (-s.sightings, s.key))
        clusters.append(
            ErrorCluster(
                errors=errors,
                tasks=len(shared),
                projects=sorted({t.project for t in shared}),
                cohesion=round(inside / touching, 4) if touching else 1.0,
            )
        )
    clusters.sort(key=lambda c: (-c.tasks, -sum(e.sightings for e in c.errors), c.errors[0].key))
    return clusters[:limit]


def root_causes(
    tasks: list[TaskErrors], stats: dict[str, ErrorStat], limit: int = 20
) -> list[RootCause]:
    """Errors ranked by the tasks they lead: sighted first where two or more errors came."""
    multi = [t for t in tasks if len(t.first) >= 2]
    leads: Counter[str] = Counter()
    part_of: Counter[str] = Counter()
    for t in multi:
        part_of.update(t.first.keys())
        earliest = min(t.first.values())
        firsts = [k for k, p in t.first.items() if p == earliest]
        if len(firsts) == 1:
            leads[firsts[0]] += 1
    order = precedence(multi)
    followers: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for a, b, data in order.edges(data=True):
        followers[a].append((-data["weight"], b))
    ranked = sorted(leads, key=lambda k: (-leads[k], -order.out_degree(k, weight="weight"), k))
    return [
        RootCause(
            error=stats[k],
            leads=leads[k],
            multi_tasks=part_of[k],
            share=round(leads[k] / part_of[k], 4),
            precedes=int(order.out_degree(k, weight="weight")),
            preceded_by=int(order.in_degree(k, weight="weight")),
            followers=[stats[b].kind or b for _, b in sorted(followers[k])[:3]],
        )
        for k in ranked[:limit]
    ]
