"""Invalidation when dependencies move: STALE_IN written when a newer environment has a
package outside a snippet's verified versions, or the snippet fails where it used to work;
searchSnippets and recall say so and rank it down; a later success there clears it.
Through GraphQL on the real app and the real Neo4j."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from metisgraph.graph.staleness import judge_stale, outside_verified

FETCH = (Path(__file__).resolve().parent / "fixtures" / "snippets" / "fetch_json.py").read_text()
# The same job without a pinned version: nothing to judge it against, so never stale.
FETCH_PLAIN = """import requests


def pull(address):
    return requests.get(address).json()
"""

EPISODE = "mutation($input: EpisodeInput!) { recordEpisode(input: $input) { id status } }"
SNIPPET = """mutation($input: SnippetRecordInput!) {
  recordSnippet(input: $input) { status snippet { id } }
}"""
OUTCOME = """
mutation($p: String!, $id: String!, $ok: Boolean!, $in: String) {
  recordOutcome(project: $p, memoryId: $id, success: $ok, appliedIn: $in) { memoryId }
}"""
WHERE = """query($p: String!, $q: String!) {
  recall(project: $p, query: $q, k: 10) { hits { episode { id } environment { key } } }
}"""
STALE = "staleIn { environment package verified found reason since }"
SEARCH = f"""
query($p: String!, $q: String!, $k: Int!) {{
  searchSnippets(project: $p, query: $q, k: $k) {{ snippet {{ id requires {{ name }} {STALE} }} }}
}}"""
RECALL = f"""
query($p: String!, $q: String!) {{
  recall(project: $p, query: $q, k: 5) {{
    hits {{ episode {{ id }} snippets {{ snippet {{ id {STALE} }} }} }}
  }}
}}"""


def _env(runtime: str = "3.11.6", requests: str = "2.31.0") -> dict[str, Any]:
    return {"runtime": "python", "runtimeVersion": runtime, "packages": {"requests": requests}}


def _ok(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def _episode(
    gql: Any,
    project: str,
    id: str,
    summary: str,
    env: dict[str, Any],
    outcome: str = "success",
    code: str | None = None,
) -> None:
    episode: dict[str, Any] = {
        "project": project,
        "id": id,
        "taskId": f"task-{id}",
        "summary": summary,
        "outcome": outcome,
        "environment": env,
    }
    if code is not None:
        command = f"cat > fetch.py <<'EOF'\n{code}EOF\npython3 fetch.py"
        episode["action"] = {"type": "command", "command": command}
    _ok(gql(EPISODE, {"input": episode}))


def _search(gql: Any, project: str, k: int = 5) -> list[dict[str, Any]]:
    hits = _ok(gql(SEARCH, {"p": project, "q": "fetch a JSON document over HTTP", "k": k}))
    return [h["snippet"] for h in hits["searchSnippets"]]


def _fetcher(gql: Any, project: str, besides: str = "") -> str:
    """The snippet that needs requests (the episode's shell command is a snippet too)."""
    [found] = [s["id"] for s in _search(gql, project) if s["requires"] and s["id"] != besides]
    return found


def _stale(gql: Any, project: str, snippet: str) -> dict[str, dict[str, Any]]:
    """The environments (by key) the snippet is stale in, as searchSnippets shows them."""
    found = {s["id"]: s for s in _search(gql, project)}
    return {x["environment"]: x for x in found[snippet]["staleIn"]}


def _report(gql: Any, project: str, snippet: str, ok: bool, applied_in: str) -> None:
    _ok(gql(OUTCOME, {"p": project, "id": snippet, "ok": ok, "in": applied_in}))


def _env_key(gql: Any, project: str, episode: str, summary: str) -> str:
    """The key of the environment an episode ran in (recall shows it; asked by its words)."""
    body = _ok(gql(WHERE, {"p": project, "q": summary}))
    keys = {h["episode"]["id"]: h["environment"]["key"] for h in body["recall"]["hits"]}
    return keys[episode]


# --- the version rule, without a database --------------------------------------------------


def test_outside_the_range_or_the_release_line() -> None:
    # With a range (ingest pins one from the environment it ran in), the range decides.
    assert outside_verified("3.0.0", [">=2.31.0,<3"], ["2.31.0"]) is True
    assert outside_verified("2.32.3", [">=2.31.0,<3"], ["2.31.0"]) is False
    assert outside_verified("2.28.0", [">=2.31.0,<3"], ["2.31.0"]) is True
    # Without one: another major; under 0.x another minor.
    assert outside_verified("2.0.1", [""], ["1.5.3"]) is True
    assert outside_verified("1.9.0", [], ["1.5.3"]) is False
    assert outside_verified("0.25.0", [], ["0.24.2"]) is True
    assert outside_verified("0.24.9", [], ["0.24.2"]) is False
    # A later success outside the range adds its release line.
    assert outside_verified("3.1.0", [">=2.31.0,<3"], ["2.31.0", "3.0.0"]) is False
    # Nothing to compare with, or nothing that parses: not stale.
    assert outside_verified("2.0.0", [""], []) is None
    assert outside_verified("not-a-version", [">=1"], ["1.0"]) is None


def test_the_last_word_from_an_environment_decides() -> None:
    moved = {"name": "requests", "specs": [">=2.31.0,<3"], "found": "3.0.0", "working": []}
    assert judge_stale({"last_here": None, "worked": True, "packages": [moved]}) == {
        "package": "requests", "verified": [">=2.31.0,<3"], "found": "3.0.0", "reason": "moved"
    }  # fmt: skip
    assert judge_stale({"last_here": True, "worked": True, "packages": [moved]}) is None
    same = {"name": "requests", "specs": [], "found": "2.31.0", "working": ["2.31.0"]}
    failed = judge_stale({"last_here": False, "worked": True, "packages": [same]})
    assert failed == {"package": None, "verified": [], "found": None, "reason": "failed"}
    # A failure of code that never worked anywhere says nothing about the environment.
    assert judge_stale({"last_here": False, "worked": False, "packages": [same]}) is None


# --- the scenario, through the service -----------------------------------------------------


@pytest.mark.slow
def test_a_newer_environment_makes_a_snippet_stale_until_it_works_there(
    gql: Any, project: str
) -> None:
    # The snippet ran and worked with requests 2.31.0 (pinned >=2.31.0,<3); another snippet
    # for the same job was recorded with no environment (no pin: never judged stale).
    _episode(gql, project, "fetch-1", "Fetched the nightly report as JSON", _env(), code=FETCH)
    recorded = _ok(gql(SNIPPET, {"input": {"project": project, "code": FETCH_PLAIN}}))
    plain = recorded["recordSnippet"]["snippet"]["id"]
    before = _search(gql, project)
    pinned = _fetcher(gql, project, besides=plain)
    order = [s["id"] for s in before]
    assert order.index(pinned) < order.index(plain), "the pinned snippet is the better match"
    assert all(not s["staleIn"] for s in before)

    # A newer environment of the project: requests 3.0.0 is outside the pinned range.
    upgrade = "Upgraded the HTTP client library"
    _episode(gql, project, "upgrade", upgrade, _env(requests="3.0.0"))
    upgraded = _env_key(gql, project, "upgrade", upgrade)
    stale = _stale(gql, project, pinned)
    assert set(stale) == {upgraded}
    assert stale[upgraded]["package"] == "requests" and stale[upgraded]["found"] == "3.0.0"
    assert stale[upgraded]["verified"] == [">=2.31.0,<3", "2.31.0"]  # the range, what worked
    assert stale[upgraded]["reason"] == "moved"
    assert stale[upgraded]["since"]
    # searchSnippets ranks it down, below the fresh one; recall shows the flag on the bridge,
    # the stale snippet after the episode's fresh one (its shell command).
    order = [s["id"] for s in _search(gql, project)]
    assert order.index(plain) < order.index(pinned)
    # With room for one, the best fresh snippet takes the stale one's place, read whole.
    fresh = [s for s in _search(gql, project) if not s["staleIn"]]
    assert _search(gql, project, k=1) == fresh[:1]
    recall = _ok(gql(RECALL, {"p": project, "q": "Fetched the nightly report as JSON"}))
    [hit] = [h for h in recall["recall"]["hits"] if h["episode"]["id"] == "fetch-1"]
    bridge = [s["snippet"] for s in hit["snippets"]]
    assert [s["id"] for s in bridge][-1] == pinned and len(bridge) == 2
    assert [x["environment"] for x in bridge[-1]["staleIn"]] == [upgraded]
    assert bridge[0]["staleIn"] == []
    assert next(s for s in _search(gql, project) if s["id"] == plain)["staleIn"] == []

    # A version inside the range is not stale; neither is the unpinned snippet anywhere.
    _episode(gql, project, "patch", "Applied a patch release", _env(requests="2.32.3"))
    assert set(_stale(gql, project, pinned)) == {upgraded}

    # A later success in the new environment clears it, and its line counts from then on.
    _report(gql, project, pinned, True, "upgrade")
    assert _stale(gql, project, pinned) == {}
    order = [s["id"] for s in _search(gql, project)]
    assert order.index(pinned) < order.index(plain)
    _episode(gql, project, "minor", "Moved to the next minor release", _env(requests="3.1.0"))
    assert _stale(gql, project, pinned) == {}
    _episode(gql, project, "major", "Moved to the next major release", _env(requests="4.0.0"))
    assert [x["found"] for x in _stale(gql, project, pinned).values()] == ["4.0.0"]


@pytest.mark.slow
def test_failing_where_it_used_to_work_makes_it_stale(gql: Any, project: str) -> None:
    _episode(gql, project, "fetch-1", "Fetched the nightly report as JSON", _env(), code=FETCH)
    pinned = _fetcher(gql, project)
    # Another Python, the same requests: nothing moved, so not stale there...
    moved = "Ran the job on Python 3.12"
    _episode(gql, project, "py312", moved, _env(runtime="3.12.1"))
    py312 = _env_key(gql, project, "py312", moved)
    assert _stale(gql, project, pinned) == {}
    # ...until it fails there, having worked before.
    _report(gql, project, pinned, False, "py312")
    stale = _stale(gql, project, pinned)
    assert set(stale) == {py312} and stale[py312]["reason"] == "failed"
    assert stale[py312]["package"] is None  # no required package differs: the runtime did
    # The environment it worked in stays fresh; a success on 3.12 clears the flag.
    _report(gql, project, pinned, True, "py312")
    assert _stale(gql, project, pinned) == {}


def test_a_snippet_that_never_worked_is_not_called_stale(gql: Any, project: str) -> None:
    _episode(gql, project, "try-1", "Tried to fetch the report", _env(), "failure", code=FETCH)
    snippet = _fetcher(gql, project)
    _episode(gql, project, "try-2", "Tried again on 3.12", _env(runtime="3.12.1"))
    _report(gql, project, snippet, False, "try-2")
    assert _stale(gql, project, snippet) == {}
