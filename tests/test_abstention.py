"""Abstention that fits the store (graph/abstention.py) through GraphQL, against the real
Neo4j and the real model: each project's threshold measured on its store, kept on the
project, settable per request; `maintain` measures it again."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from neo4j import GraphDatabase

from metisgraph.graph.abstention import ABSTENTION, AbstentionSettings, fit_threshold, judge
from metisgraph.graph.recall_request import RecallRequest
from metisgraph.graph.settings import Neo4jSettings

RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written refused } }"""
RECALL = """
query($p: String!, $q: String!, $below: Float) {
  recall(project: $p, query: $q, k: 3, abstainBelow: $below) {
    abstained reason hits { episode { id } } abstention { similarity threshold source }
  }
}"""
MAINTAIN = "mutation($p: String!) { maintain(project: $p) { project abstainBelow } }"

# A build-and-CI store: thirty memories about one subject, as a team's memory is.
BUILD = [
    "The Gradle build ran out of heap while compiling the test sources; raising "
    "org.gradle.jvmargs to -Xmx4g fixed it",
    "Maven surefire forked JVM crashed on CI with exit code 137 because the "
    "container hit its memory limit",
    "The nightly build failed after the artifact repository certificate expired; the "
    "TLS handshake was refused",
    "A flaky integration test timed out waiting for the embedded Kafka broker to "
    "start on the CI runner",
    "The Docker build cache was invalidated on every commit because the git revision "
    "was copied into the image early",
    "Compilation failed on the release branch: the annotation processor was missing "
    "from the compiler classpath",
    "The CI pipeline hung at the publish step because the deploy key needed a passphrase",
    "Unit tests passed locally but failed on CI because the runner's default time zone is UTC",
    "The linter stage failed after the formatter was upgraded and reflowed every import block",
    "Dependency resolution failed: two modules pulled incompatible versions of the "
    "protobuf runtime",
    "The coverage report step crashed because the jacoco agent did not match the JDK "
    "version on the runner",
    "Builds became slow after the remote build cache was turned off by a "
    "misconfigured environment variable",
    "The release job published a snapshot version because the version bump commit "
    "was not pushed before tagging",
    "A test relied on the order of a hash map and failed when the JDK changed its iteration order",
    "The container image grew to four gigabytes after the build tools were left in the final stage",
    "The CI runner ran out of disk space because old build artifacts were never cleaned up",
    "The pipeline failed to check out submodules because the CI token lacked read "
    "access to the other repository",
    "Parallel test execution caused port conflicts between test suites starting the "
    "same mock server",
    "The build failed on ARM runners because a native library was only published for x86_64",
    "A migration test failed on CI because the database container was not ready when "
    "the tests started",
    "The signing step failed after the GPG key used for release artifacts expired",
    "Incremental compilation produced stale classes after a file was renamed; a "
    "clean build fixed it",
    "The end-to-end tests failed because the headless browser was updated and the driver was not",
    "The build broke when a transitive dependency was removed from the public repository",
    "Static analysis flagged a null dereference that only showed up with the "
    "stricter compiler flags on CI",
    "The CI cache restored node_modules from another branch and the lockfile no longer matched",
    "The test report upload failed because the artifact name contained a slash",
    "Builds on the merge queue failed because the base branch moved while the checks were running",
    "The code generation step produced different output on Windows because of line endings",
    "The benchmark job failed after the performance runner was moved to smaller machines",
]


def _record(gql: Any, project: str, texts: list[str]) -> None:
    inputs = [
        {"project": project, "id": f"b{n}", "summary": text, "outcome": "success", "kind": "fix"}
        for n, text in enumerate(texts)
    ]
    body = gql(RECORD_MANY, {"inputs": inputs})
    assert "errors" not in body, body
    assert body["data"]["recordEpisodes"]["refused"] == 0, body


def _recall(gql: Any, project: str, query: str, below: float | None = None) -> dict[str, Any]:
    body = gql(RECALL, {"p": project, "q": query, "below": below})
    assert "errors" not in body, body
    result: dict[str, Any] = body["data"]["recall"]
    return result


