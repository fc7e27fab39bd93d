"""Analytics: each measure on a small hand-made subgraph, then the whole on the real Neo4j."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from story import Story, load_story, numpy_error_key

from metisgraph.graph.analytics import EpisodeFacts, ErrorFacts, Pulled, analytics, measure

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _episode(
    task: str,
    step: int,
    errors: tuple[str, ...] = (),
    *,
    outcome: str = "failure",
    env: str | None = "env-a",
    tools: tuple[str, ...] = (),
    snippets: tuple[str, ...] = (),
    project: str = "p",
) -> EpisodeFacts:
    return EpisodeFacts(
        project=project,
        id=f"{task}-{step}",
        task=task,
        step=step,
        at=T0 + timedelta(hours=step),
        outcome=outcome,
        errors=errors,
        environment=env,
        tools=tools,
        snippets=snippets,
    )


def _pulled(episodes: list[EpisodeFacts], **kwargs: Any) -> Pulled:
    pulled = Pulled(["p"], None, None, 100, episodes, truncated=False)
    for key in sorted({k for e in episodes for k in e.errors}):
        pulled.errors[("p", key)] = ErrorFacts("p", key, f"kind-{key}", key, key, ())
    pulled.packages.update(kwargs.get("packages", {}))
    pulled.errors.update(kwargs.get("errors", {}))
    return pulled


def test_the_error_that_comes_first_leads_and_its_followers_cluster_with_it() -> None:
    episodes = []
    for t in range(4):  # disk full, then the write fails, then the job times out
        episodes += [_episode(f"t{t}", 0, ("disk",)), _episode(f"t{t}", 1, ("write",))]
        episodes.append(_episode(f"t{t}", 2, ("timeout",)))
    for t in range(3):  # an unrelated pair that always comes together in one step
        episodes.append(_episode(f"u{t}", 0, ("dns", "tls")))
    episodes.append(_episode("lonely", 0, ("oom",)))
    result = measure(_pulled(episodes))

    clusters = [sorted(e.key for e in c.errors) for c in result.clusters]
    assert sorted(clusters) == [["disk", "timeout", "write"], ["dns", "tls"]]
    assert all(c.cohesion == 1.0 for c in result.clusters)  # nothing links the two

    top = result.root_causes[0]
    assert top.error.key == "disk" and top.leads == 4 and top.share == 1.0
    assert top.precedes == 8 and top.preceded_by == 0
    assert top.followers[:2] == ["kind-timeout", "kind-write"]
    # Errors met in the same step never lead: no order between them.
    assert "dns" not in {r.error.key for r in result.root_causes}
    assert "oom" not in {r.error.key for r in result.root_causes}


def test_fix_path_goes_from_the_sighting_along_the_task_to_the_fixing_code() -> None:
    episodes = [
        _episode("t", 0, ("boom",)),
        _episode("t", 1, outcome="failure", snippets=("try",)),
        _episode("t", 2, outcome="success", snippets=("fix",)),
        _episode("u", 0, ("boom",)),
        _episode("u", 1, outcome="success", snippets=("fix",)),
    ]
    fixes = {
        ("p", "boom"): ErrorFacts(
            "p", "boom", "kind-boom", "boom", "boom", (("fix", "t", "t-2"), ("fix", "u", "u-1"))
        )
    }
    result = measure(_pulled(episodes, errors=fixes))
    (path,) = result.fix_paths
    assert path.error.key == "boom" and path.snippet == "fix"
    assert path.steps == 2  # task u: the sighting, then the fixing step
    assert [s.kind for s in path.path] == ["Error", "Episode", "Episode", "Snippet"]


def test_a_package_version_twice_as_frequent_among_failures_has_lift_two() -> None:
    packages = {
        ("p", "old"): {"numpy": "1.24.2", "pandas": "2.0.3"},
        ("p", "new"): {"numpy": "1.26.4", "pandas": "2.0.3"},
    }
    episodes = [_episode(f"f{i}", 0, ("x",), env="old") for i in range(4)]
    episodes += [_episode(f"s{i}", 0, outcome="success", env="new") for i in range(4)]
    result = measure(_pulled(episodes, packages=packages))
    lifts = {(x.name, x.version): x for x in result.over_represented}
    old = lifts[("numpy", "1.24.2")]
    assert (old.failing, old.total, old.lift) == (4, 4, 2.0)
    # In every run, failing or not: no lift. Never among failures: not reported.
    assert ("pandas", "2.0.3") not in lifts and ("numpy", None) not in lifts
    assert ("numpy", "1.26.4") not in lifts


def test_hubs_rank_the_tool_between_errors_first() -> None:
    episodes = [
        _episode("a", 0, ("e1",), tools=("kubectl", "curl"), env=None),
        _episode("b", 0, ("e2",), tools=("kubectl",), env=None),
        _episode("c", 0, ("e3",), tools=("kubectl", "psql"), env=None),
    ]
    result = measure(_pulled(episodes))
    top = result.hubs[0]
    assert (top.kind, top.name, top.errors, top.failures) == ("tool", "kubectl", 3, 3)
    assert top.betweenness > 0
    leaves = {h.name: h for h in result.hubs}
    assert leaves["curl"].betweenness == 0.0


@pytest.mark.anyio
@pytest.mark.slow
async def test_analytics_of_the_story_bounded_and_warned(
    store: Any, embedder: Any, project: str
) -> None:
    story: Story = await load_story(store, embedder, project)
    result = await analytics(store, story.projects)
    assert result.episodes == 10 and not result.truncated
    (cluster,) = result.clusters
    assert {e.kind for e in cluster.errors} == {
        "python:ModuleNotFoundError",
        "python:AttributeError",
        "log:error",
    }
    assert result.root_causes[0].error.kind == "python:ModuleNotFoundError"
    numpy = next(p for p in result.fix_paths if p.error.key == numpy_error_key())
    assert numpy.snippet == "upgrade legacy-stats" and numpy.steps == 2
    assert set(numpy.error.projects) == set(story.projects)
    assert {h.kind for h in result.hubs} >= {"tool", "package", "snippet"}

    capped = await analytics(store, story.projects, cap=4)
    assert capped.truncated and capped.episodes == 4
    assert any("cap" in w for w in capped.warnings)
    window = await analytics(store, story.projects, since=datetime(2026, 4, 1, tzinfo=UTC))
    assert window.episodes == 4  # billing's two, May's two
    with pytest.raises(ValueError, match="cap"):
        await analytics(store, story.projects, cap=0)
