"""Code memory through GraphQL on the real app: record, search by structure and meaning,
compatibility, review, outcomes, one snippet in full, and tenants kept apart."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

SNIPPETS = Path(__file__).resolve().parent / "fixtures" / "snippets"
PASSWORD = "Wh5-pa55word-77"

RECORD = """
mutation($input: SnippetRecordInput!) {
  recordSnippet(input: $input) {
    id status errors { field message }
    snippet { id name kind language risk reviewStatus pending template calls imports
              findings { rule line severity } requires { name spec } }
  }
}"""
SEARCH = """
query($project: String!, $query: String, $language: String, $imports: [String!],
      $calls: [String!], $kind: SnippetKind, $k: Int!, $environment: EnvironmentInput) {
  searchSnippets(project: $project, query: $query, language: $language, imports: $imports,
                 calls: $calls, kind: $kind, k: $k, environment: $environment) {
    score
    snippet { id name language kind pending calls imports successRate }
    why { semantic fulltext structure { facet wanted found } ranks }
    compatibility { status reasons }
  }
}"""
OUTCOME = """
mutation($project: String!, $id: String!, $success: Boolean!, $note: String) {
  recordOutcome(project: $project, memoryId: $id, success: $success, note: $note) {
    memoryId kind uses successes failures successRate notes { success note }
  }
}"""
DETAIL = """
query($project: String!, $id: String!, $environment: EnvironmentInput) {
  snippet(project: $project, id: $id, environment: $environment) {
    snippet { id name version latest recorded requires { name spec verifiedRanges } }
    versions { id version latest parentId reason }
    episodes { id relation outcome }
    environments { runtime runtimeVersion packages { name version } }
    compatibility { status reasons }
  }
}"""
ENVIRONMENT = {
    "runtime": "python",
    "runtimeVersion": "3.11.6",
    "packages": {"pandas": "2.1.4", "sqlalchemy": "2.0.25", "requests": "2.31.0"},
}


def _code(name: str) -> str:
    return (SNIPPETS / name).read_text(encoding="utf-8")


def _record(gql: Any, project: str, **fields: Any) -> dict[str, Any]:
    body = gql(RECORD, {"input": {"project": project, **fields}})
    assert "errors" not in body, body
    result: dict[str, Any] = body["data"]["recordSnippet"]
    return result


def _search(gql: Any, project: str, k: int = 10, **args: Any) -> list[dict[str, Any]]:
    body = gql(SEARCH, {"project": project, "k": k, **args})
    assert "errors" not in body, body
    hits: list[dict[str, Any]] = body["data"]["searchSnippets"]
    return hits


def _library(gql: Any, project: str) -> dict[str, str]:
    """Three snippets recorded where they ran; their ids by name."""
    ids = {}
    for fixture, name in (("load_orders.py", "load_orders"), ("fetch_json.py", "fetch_json"),
                          ("wipe_staging.sh", "wipe_staging")):  # fmt: skip
        done = _record(gql, project, id=name, code=_code(fixture), environment=ENVIRONMENT)
        assert done["status"] == "written", done
        ids[name] = done["id"]
    return ids


@pytest.mark.slow
def test_search_by_import_and_by_call(gql: Any, project: str) -> None:
    ids = _library(gql, project)
    by_import = _search(gql, project, imports=["sqlalchemy"])
    assert [h["snippet"]["id"] for h in by_import] == [ids["load_orders"]]
    assert by_import[0]["why"]["structure"] == [
        {"facet": "imports", "wanted": "sqlalchemy", "found": "sqlalchemy"}
    ]
    full = _search(gql, project, calls=["pandas.read_sql"])
    bare = _search(gql, project, calls=["read_sql"])
    assert [h["snippet"]["id"] for h in full] == [h["snippet"]["id"] for h in bare]
    assert [h["snippet"]["id"] for h in full] == [ids["load_orders"]]
    assert bare[0]["why"]["structure"][0]["found"] == "pandas.read_sql"
    # Every condition must hold; a call nobody makes empties the answer.
    assert _search(gql, project, imports=["requests"], calls=["read_sql"]) == []
    assert [h["snippet"]["id"] for h in _search(gql, project, imports=["requests"],
                                                 calls=["get"])] == [ids["fetch_json"]]  # fmt: skip
    # Language and kind filter the structural matches.
    assert _search(gql, project, calls=["read_sql"], language="go") == []
    assert _search(gql, project, calls=["read_sql"], kind="shell") == []
    shell = _search(gql, project, calls=["kubectl"], kind="shell")
    assert [h["snippet"]["id"] for h in shell] == [ids["wipe_staging"]]


@pytest.mark.slow
def test_search_combines_meaning_with_structure(gql: Any, project: str) -> None:
    ids = _library(gql, project)
    hits = _search(gql, project, query="download a JSON document from a web API", k=3)
    assert hits[0]["snippet"]["id"] == ids["fetch_json"]
    assert hits[0]["why"]["semantic"] > hits[1]["why"]["semantic"]
    assert hits[0]["why"]["ranks"]["semantic"] == 1
    # With structure, meaning ranks only what the structure lets through.
    hits = _search(gql, project, query="download a JSON document", imports=["pandas"])
    assert [h["snippet"]["id"] for h in hits] == [ids["load_orders"]]
    assert hits[0]["why"]["semantic"] is not None and hits[0]["why"]["structure"]


def test_compatibility_answers_both_ways_with_reasons(gql: Any, project: str) -> None:
    ids = _library(gql, project)

    def verdict(packages: dict[str, str] | None) -> dict[str, Any]:
        environment = None if packages is None else {"runtime": "python",
                                                     "runtimeVersion": "3.12.1",
                                                     "packages": packages}  # fmt: skip
        [hit] = _search(gql, project, calls=["read_sql"], environment=environment)
        assert hit["snippet"]["id"] == ids["load_orders"]
        result: dict[str, Any] = hit["compatibility"]
        return result

    ok = verdict({"pandas": "2.2.2", "sqlalchemy": "2.0.30"})
    assert ok["status"] == "compatible"
    assert "pandas 2.2.2 satisfies >=2.1.4,<3" in ok["reasons"]
    old = verdict({"pandas": "1.5.3", "sqlalchemy": "2.0.30"})
    assert old == {"status": "incompatible",
                   "reasons": ["needs pandas >=2.1.4,<3; found pandas 1.5.3"]}  # fmt: skip
    assert verdict({"pandas": "2.2.2"})["status"] == "unknown"
    unknown = verdict(None)
    assert unknown["status"] == "unknown"
    assert any("packages are not known" in r for r in unknown["reasons"])


def test_a_dangerous_snippet_starts_pending_with_its_findings(gql: Any, project: str) -> None:
    done = _record(gql, project, code=_code("wipe_staging.sh"), name="wipe staging")
    snippet = done["snippet"]
    assert snippet["reviewStatus"] == "pending" and snippet["pending"] is True
    assert snippet["risk"] == "critical" and snippet["kind"] == "shell"
    rules = {f["rule"] for f in snippet["findings"]}
    assert {"kubectl-delete", "rm-rf"} <= rules
    [hit] = _search(gql, project, calls=["kubectl"])
    assert hit["snippet"]["pending"] is True  # pending ones come back, flagged


def test_a_hard_coded_password_is_never_stored(gql: Any, project: str) -> None:
    done = _record(gql, project, code=_code("load_orders.py"),
                   description=f"uses report:{PASSWORD}@warehouse01.corp.example.com")  # fmt: skip
    assert PASSWORD not in repr(done)
    assert "{{password}}" in done["snippet"]["template"]
    body = gql(DETAIL, {"project": project, "id": done["id"]})
    assert PASSWORD not in repr(body)


def test_recording_twice_is_one_snippet_and_a_change_is_a_version(gql: Any, project: str) -> None:
    first = _record(gql, project, id="r1", code=_code("load_orders.py"), name="load_orders",
                    environment=ENVIRONMENT)  # fmt: skip
    again = _record(gql, project, id="r1", code=_code("load_orders.py"), name="load_orders")
    other = _record(gql, project, id="r2", code=_code("load_orders.py"), name="load_orders")
    assert first["id"] == again["id"] == other["id"]
    assert (first["status"], again["status"], other["status"]) == (
        "written",
        "unchanged",
        "written",
    )
    changed = _record(gql, project, id="r3", code=_code("load_orders_v2.py"), name="load_orders",
                      description="accept an engine")  # fmt: skip
    assert changed["id"] != first["id"]
    body = gql(DETAIL, {"project": project, "id": changed["id"]})
    detail = body["data"]["snippet"]
    assert detail["snippet"]["version"] == 2 and detail["snippet"]["latest"] is True
    assert [
        (v["version"], v["latest"], v["parentId"], v["reason"]) for v in detail["versions"]
    ] == [
        (1, False, None, None),
        (2, True, first["id"], "accept an engine"),
    ]
    old = gql(DETAIL, {"project": project, "id": first["id"]})["data"]["snippet"]
    assert old["snippet"]["recorded"] == 2  # records r1 and r2
    assert {r["name"]: r["spec"] for r in old["snippet"]["requires"]}["pandas"] == ">=2.1.4,<3"


def test_record_outcome_updates_reuse_statistics(gql: Any, project: str) -> None:
    ids = _library(gql, project)
    sid = ids["fetch_json"]
    for success, note in (
        (True, None),
        (True, "worked behind the proxy"),
        (False, f"timed out on https://admin:{PASSWORD}@api.example.com/x"),
    ):
        body = gql(OUTCOME, {"project": project, "id": sid, "success": success, "note": note})
        assert "errors" not in body, body
    stats = body["data"]["recordOutcome"]
    assert (stats["memoryId"], stats["kind"]) == (sid, "Snippet")
    assert (stats["uses"], stats["successes"], stats["failures"]) == (3, 2, 1)
    assert stats["successRate"] == pytest.approx(2 / 3)
    assert [n["success"] for n in stats["notes"]] == [False, True]  # newest first
    assert PASSWORD not in repr(stats)
    unknown = gql(OUTCOME, {"project": project, "id": "snippet:nope", "success": True})
    assert "no episode, snippet or pattern 'snippet:nope'" in unknown["errors"][0]["message"]


def test_without_a_query_structural_matches_rank_by_how_reuse_went(gql: Any, project: str) -> None:
    text = (
        "import requests\n\ndef fetch_text(url: str) -> str:\n    return requests.get(url).text\n"
    )
    json_id = _record(gql, project, code=_code("fetch_json.py"))["id"]
    text_id = _record(gql, project, code=text)["id"]

    def report(snippet_id: str, *outcomes: bool) -> None:
        for success in outcomes:
            body = gql(OUTCOME, {"project": project, "id": snippet_id, "success": success})
            assert "errors" not in body, body

    def order() -> list[str]:
        return [h["snippet"]["id"] for h in _search(gql, project, calls=["requests.get"])]

    report(json_id, False)
    report(text_id, True)
    assert order() == [text_id, json_id]
    report(json_id, True, True, True)  # 3 of 4
    report(text_id, False, False)  # 1 of 3
    assert order() == [json_id, text_id]


def test_record_outcome_works_for_an_episode(gql: Any, project: str) -> None:
    body = gql(
        """mutation($input: EpisodeInput!) { recordEpisode(input: $input) { id } }""",
        {"input": {"project": project, "id": "ep-1", "summary": "Rotated the logs"}},
    )
    assert "errors" not in body, body
    stats = gql(OUTCOME, {"project": project, "id": "ep-1", "success": False})
    assert stats["data"]["recordOutcome"]["kind"] == "Episode"
    assert stats["data"]["recordOutcome"]["failures"] == 1


def test_snippet_detail_links_the_episodes_that_made_it(gql: Any, project: str) -> None:
    command = f"cat > fetch.py <<'EOF'\n{_code('fetch_json.py')}EOF\npython3 fetch.py"
    body = gql("""mutation($input: EpisodeInput!) { recordEpisode(input: $input) { id } }""", {
        "input": {"project": project, "id": "ep-fetch", "summary": "Fetched the report",
                  "outcome": "success", "action": {"type": "command", "command": command},
                  "environment": {"runtime": "python", "runtimeVersion": "3.11.6",
                                  "packages": {"requests": "2.31.0"}}}})  # fmt: skip
    assert "errors" not in body, body
    [hit] = _search(gql, project, imports=["requests"])
    detail = gql(
        DETAIL,
        {
            "project": project,
            "id": hit["snippet"]["id"],
            "environment": {"packages": {"requests": "2.32.3"}},
        },
    )["data"]["snippet"]
    assert detail["episodes"] == [{"id": "ep-fetch", "relation": "GENERATED", "outcome": "success"}]
    assert detail["environments"][0]["runtimeVersion"] == "3.11.6"
    # A verified-in environment is an Environment too: its packages come with it.
    assert {"name": "requests", "version": "2.31.0"} in detail["environments"][0]["packages"]
    assert detail["snippet"]["requires"] == [
        {"name": "requests", "spec": ">=2.31.0,<3", "verifiedRanges": [">=2.31.0,<3"]}
    ]
    assert detail["compatibility"]["status"] == "compatible"


def test_bad_searches_and_records_are_refused_naming_the_field(gql: Any, project: str) -> None:
    assert (
        "give a query, imports, calls"
        in gql(SEARCH, {"project": project, "k": 5})["errors"][0]["message"]
    )
    assert (
        "k must be between"
        in gql(SEARCH, {"project": project, "k": 0, "calls": ["x"]})["errors"][0]["message"]
    )
    refused = gql(RECORD, {"input": {"project": "bad project!", "code": "x = 1"}})
    result = refused["data"]["recordSnippet"]
    assert result["status"] == "refused" and result["errors"][0]["field"] == "project"
    blank = gql(RECORD, {"input": {"project": project, "code": "   \n"}})["data"]["recordSnippet"]
    assert blank["status"] == "refused" and blank["errors"][0]["field"] == "code"


def test_projects_never_see_each_others_snippets(gql: Any, project: str) -> None:
    ids = _library(gql, project)
    other = project + "-b"
    assert _search(gql, other, calls=["read_sql"]) == []
    assert _search(gql, other, query="read orders from the warehouse") == []
    assert gql(DETAIL, {"project": other, "id": ids["load_orders"]})["data"]["snippet"] is None
    denied = gql(OUTCOME, {"project": other, "id": ids["load_orders"], "success": True})
    assert "no episode, snippet or pattern" in denied["errors"][0]["message"]


@pytest.fixture(scope="module")
def token_client(app_settings: Any, embedder: Any) -> Any:
    from pydantic import SecretStr
    from starlette.testclient import TestClient

    from metisgraph.api.http.app import create_app

    settings = app_settings.model_copy(deep=True)
    settings.api.api_tokens = SecretStr("alpha-token-0123456789=team-a")
    app = create_app(settings, embedder=embedder, wait_ready=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def test_tokens_keep_callers_to_their_projects(token_client: Any) -> None:
    auth = {"Authorization": "Bearer alpha-token-0123456789"}
    for query, variables in (
        (SEARCH, {"project": "team-b", "k": 1, "calls": ["x"]}),
        (DETAIL, {"project": "team-b", "id": "snippet:x"}),
        (OUTCOME, {"project": "team-b", "id": "snippet:x", "success": True}),
        (RECORD, {"input": {"project": "team-b", "code": "x = 1"}}),
    ):
        body = token_client.post("/graphql", json={"query": query, "variables": variables},
                                 headers=auth).json()  # fmt: skip
        message = body["errors"][0]["message"]  # names the scope: read or write
        assert re.search(r"not allowed to (read|write) project\(s\): team-b", message), body


FACETS = """
query($project: String!, $name: String, $parameters: [String!], $files: [String!],
      $symbols: [String!], $query: String, $imports: [String!]) {
  searchSnippets(project: $project, name: $name, parameters: $parameters, files: $files,
                 symbols: $symbols, query: $query, imports: $imports, k: 10) {
    snippet { id name }
    why { structure { facet wanted found } }
  }
}"""
PATCH = (
    "diff --git a/report/orders.py b/report/orders.py\n--- a/report/orders.py\n"
    "+++ b/report/orders.py\n@@ -3,4 +3,4 @@ def newest(rows):\n"
    "     rows = sorted(rows)\n-    return rows[:10]\n+    return rows[-10:]\n"
)


def _facets(gql: Any, project: str, **args: Any) -> list[str]:
    body = gql(FACETS, {"project": project, **args})
    assert "errors" not in body, body
    return sorted(h["snippet"]["id"] for h in body["data"]["searchSnippets"])


@pytest.mark.slow
def test_search_by_signature_file_and_symbol(gql: Any, project: str) -> None:
    """The signature's name and parameter names, the files a patch changes and the symbols it
    touches are structure to search by, as stored; every facet asked for must hold."""
    ids = _library(gql, project)
    patch = _record(gql, project, id="orders-patch", code=PATCH, language="diff", kind="patch")
    assert patch["status"] == "written", patch
    assert _facets(gql, project, name="load_orders") == [ids["load_orders"]]
    assert _facets(gql, project, parameters=["region", "limit"]) == [ids["load_orders"]]
    # A parameter name is matched whole: `url` is not `urls`, `timeout` is fetch_json's.
    assert _facets(gql, project, parameters=["region", "timeout"]) == []
    assert _facets(gql, project, parameters=["timeout"]) == [ids["fetch_json"]]
    assert _facets(gql, project, parameters=["urls"]) == []
    assert _facets(gql, project, name="fetch_json", parameters=["url"]) == [ids["fetch_json"]]
    # A file by its path or its trailing components, not by a part of a component.
    assert _facets(gql, project, files=["report/orders.py"]) == [patch["id"]]
    assert _facets(gql, project, files=["orders.py"]) == [patch["id"]]
    assert _facets(gql, project, files=["ders.py"]) == []
    # A symbol: a definition the patch touches, or the one a snippet defines.
    assert _facets(gql, project, symbols=["newest"]) == [patch["id"]]
    assert _facets(gql, project, symbols=["fetch_json"]) == [ids["fetch_json"]]
    assert _facets(gql, project, symbols=["newest"], files=["fetch.py"]) == []
    body = gql(FACETS, {"project": project, "name": "load_orders", "imports": ["pandas"]})
    [hit] = body["data"]["searchSnippets"]
    assert sorted((m["facet"], m["wanted"]) for m in hit["why"]["structure"]) == [
        ("imports", "pandas"), ("name", "load_orders")]  # fmt: skip
    # With a query, the facets filter and meaning ranks.
    assert _facets(gql, project, query="download JSON over HTTP", parameters=["url"]) == [
        ids["fetch_json"]
    ]
    refused = gql(FACETS, {"project": project, "files": ["x"] * 21})
    assert "files" in refused["errors"][0]["message"]
