"""Graph channels read a bounded number of episodes through each node the question matched
(issue 24: recall at 1M): a tag on a tenth of the store, an error seen thousands of times.
Through a node of fewer episodes than the fanout, what a channel finds and how it scores it
is what it was before the bound; through a larger one it reads at most the fanout."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from metisgraph.graph import QuestionVectors, RecallRequest
from metisgraph.graph.channels import gather_channels
from metisgraph.graph.recall_settings import RecallSettings

DIMENSIONS = 384
COMMON, RARE = 30, 3  # episodes through the common nodes, and through the rare ones


def _vector() -> list[float]:
    return [random.random() for _ in range(DIMENSIONS)]


async def _stored(store: Any, project: str) -> None:
    """COMMON episodes sharing a tag, a tool, an error and a symbol; the first RARE of them
    also share rarer ones of each."""
    await store.run_text(
        "MERGE (:Project {name: $project}) "
        "MERGE (common:Tag {project: $project, name: 'area:core', value: 'core'}) "
        "MERGE (rare:Tag {project: $project, name: 'component:parser', value: 'parser'}) "
        "MERGE (pytest:Tool {project: $project, name: 'pytest'}) "
        "MERGE (gdb:Tool {project: $project, name: 'gdb'}) "
        "MERGE (oom:Error {project: $project, key: 'oom'}) "
        "MERGE (npe:Error {project: $project, key: 'npe'}) "
        "MERGE (io:Symbol {project: $project, name: 'io'}) "
        "MERGE (lexer:Symbol {project: $project, name: 'Lexer'}) "
        "WITH * UNWIND range(1, $count) AS i "
        "CREATE (e:Episode {project: $project, id: 'f' + i, recallable: true, "
        "outcome: 'failure', review_status: 'unreviewed', active_at: datetime(), "
        "summary: 'step ' + i, embedding: $vector, symbols: ['io'], symbol_weights: [1.0]}) "
        "CREATE (:EpisodeVector {project: $project, episode: e.id, of: 'text', "
        "embedding: $vector}) "
        "CREATE (e)-[:TAGGED]->(common), (e)-[:USED_TOOL]->(pytest), (e)-[:HIT]->(oom), "
        "(e)-[:MENTIONS]->(io) "
        "WITH * WHERE i <= $rare "
        "SET e.symbols = ['io', 'Lexer'], e.symbol_weights = [1.0, 2.0] "
        "CREATE (e)-[:TAGGED]->(rare), (e)-[:USED_TOOL]->(gdb), (e)-[:HIT]->(npe), "
        "(e)-[:MENTIONS]->(lexer)",
        {"project": project, "count": COMMON, "rare": RARE, "vector": _vector()},
    )


def _request(project: str, fanout: int) -> RecallRequest:
    return RecallRequest(
        projects=(project,),
        text="core parser crash under pytest and gdb",
        words=("core", "parser"),
        tools=("pytest", "gdb"),
        error_keys=("oom", "npe"),
        symbols=("io", "Lexer"),
        settings=replace(RecallSettings(), fanout=fanout),
    )


async def _found(store: Any, project: str, fanout: int) -> dict[str, dict[str, float]]:
    answers = await gather_channels(store, _request(project, fanout), QuestionVectors(_vector()))
    assert not answers.failures
    return {
        channel: {c.key[1]: c.score for c in answers.candidates[channel]}
        for channel in ("tags", "tools", "errors", "symbols")
    }


@pytest.mark.anyio
async def test_a_graph_channel_reads_at_most_the_fanout_through_a_node(
    store: Any, project: str
) -> None:
    await _stored(store, project)
    whole = await _found(store, project, fanout=1000)  # every node under the fanout
    for channel, found in whole.items():
        assert len(found) == COMMON, channel  # every episode, through the common node
        rare = {f"f{i}" for i in range(1, RARE + 1)}
        best = sorted(found, key=lambda i: -found[i])[:RARE]
        assert set(best) == rare, channel  # the rare node's episodes lead: both nodes count

    bounded = await _found(store, project, fanout=10)
    rare = {f"f{i}" for i in range(1, RARE + 1)}
    for channel, found in bounded.items():
        # the common node's first 10 episodes, and the rare node's 3 (read whole)
        assert 10 <= len(found) <= 10 + RARE, (channel, len(found))
        assert rare <= found.keys(), channel
        for episode, score in found.items():
            if episode in rare:  # the common node's weight only where it read the episode
                assert score <= whole[channel][episode] + 1e-9, (channel, episode)
            else:  # read through the one node it shares: scored as without the bound
                assert score == pytest.approx(whole[channel][episode]), (channel, episode)


@pytest.mark.anyio
async def test_the_environment_channel_reads_at_most_the_fanout_best_match_first(
    store: Any, project: str
) -> None:
    """An OS alone matches most environments of a project: the channel reads at most the
    fanout in all, from the environments most like the caller's first (here the last one
    stored, the only one with the caller's runtime too)."""
    await store.run_text(
        "MERGE (:Project {name: $project}) "
        "WITH * UNWIND range(1, 6) AS n "
        "CREATE (v:Environment {project: $project, key: 'env' + n, os: 'Linux', "
        "runtime: CASE WHEN n = 6 THEN 'python' ELSE 'go' END}) "
        "WITH * UNWIND range(1, 5) AS i "
        "CREATE (e:Episode {project: $project, id: 'v' + n + '-' + i, recallable: true, "
        "outcome: 'success', review_status: 'unreviewed', active_at: datetime()}) "
        "CREATE (e)-[:IN_ENV]->(v)",
        {"project": project},
    )
    from metisgraph.graph.channels import lexical_channels
    from metisgraph.graph.recall_request import EnvironmentQuery

    def asked(fanout: int) -> RecallRequest:
        return RecallRequest(
            projects=(project,),
            text="it fails on linux",
            environment=EnvironmentQuery(os="linux", runtime="python"),
            settings=replace(RecallSettings(), fanout=fanout),
        )

    whole = (await lexical_channels(store, asked(1000))).candidates["environment"]
    assert len(whole) == 30
    bounded = {
        c.key[1]: c.score
        for c in (await lexical_channels(store, asked(8))).candidates["environment"]
    }
    assert len(bounded) == 8
    best = {f"v6-{i}" for i in range(1, 6)}
    assert best <= bounded.keys() and all(bounded[i] == 2.0 for i in best)
    assert all(score == 1.0 for i, score in bounded.items() if i not in best)
