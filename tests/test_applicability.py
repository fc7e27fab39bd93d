"""Does this failure apply to me? A memory's conditions (OS, architecture, runtime and package
versions, the error) checked against the caller's environment in recall, planContext and the
snippet search: yes / no / unknown with the reasons, and one whose conditions do not hold
ranked below an otherwise identical one whose do — on the real app, Neo4j and model."""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.graph.applicability import (
    CallerConditions,
    environment_applies,
    episode_applies,
    episode_text,
    snippet_applies,
)

RECORD = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
RECALL = """
query($project: String!, $query: String!, $context: RecallContext) {
  recall(project: $project, query: $query, k: 5, context: $context) {
    hits { episode { id } score applies { status reasons } why { trust { factor value } }
           snippets { snippet { id } applies { status reasons } } }
  }
}"""
SEARCH = """
query($project: String!, $query: String!, $environment: EnvironmentInput) {
  searchSnippets(project: $project, query: $query, k: 5, environment: $environment) {
    snippet { id } applies { status reasons } compatibility { status }
  }
}"""
PLAN = """
query($project: String!, $task: PlanTaskInput!) {
  planContext(project: $project, task: $task, k: 5, budget: 4000) { memories { id text } }
}"""
CRASH = ("Importing the image decoder crashed the worker with an illegal instruction "
         "(SIGILL) right after the wheel was installed")  # fmt: skip
SLOW = ("Sorting the pandas events frame by timestamp takes minutes: the merge of the two "
        "frames copies every column")  # fmt: skip
LINUX = {"os": "linux", "runtime": "python", "runtimeVersion": "3.11.6"}


def _record(gql: Any, inputs: list[dict[str, Any]]) -> None:
    body = gql(RECORD, {"inputs": inputs})
    assert body["data"]["recordEpisodes"] == {"written": len(inputs), "refused": 0}, body


def _recall(gql: Any, project: str, query: str, env: dict[str, Any] | None) -> list[dict[str, Any]]:
    context = {"environment": env} if env else None
    body = gql(RECALL, {"project": project, "query": query, "context": context})
    assert "errors" not in body, body
    hits: list[dict[str, Any]] = body["data"]["recall"]["hits"]
    return hits


def _failure(project: str, id: str, summary: str, env: dict[str, Any]) -> dict[str, Any]:
    return {"project": project, "id": id, "summary": summary, "outcome": "failure",
            "source": "executed", "environment": env}  # fmt: skip


def _order(hits: list[dict[str, Any]], *ids: str) -> list[str]:
    return [h["episode"]["id"] for h in hits if h["episode"]["id"] in ids]


@pytest.mark.slow
def test_a_failure_from_another_architecture_ranks_below_the_same_failure_here(
    gql: Any, project: str
) -> None:
    _record(gql, [
        _failure(project, "on-arm", CRASH, {**LINUX, "arch": "aarch64"}),
        _failure(project, "on-x86", CRASH, {**LINUX, "arch": "x86_64"}),
    ])  # fmt: skip
    question = "the worker dies with an illegal instruction when it imports the image decoder"
    # Either architecture: the failure that happened there comes first, the other below it.
    for arch, here, there in (("arm64", "on-arm", "on-x86"), ("amd64", "on-x86", "on-arm")):
        hits = _recall(gql, project, question, {**LINUX, "arch": arch})
        assert _order(hits, here, there) == [here, there], (arch, hits)
        by_id = {h["episode"]["id"]: h for h in hits}
        assert by_id[here]["applies"]["status"] == "yes"
        assert by_id[there]["applies"]["status"] == "no"
        assert any(r.startswith("architecture ") and " there, " in r
                   for r in by_id[there]["applies"]["reasons"]), by_id[there]  # fmt: skip
        assert {"factor": "applies", "value": 0.25} in by_id[there]["why"]["trust"]
        assert by_id[here]["score"] > by_id[there]["score"]
    # Without an environment nothing is judged and nothing moves for it.
    plain = _recall(gql, project, question, None)
    assert {h["applies"]["status"] for h in plain} == {"unknown"}
    assert not any(t["factor"] == "applies" for h in plain for t in h["why"]["trust"])


