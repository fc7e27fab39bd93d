"""verifySnippet, searchSnippets(requireVerified) and `metisgraph snippet verify` on the real
app, the real sandbox and the real Neo4j."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from metisgraph.graph.settings import Neo4jSettings
from metisgraph.ingest.sandbox import SandboxSettings
from metisgraph.ingest.sandbox.support import probe

CLI = str(Path(sys.executable).parent / "metisgraph")
RECORD = """
mutation($input: SnippetRecordInput!) { recordSnippet(input: $input) { id status } }"""
VERIFY = """
mutation($project: String!, $id: String!, $environment: EnvironmentInput, $command: String) {
  verifySnippet(project: $project, snippetId: $id, environment: $environment,
                command: $command) {
    snippetId status reason command exitCode durationMs timedOut outputTail
    environment { key os arch runtime runtimeVersion }
    uses successes failures successRate
  }
}"""
SEARCH = """
query($project: String!, $query: String!, $verified: Boolean!, $environment: EnvironmentInput) {
  searchSnippets(project: $project, query: $query, k: 5, requireVerified: $verified,
                 environment: $environment) { snippet { id } }
}"""
DETAIL = """
query($project: String!, $id: String!) {
  snippet(project: $project, id: $id) {
    environments { runtime verifiedAt command exitCode durationMs outputTail }
    lastFailure { command exitCode outputTail environmentKey at }
  }
}"""
SLUGIFY = "def slugify(title):\n    return '-'.join(title.lower().split())\n"
TITLE = "def title_case(text):\n    return text.title()\n"


pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module", autouse=True)
def _confinable() -> None:
    support = probe(SandboxSettings())
    if not support.ready:
        pytest.skip(support.reason())


def _data(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def _record(gql: Any, project: str, code: str, tests: list[str]) -> str:
    done = _data(gql(RECORD, {"input": {"project": project, "code": code, "tests": tests,
                                         "language": "python"}}))  # fmt: skip
    snippet_id: str = done["recordSnippet"]["id"]
    return snippet_id


def _verify(gql: Any, project: str, snippet_id: str, **more: Any) -> dict[str, Any]:
    result: dict[str, Any] = _data(gql(VERIFY, {"project": project, "id": snippet_id, **more}))
    return result["verifySnippet"]


def _found(gql: Any, project: str, verified: bool, **more: Any) -> list[str]:
    body = gql(SEARCH, {"project": project, "query": "turn text into a slug or a title",
                        "verified": verified, **more})  # fmt: skip
    return [h["snippet"]["id"] for h in _data(body)["searchSnippets"]]


def test_verify_snippet_and_search_for_verified_code(gql: Any, project: str) -> None:
    slugify = _record(gql, project, SLUGIFY, ["assert slugify('Hello World') == 'hello-world'"])
    title = _record(gql, project, TITLE, ["assert title_case('a b') == 'A C'"])
    passed = _verify(gql, project, slugify, environment={"runtime": "python"})
    assert (passed["status"], passed["exitCode"], passed["timedOut"]) == ("passed", 0, False)
    assert passed["command"] == "python3 -B test_1.py" and passed["durationMs"] >= 0
    assert passed["environment"]["runtime"] == "python"
    assert (passed["uses"], passed["successes"], passed["failures"]) == (1, 1, 0)
    failed = _verify(gql, project, title)
    assert (failed["status"], failed["exitCode"], failed["failures"]) == ("failed", 1, 1)
    assert "AssertionError" in failed["outputTail"]

    assert set(_found(gql, project, verified=False)) == {slugify, title}
    assert _found(gql, project, verified=True) == [slugify]
    version = passed["environment"]["runtimeVersion"]
    same = {"runtime": "python", "runtimeVersion": ".".join(version.split(".")[:2]) + ".99"}
    assert _found(gql, project, verified=True, environment=same) == [slugify]
    older = {"runtime": "python", "runtimeVersion": "2.7.18"}
    assert _found(gql, project, verified=True, environment=older) == []
    other_os = {"os": "windows"}
    assert _found(gql, project, verified=True, environment=other_os) == []

    detail = _data(gql(DETAIL, {"project": project, "id": slugify}))["snippet"]
    (env,) = detail["environments"]
    assert env["command"] == "python3 -B test_1.py" and env["exitCode"] == 0
    assert env["verifiedAt"] and detail["lastFailure"] is None
    last = _data(gql(DETAIL, {"project": project, "id": title}))["snippet"]["lastFailure"]
    assert last["exitCode"] == 1 and "AssertionError" in last["outputTail"]
    assert last["environmentKey"] and last["at"]


def test_verify_snippet_refuses_with_reasons(gql: Any, project: str) -> None:
    risky = _record(gql, project, "import os\n\ndef wipe(path):\n    os.system('rm -rf ' + path)\n",
                    ["wipe('/nonexistent')"])  # fmt: skip
    refused = _verify(gql, project, risky)
    assert refused["status"] == "refused" and "approve" in refused["reason"]
    assert refused["uses"] is None and refused["exitCode"] is None
    missing = gql(VERIFY, {"project": project, "id": "snippet:nope"})
    assert "snippetId: no snippet 'snippet:nope'" in missing["errors"][0]["message"]
    long = gql(VERIFY, {"project": project, "id": risky, "command": "x" * 5000})
    assert "command: at most 4000 characters" in long["errors"][0]["message"]


@pytest.mark.slow(10)  # the command in a process of its own starts the services (the model)
def test_the_cli_verifies_and_exits_with_the_verdict(
    gql: Any, project: str, neo4j_settings: Neo4jSettings, tmp_path: Path, cli_in_process: Any
) -> None:
    slugify = _record(gql, project, SLUGIFY, ["assert slugify('A b') == 'a-b'\nprint('slug ok')"])
    assert neo4j_settings.uri and neo4j_settings.password
    env = {**os.environ, "NEO4J_URI": neo4j_settings.uri,
           "NEO4J_PASSWORD": neo4j_settings.password.get_secret_value()}  # fmt: skip
    stated = tmp_path / "env.json"
    stated.write_text(json.dumps({"runtime": "python", "packages": {"attrs": "23.2.0"}}))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CLI, "snippet", "verify", *args], capture_output=True, text=True,
                              env=env, timeout=600)  # fmt: skip

    passed = cli(slugify, "--project", project, "--env", str(stated), "--json")
    assert passed.returncode == 0, passed.stderr
    verdict = json.loads(passed.stdout.strip().splitlines()[-1])
    assert verdict["status"] == "passed" and verdict["output_tail"].strip() == "slug ok"
    assert verdict["environment"]["packages"] == {"attrs": "23.2.0"}
    # the refusals in this process, with the session's model (the entry point is proven)
    refused = cli_in_process("snippet", "verify", slugify, "--project", project, "--env",
                             '{"runtime": "python", "runtime_version": "2.7"}')  # fmt: skip
    assert refused.returncode == 3 and "environment.runtimeVersion" in refused.stdout
    bad = cli_in_process("snippet", "verify", slugify, "--project", project, "--env",
                         '{"runtime": 3}')  # fmt: skip
    assert bad.returncode == 2 and "runtime" in bad.stderr
