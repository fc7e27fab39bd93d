"""The GraphQL transport fuzzed (issue 30): bodies, variables and headers that no client
of ours would send reach the real app (real Neo4j, real model), and none is answered 500 or
with an internal error — each is served, or refused with a message the caller can act on.

``METISGRAPH_FUZZ_TRANSPORT`` sets the examples a kind (default 150; three kinds).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("METISGRAPH_FUZZ_TRANSPORT", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,  # the same cases each run: a failure names a case that stays failing
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROJECT = "fuzz-transport"
RECALL = """query($p: String!, $q: String!, $k: Int) {
  recall(project: $p, query: $q, k: $k) { abstained } }"""
DOCUMENTS = [
    "{ projects { name } }",
    RECALL,
    "query($p: String!, $v: JSON) { errors(projects: [$p]) { totalCount } }",
    "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { status } }",
    "query($id: ID!) { node(id: $id) { key } }",
]
# Any code point, lone surrogates included (what a JSON \\u escape can carry).
TEXT = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
SEEN: dict[str, int] = {}


def _fine(response: Any, kind: str) -> None:
    """Served, or refused clearly: never a 500, never an internal error."""
    SEEN[kind] = SEEN.get(kind, 0) + 1
    assert response.status_code != 500, response.text[:500]
    assert response.status_code in (200, 400, 401, 404, 405, 406, 413, 415, 422, 429), (
        response.status_code,
        response.text[:500],
    )
    assert "Internal error" not in response.text, response.text[:500]


def _valid_body(document: str, variables: Any) -> bytes:
    # ensure_ascii: a lone surrogate travels as its \\u escape, as a JSON client sends it.
    return json.dumps({"query": document, "variables": variables}).encode()


@FUZZ
@given(
    path=st.sampled_from(["/graphql", "/mcp"]),
    document=st.sampled_from(DOCUMENTS),
    cut=st.integers(min_value=0, max_value=400),
    noise=st.binary(max_size=24),
    whole=st.booleans(),
)
@pytest.mark.slow
def test_fuzzed_bodies(
    client: Any, path: str, document: str, cut: int, noise: bytes, whole: bool
) -> None:
    """A valid body cut and spliced with arbitrary bytes (or the bytes alone)."""
    body = _valid_body(document, {"p": PROJECT, "q": "disk full", "i": {"project": PROJECT}})
    crafted = noise if whole else body[:cut] + noise + body[cut:]
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    _fine(client.post(path, content=crafted, headers=headers), "bodies")


@pytest.mark.slow
@FUZZ
@given(document=st.sampled_from(DOCUMENTS), variables=st.dictionaries(
    st.sampled_from(["p", "q", "k", "v", "i", "id", "x"]), JSON_VALUES, max_size=5))  # fmt: skip
def test_fuzzed_variables(client: Any, document: str, variables: dict[str, Any]) -> None:
    """Variables of any shape and text, lone surrogates and deep nesting included."""
    if "p" in variables:
        variables["p"] = PROJECT  # another tenant's name would only be refused
    body = _valid_body(document, variables)
    _fine(client.post("/graphql", content=body, headers={"Content-Type": "application/json"}),
          "variables")  # fmt: skip


HEADER_TEXT = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=60
)


@pytest.mark.slow(12)
@FUZZ
@given(
    name=st.sampled_from(
        ["authorization", "content-type", "x-request-id", "accept", "origin", "mcp-session-id"]
    ),
    value=HEADER_TEXT,
    method=st.sampled_from(["GET", "POST"]),
)
def test_fuzzed_headers(client: Any, name: str, value: str, method: str) -> None:
    body = _valid_body("{ projects { name } }", {})
    # As bytes: a header is latin-1 on the wire, and httpx would refuse to encode it as ascii.
    headers = {"Content-Type": b"application/json", name: value.encode("latin-1")}
    if method == "GET":
        answer = client.get("/graphql", params={"query": "{ projects { name } }"}, headers=headers)
    else:
        answer = client.post("/graphql", content=body, headers=headers)
    _fine(answer, "headers")


@pytest.mark.slow  # counts the slow kinds too: with them
def test_the_fuzz_ran_its_cases() -> None:
    """Runs last in this module: each kind's examples reached ``_fine`` (hypothesis may stop
    a kind early when it has tried every case it can make); the counts go to the report."""
    print(f"transport fuzz cases: {SEEN}")
    for kind in ("bodies", "variables", "headers"):
        assert SEEN.get(kind, 0) >= min(EXAMPLES, 50), SEEN