RECALL_ERROR = """
query($p: String!, $q: String!, $e: String, $below: Float) {
  recall(project: $p, query: $q, k: 3, context: {error: $e}, abstainBelow: $below) {
    abstained reason hits { episode { id } } abstention { similarity threshold source }
  }
}"""
# A trace from a codebase the build store never saw: a service's pool, not a build.
FOREIGN = (
    "The service fails at start",
    "java.lang.IllegalStateException: pool closed\n"
    "\tat com.acme.billing.InvoiceService.close(InvoiceService.java:42)\n"
    "\tat com.acme.billing.Main.main(Main.java:10)",
)


def _kept(neo4j_settings: Neo4jSettings, project: str) -> dict[str, Any]:
    password = neo4j_settings.password.get_secret_value() if neo4j_settings.password else ""
    with GraphDatabase.driver(neo4j_settings.uri or "", auth=("neo4j", password)) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (p:Project {name: $p}) RETURN p.abstain_below AS below, "
            "p.abstain_code_below AS code, p.abstain_episodes AS episodes, "
            "p.abstain_probes AS probes",
            p=project,
        )
    return dict(records[0])


def test_the_threshold_is_fitted_from_the_probes_and_the_neighbours() -> None:
    settings = AbstentionSettings()
    # Too small to measure: the fixed gate, for every question.
    assert fit_threshold([0.3] * 10, episodes=5) == (0.2, 0.2, "default")
    # The probes' median plus the margin; the neighbours' median for unknown code.
    probes = [0.1, 0.2, 0.3, 0.4, 0.5]
    threshold, code, source = fit_threshold(probes, 100, settings, neighbours=[0.5, 0.7, 0.9])
    assert (threshold, code, source) == (round(0.3 + settings.margin, 4), 0.7, "calibrated")
    # Never under the fixed gate, never over the ceiling; the code gate never under the other.
    assert fit_threshold([0.0] * 9, 100)[0] == settings.floor
    assert fit_threshold([0.99] * 9, 100)[0] == settings.ceiling
    assert fit_threshold([0.3] * 9, 100, neighbours=[0.1])[1] == fit_threshold([0.3] * 9, 100)[0]


class _Hit:
    def __init__(self, project: str, similarity: float) -> None:
        self.episode = {"project": project}
        self.channels = {"vector": similarity}
        self.dropped: list[str] = []


def test_a_question_just_over_the_gate_needs_a_memory_that_stands_out() -> None:
    """Off-topic text of the store's kind (a bug report asked of a trace store) is about as
    close to many memories; an answerable question has one clearly closer than the rest.
    Just over a measured gate, the best must stand out from the fifth best."""
    gates = {"p": (0.30, 0.30, "calibrated")}
    asked = RecallRequest(projects=("p",), text="q", gates=gates)
    near, margin = 0.30 + ABSTENTION.standout_within / 2, ABSTENTION.standout
    crowd = [_Hit("p", near - 0.01 * i) for i in range(6)]  # the best hardly above the rest
    gate = judge(crowd, asked)
    assert gate.abstained and "does not stand out" in (gate.reason or "")
    apart = [_Hit("p", near), *(_Hit("p", near - margin - 0.01 - 0.01 * i) for i in range(5))]
    assert not judge(apart, asked).abstained
    # Well over the gate, a crowd is answered; so is one under a request's own threshold,
    # or the default gate of a project too small to measure.
    clear = [_Hit("p", 0.30 + ABSTENTION.standout_within + 0.01) for _ in range(6)]
    assert not judge(clear, asked).abstained
    own = RecallRequest(projects=("p",), text="q", gates=gates)
    own = dataclasses.replace(own, settings=dataclasses.replace(own.settings, abstain_below=0.30))
    assert not judge(crowd, own).abstained
    small = RecallRequest(projects=("p",), text="q", gates={"p": (0.30, 0.30, "default")})
    assert not judge(crowd, small).abstained
    assert not judge(crowd[:2], asked).abstained  # two hits say nothing about a crowd


@pytest.mark.slow
def test_a_store_measures_its_own_gate_and_keeps_it(
    gql: Any, project: str, neo4j_settings: Neo4jSettings
) -> None:
    _record(gql, project, BUILD)
    asked = _recall(gql, project, "the build runs out of memory in the container")
    assert not asked["abstained"] and asked["hits"]
    gate = asked["abstention"]
    assert gate["source"] == "calibrated" and gate["similarity"] >= gate["threshold"]
    kept = _kept(neo4j_settings, project)
    # Kept on the project: what it was measured on, and the gate the question was held to.
    assert kept["episodes"] == len(BUILD) and len(kept["probes"]) >= 50
    assert kept["below"] == gate["threshold"] == fit_threshold(kept["probes"], len(BUILD))[0]
    assert kept["code"] >= kept["below"]
    # A project too small to measure keeps the fixed gate.
    _record(gql, project + "-small", BUILD[:3])
    small = _recall(gql, project + "-small", "the build runs out of memory in the container")
    assert small["abstention"]["source"] == "default" and small["abstention"]["threshold"] == 0.2


