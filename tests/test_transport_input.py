"""Crafted bodies at /graphql get a clear 400, never a 500 or an internal error (issue 30,
item 2): bytes that are not UTF-8, variables nested without end, a lone surrogate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from metisgraph.ingest.question import Question, QuestionError
from metisgraph.ingest.question.asked import check

RECALL = "query($p: String!, $q: String!) { recall(project: $p, query: $q) { abstained } }"


def _post(client: Any, body: bytes) -> Any:
    return client.post("/graphql", content=body, headers={"Content-Type": "application/json"})


def test_a_body_that_is_not_utf8_is_a_400(client: Any) -> None:
    body = json.dumps({"query": "{ projects { name } }"}).encode()[:-1] + b"}\xff\xfe"
    answer = _post(client, body)
    assert answer.status_code == 400, answer.text
    assert "request body is not UTF-8 text (byte" in answer.text
    assert answer.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


def test_variables_nested_100000_deep_are_a_400(client: Any, project: str) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    body = '{"query": "query($v: JSON) { projects { name } }", "variables": {"v": ' + deep + "}}"
    answer = _post(client, body.encode())
    assert answer.status_code == 400, answer.text
    assert "request body is nested too deep" in answer.text
    # Deep, but within what the decoder takes: refused by the depth rule, naming the field.
    nested = "[" * 500 + "]" * 500
    body = '{"query": "{ projects { name } }", "variables": {"v": ' + nested + "}}"
    answer = _post(client, body.encode())
    assert answer.status_code == 400, answer.text
    assert "request variables: nested more than 64 levels deep" in answer.text


def test_a_lone_surrogate_in_a_question_is_a_400_naming_it(client: Any, project: str) -> None:
    body = json.dumps({"query": RECALL, "variables": {"p": project, "q": "\udfff abc"}})
    answer = _post(client, body.encode())
    assert answer.status_code == 400, answer.text
    assert "request variables.q: text holds a lone surrogate (U+DFFF at character 0)" in (
        answer.text
    )


@pytest.mark.parametrize(
    ("question", "field"),
    [
        (Question(project="p", query="\udfff abc"), "query"),
        (Question(project="p", query="abc", error="boom \ud800"), "context.error"),
        (Question(project="p", query="abc", tags=("k:\udfff",)), "context.tags.0"),
    ],
)
def test_a_question_refuses_a_lone_surrogate_as_records_do(question: Question, field: str) -> None:
    """The transport refuses it at /graphql; the question's own check refuses it for every
    other way in (the CLI, a program using the library)."""
    with pytest.raises(QuestionError, match=f"^{field}: text holds a lone surrogate"):
        check(question)


@pytest.mark.parametrize("body", [b"0", b'"query"', b"null", b"true"])
def test_a_body_that_is_no_json_object_is_a_400(client: Any, body: bytes) -> None:
    """Found by tests/test_fuzz_transport.py: a JSON scalar body was a 500 (AttributeError)."""
    answer = _post(client, body)
    assert answer.status_code == 400, answer.text
    assert "request body is not a JSON object" in answer.text