def test_a_failure_under_another_package_release_ranks_below_the_same_failure_here(
    gql: Any, project: str
) -> None:
    _record(gql, [
        _failure(project, "pandas-1", SLOW, {**LINUX, "packages": {"pandas": "1.5.3"}}),
        _failure(project, "pandas-2", SLOW, {**LINUX, "packages": {"pandas": "2.2.1"}}),
    ])  # fmt: skip
    question = "sorting the events dataframe by timestamp is very slow after a merge"
    for version, here, there in (("2.2.3", "pandas-2", "pandas-1"),
                                 ("1.5.0", "pandas-1", "pandas-2")):  # fmt: skip
        hits = _recall(gql, project, question, {**LINUX, "packages": {"pandas": version}})
        assert _order(hits, here, there) == [here, there], (version, hits)
        by_id = {h["episode"]["id"]: h for h in hits}
        assert by_id[here]["applies"]["status"] == "yes"
        assert by_id[there]["applies"] == {
            "status": "no",
            "reasons": [f"pandas {'1.5.3' if there == 'pandas-1' else '2.2.1'} there, "
                        f"{version} here"],
        }  # fmt: skip
    # planContext says it beside the memory, for the agent to weigh.
    task = {"goal": question, "environment": {**LINUX, "packages": {"pandas": "2.2.3"}}}
    body = gql(PLAN, {"project": project, "task": task})
    assert "errors" not in body, body
    texts = {m["id"]: m["text"] for m in body["data"]["planContext"]["memories"]}
    assert "applies to you: no (pandas 1.5.3 there, 2.2.3 here)" in texts["pandas-1"]
    assert "applies to you: yes" in texts["pandas-2"]


def _coded(project: str, id: str, code: str, env: dict[str, Any]) -> dict[str, Any]:
    return {"project": project, "id": id, "outcome": "success", "source": "executed",
            "summary": "Normalised each row of the matrix with numpy", "environment": env,
            "snippets": [{"code": code, "language": "python"}]}  # fmt: skip


def _rows(variable: str) -> str:
    norm = f"numpy.linalg.norm({variable}, axis=1, keepdims=True)"
    return ("import numpy\n\n"
            f"def normalize_rows(matrix):\n    {variable} = numpy.asarray(matrix)\n"
            f"    return {variable} / {norm}\n")  # fmt: skip


def _search(gql: Any, project: str, env: dict[str, Any]) -> list[dict[str, Any]]:
    body = gql(SEARCH, {"project": project, "query": "normalize every row of a matrix",
                        "environment": env})  # fmt: skip
    assert "errors" not in body, body
    hits: list[dict[str, Any]] = body["data"]["searchSnippets"]
    return hits


def _snippet_ids(gql: Any, project: str) -> dict[str, str]:
    """The snippet each episode generated, by the episode's id."""
    found = {}
    for h in _recall(gql, project, "normalize every row of a matrix", None):
        found[h["episode"]["id"]] = h["snippets"][0]["snippet"]["id"]
    return found


@pytest.mark.slow
def test_a_snippet_whose_conditions_do_not_hold_ranks_below_one_whose_do(
    gql: Any, project: str
) -> None:
    numpy = {"numpy": "2.1.0"}
    _record(gql, [
        _coded(project, "arm", _rows("array"), {**LINUX, "arch": "arm64", "packages": numpy}),
        _coded(project, "x86", _rows("values"), {**LINUX, "arch": "x86_64", "packages": numpy}),
        _coded(project, "old", _rows("data"), {**LINUX, "arch": "x86_64",
                                               "packages": {"numpy": "1.26.4"}}),
    ])  # fmt: skip
    ids = _snippet_ids(gql, project)
    assert len(set(ids.values())) == 3, ids
    # Differing only in architecture: the one that worked here first, either way round.
    for arch, here, there in (("arm64", "arm", "x86"), ("x86_64", "x86", "arm")):
        hits = _search(gql, project, {**LINUX, "arch": arch, "packages": numpy})
        order = [h["snippet"]["id"] for h in hits if h["snippet"]["id"] in (ids[here], ids[there])]
        assert order == [ids[here], ids[there]], (arch, hits)
        applies = {h["snippet"]["id"]: h["applies"] for h in hits}
        assert applies[ids[here]]["status"] == "yes"
        assert applies[ids[there]]["status"] == "no"
        assert any("architecture" in r for r in applies[ids[there]]["reasons"])
    # Differing only in a package's release: the one whose pinned range holds first.
    for version, here, there in (("1.26.4", "old", "x86"), ("2.1.3", "x86", "old")):
        hits = _search(gql, project, {**LINUX, "arch": "x86_64", "packages": {"numpy": version}})
        order = [h["snippet"]["id"] for h in hits if h["snippet"]["id"] in (ids[here], ids[there])]
        assert order == [ids[here], ids[there]], (version, hits)
        applies = {h["snippet"]["id"]: h["applies"] for h in hits}
        assert applies[ids[there]]["status"] == "no" and applies[ids[here]]["status"] == "yes"
    # Across the bridge in recall: judged the same way, the one that does not apply last.
    hits = _recall(gql, project, "normalize every row of a matrix", {**LINUX, "arch": "arm64"})
    bridge = {h["episode"]["id"]: h["snippets"][0]["applies"]["status"] for h in hits}
    assert bridge["arm"] == "yes" and bridge["x86"] == "no"


