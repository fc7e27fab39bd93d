"""Graph propagation for the ranker: a personalised PageRank over the shortlist's links.

The graph is the one recall's expansion already read (no round trip of its own): the
shortlisted episodes and what each is linked to — its errors, their families, the symbols
and files of its stack frames and snippets, the tools it used, its task. A walker starts
from the question's own entities (its error's signature key; the symbols it names) and from
the channels' top hits (each hit by the sum over channels of 1 / its rank there), moves
along a link at random (an episode to one of its entities, an entity to one of its
episodes) and jumps back to a start with probability ``RESTART`` at each step; an episode
with no link jumps back too. Where it spends its time is the propagation score.

Two features come of it, per shortlist (each over the best candidate's, so a question with
a dense graph and one with a sparse one read alike):

* ``ppr.score``: the candidate's share of the walk;
* ``ppr.received``: that share less its own start (what reached it through links only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["PROPAGATION", "RESTART", "personalised_pagerank"]

PROPAGATION: tuple[str, ...] = ("ppr.score", "ppr.received")
RESTART = 0.3  # the walker's chance to jump back to a start at each step
QUESTION_SHARE = 0.5  # of the starts, the question's own entities (when any is linked)
_STEPS = 30

Matrix = npt.NDArray[np.float64]


def personalised_pagerank(
    links: Sequence[frozenset[str]],
    ranks: Sequence[Mapping[str, int]],
    question: frozenset[str],
) -> list[tuple[float, float]]:
    """Each candidate's (ppr.score, ppr.received): ``links`` the entities each is linked
    to (named ``kind:value``), ``ranks`` its rank in each channel that found it,
    ``question`` the entities the question itself names."""
    n = len(links)
    if n == 0:
        return []
    entities: dict[str, int] = {}
    pairs = [(i, entities.setdefault(v, len(entities))) for i, vs in enumerate(links) for v in vs]
    incidence = np.zeros((n, len(entities)))
    if pairs:
        rows, columns = zip(*pairs, strict=True)
        incidence[list(rows), list(columns)] = 1.0
    seeds = np.asarray([sum(1.0 / r for r in rk.values() if r) for rk in ranks], dtype=float)
    start_c = seeds / seeds.sum() if seeds.sum() > 0 else np.full(n, 1.0 / n)
    start_e = np.zeros(len(entities))
    asked = [entities[q] for q in question if q in entities]
    if asked:
        start_e[asked] = QUESTION_SHARE / len(asked)
        start_c = start_c * (1.0 - QUESTION_SHARE)
    degree_c = incidence.sum(axis=1)
    degree_e = incidence.sum(axis=0)
    to_entities = incidence / np.maximum(degree_c, 1.0)[:, None]  # row: an episode's choice
    to_episodes = incidence / np.maximum(degree_e, 1.0)[None, :]  # column: an entity's
    dangling = degree_c == 0
    x_c, x_e = start_c.copy(), start_e.copy()
    for _ in range(_STEPS):
        lost = float(x_c[dangling].sum())
        moved_e = to_entities.T @ x_c
        moved_c = to_episodes @ x_e
        new_c = (1 - RESTART) * (moved_c + lost * start_c) + RESTART * start_c
        new_e = (1 - RESTART) * (moved_e + lost * start_e) + RESTART * start_e
        done = np.abs(new_c - x_c).sum() + np.abs(new_e - x_e).sum() < 1e-9
        x_c, x_e = new_c, new_e
        if done:
            break
    received = (1 - RESTART) * (to_episodes @ x_e)
    best, best_received = float(x_c.max()) or 1.0, float(received.max()) or 1.0
    return [(float(x_c[i] / best), float(received[i] / best_received)) for i in range(n)]