@pytest.mark.slow
def test_code_the_store_never_saw_needs_a_closer_memory(gql: Any, project: str) -> None:
    _record(gql, project, BUILD)
    query, error = FOREIGN
    variables = {"p": project, "q": query, "e": error}
    # The fixed gate of before lets it through: something in a build store is that close.
    fixed = gql(RECALL_ERROR, {**variables, "below": 0.2})["data"]["recall"]
    assert not fixed["abstained"] and fixed["hits"]
    assert fixed["abstention"] == {
        "similarity": fixed["abstention"]["similarity"],
        "threshold": 0.2,
        "source": "request",
    }
    # The store's gate: none of its memories touches that code, and none is as close as its
    # memories are to each other.
    body = gql(RECALL_ERROR, variables)
    assert "errors" not in body, body
    store = body["data"]["recall"]
    assert store["abstained"] and store["hits"] == []
    gate = store["abstention"]
    assert gate["source"] == "calibrated for code the project does not know"
    assert 0.2 <= gate["similarity"] < gate["threshold"]
    assert "too far" in store["reason"]


@pytest.mark.slow
def test_a_request_sets_its_own_threshold(gql: Any, project: str) -> None:
    _record(gql, project, BUILD)
    question = "How do I fix a dripping kitchen faucet?"
    assert _recall(gql, project, question)["abstained"]
    never = _recall(gql, project, question, below=0.0)
    assert not never["abstained"] and never["hits"]
    assert never["abstention"]["source"] == "request"
    always = _recall(gql, project, "the build runs out of memory in the container", below=0.99)
    assert always["abstained"] and always["abstention"]["threshold"] == 0.99
    bad = gql(RECALL, {"p": project, "q": question, "below": 1.5})
    assert "abstainBelow must be between 0 and 1" in bad["errors"][0]["message"]


@pytest.mark.slow
def test_maintain_measures_the_gate_again(
    gql: Any, project: str, neo4j_settings: Neo4jSettings
) -> None:
    _record(gql, project, BUILD[:20])
    _recall(gql, project, "the build runs out of memory in the container")
    assert _kept(neo4j_settings, project)["episodes"] == 20
    more = [f"{text} (seen again on the release branch)" for text in BUILD[20:]]
    body = gql(RECORD_MANY, {"inputs": [
        {"project": project, "id": f"m{n}", "summary": t, "outcome": "success", "kind": "fix"}
        for n, t in enumerate(more)
    ]})  # fmt: skip
    assert "errors" not in body, body
    done = gql(MAINTAIN, {"p": project})
    assert "errors" not in done, done
    kept = _kept(neo4j_settings, project)
    assert kept["episodes"] == 20 + len(more)
    assert done["data"]["maintain"]["abstainBelow"] == kept["below"]


@pytest.mark.parametrize("below", [-0.1, 1.01])
def test_a_threshold_outside_0_and_1_is_refused(gql: Any, project: str, below: float) -> None:
    body = gql(RECALL, {"p": project, "q": "anything", "below": below})
    assert "abstainBelow" in body["errors"][0]["message"]


PLAN = """
query($p: String!, $goal: String!, $below: Float) {
  planContext(project: $p, task: {goal: $goal}, abstainBelow: $below) { abstained reason }
}"""


@pytest.mark.slow
def test_plan_context_takes_the_request_threshold_too(gql: Any, project: str) -> None:
    _record(gql, project, BUILD)
    goal = "Make the build stop running out of memory in the container"
    planned = gql(PLAN, {"p": project, "goal": goal})
    assert "errors" not in planned, planned
    assert not planned["data"]["planContext"]["abstained"]
    strict = gql(PLAN, {"p": project, "goal": goal, "below": 0.99})["data"]["planContext"]
    assert strict["abstained"] and "0.99" in strict["reason"]