# The judgement on its own: what holds, what does not, what is left unknown.


def test_versions_hold_on_their_release_line_and_unstated_is_unknown() -> None:
    env = {"os": "linux", "arch": "x86_64", "runtime": "python", "runtime_version": "3.11.4",
           "packages": [{"name": "numpy", "version": "1.26.4"}]}  # fmt: skip
    same = CallerConditions(runtime="python", runtime_version="3.11.9",
                            packages=(("numpy", "1.26.0"),))  # fmt: skip
    assert environment_applies(env, same).status == "yes"
    newer = CallerConditions(runtime="python", runtime_version="3.12.1")
    assert environment_applies(env, newer).reasons == ("python 3.11.4 there, 3.12.1 here",)
    assert environment_applies(env, CallerConditions(arch="amd64")).status == "yes"
    assert environment_applies(env, None).status == "unknown"
    assert environment_applies(None, same).status == "unknown"
    # Node and Java number their release lines by the major alone.
    node = {"runtime": "node", "runtime_version": "18.19.0"}
    assert environment_applies(node, CallerConditions(runtime="node", runtime_version="18.20.2")
                               ).status == "yes"  # fmt: skip
    assert environment_applies(node, CallerConditions(runtime="node", runtime_version="20.1.0")
                               ).status == "no"  # fmt: skip
    # A package only one side lists decides nothing.
    other = CallerConditions(os="linux", packages=(("pandas", "2.2.0"),))
    assert environment_applies(env, other).status == "yes"
    assert environment_applies(env, CallerConditions(packages=(("pandas", "2.2.0"),))).status == (
        "unknown"
    )


def test_a_package_is_a_condition_of_an_episode_only_where_it_names_it() -> None:
    packages = [{"name": "numpy", "version": "1.26.4"},
                {"name": "typing-extensions", "version": "4.9.0"}]  # fmt: skip
    env = {"os": "linux", "packages": packages}
    caller = CallerConditions(os="linux", packages=(("numpy", "2.1.0"),
                                                    ("typing-extensions", "4.12.2")))  # fmt: skip
    unrelated = episode_text({"summary": "The cache key ignored the locale"})
    assert episode_applies(env, [], caller, unrelated).status == "yes"
    about = episode_text({"summary": "x", "error_text": "numpy.core._exceptions: ..."})
    assert episode_applies(env, [], caller, about).reasons == ("numpy 1.26.4 there, 2.1.0 here",)
    typed = episode_text({"summary": "ImportError: cannot import name from typing_extensions"})
    assert episode_applies(env, [], caller, typed).status == "no"


def test_the_error_is_a_condition_beside_the_environment() -> None:
    errors = [{"key": "k1", "kind": "java.lang.OutOfMemoryError"}]
    caller = CallerConditions(os="linux", error_keys=("k2",), error_kinds=("SIGSEGV",))
    judged = episode_applies({"os": "linux"}, errors, caller)
    assert judged.status == "no" and "error java.lang.OutOfMemoryError there" in judged.reasons[0]
    same = CallerConditions(os="linux", error_keys=("k1",))
    assert episode_applies({"os": "linux"}, errors, same).status == "yes"
    kind = CallerConditions(os="linux", error_keys=("k9",),
                            error_kinds=("java.lang.OutOfMemoryError",))  # fmt: skip
    assert episode_applies({"os": "linux"}, errors, kind).status == "yes"
    assert episode_applies(None, errors, kind).status == "unknown"


@pytest.mark.parametrize(
    ("requirements", "status"), [("compatible", "yes"), ("incompatible", "no"), (None, "yes")]
)
def test_a_snippet_applies_where_it_worked_and_its_requirements_hold(
    requirements: str | None, status: str
) -> None:
    caller = CallerConditions(arch="arm64", runtime="python", runtime_version="3.11.2")
    worked = [{"arch": "x86_64"}, {"arch": "arm64", "runtime": "python"}]
    assert snippet_applies(worked, requirements, ("r",), caller).status == status
    only_x86 = snippet_applies([{"arch": "x86_64"}], None, (), caller)
    assert only_x86.status == "no" and only_x86.reasons[0].startswith("worked only where")
