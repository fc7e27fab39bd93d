"""Hostile documents over HTTP at the default limits are refused with the limit they break;
the documents our own clients send (the explorer page, the SDK) pass those limits.

How fast a refusal comes is measured by bench/graphql_limits.py, not here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from graphql import parse, specified_rules, validate

EXPLORER = Path(__file__).parent.parent / "api" / "http" / "explorer"


def _post(client: Any, document: str) -> dict[str, Any]:
    response = client.post("/graphql", json={"query": document})
    assert response.status_code in (200, 400), response.text
    body: dict[str, Any] = response.json()
    assert body.get("data") is None, body  # refused before anything ran
    return body


def _messages(body: dict[str, Any]) -> str:
    return " ".join(e["message"] for e in body.get("errors") or [])


def _nested(levels: int) -> str:
    return "{ " + "recall { " * levels + "abstained" + " }" * (levels + 1)


def test_a_depth_bomb_is_refused(client: Any) -> None:
    assert "exceeds maximum operation depth of 12" in _messages(_post(client, _nested(13)))
    # Far deeper than the parser goes (where depends on the stack): refused, never a
    # RecursionError or an internal error.
    deepest = _messages(_post(client, _nested(450)))
    assert re.search("nested too deeply|exceeds maximum operation depth of 12", deepest)
    # Depth through fragments counts as depth.
    chain = " ".join(f"fragment F{n} on Query {{ recall {{ ...F{n + 1} }} }}" for n in range(20))
    deep = f"query {{ ...F0 }} {chain} fragment F20 on Query {{ __typename }}"
    assert "exceeds maximum operation depth of 12" in _messages(_post(client, deep))


def test_an_alias_flood_is_refused(client: Any) -> None:
    flood = "{ " + " ".join(f"a{n}: __typename" for n in range(300)) + " }"
    assert "300 aliases found. Allowed: 20" in _messages(_post(client, flood))


def test_fragment_cycles_are_refused(client: Any) -> None:
    cycle = "query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }"
    assert "Cannot spread fragment 'A' within itself via 'B'" in _messages(_post(client, cycle))


@pytest.mark.parametrize("size", [1_001, 1_000_000])
def test_an_oversized_document_is_refused(client: Any, size: int) -> None:
    document = "{ " + "__typename " * size + "}"
    assert "Document contains more than 1000 tokens" in _messages(_post(client, document))


def _explorer_documents() -> dict[str, str]:
    """Every query the explorer's modules send (each ``const Q_…``), ``${STEP}`` filled in."""
    found: dict[str, str] = {}
    for module in sorted(EXPLORER.glob("*.js")):
        if module.name.startswith("cytoscape"):
            continue
        source = module.read_text(encoding="utf-8")
        for name, double, back in re.findall(
            r'(?:export )?const (Q_\w+|STEP) = (?:"(.*?)"|`(.*?)`);', source, re.S
        ):
            found[name if name == "STEP" else f"{module.stem} {name}"] = double or back
    step = found.pop("STEP")
    assert len(found) >= 5, sorted(found)  # the explorer's modules were read
    return {f"explorer {n}": text.replace("${STEP}", step) for n, text in found.items()}


def _sdk_documents() -> dict[str, str]:
    from metisgraph_client import _operations

    names = ("PLAN", "RECALL", "SEARCH", "TASK", "EPISODE", "OUTCOME")
    return {f"sdk {n}": getattr(_operations, n) for n in names}


def test_what_our_clients_send_passes_the_default_limits() -> None:
    from metisgraph.api.graphql.schema import build_schema, limit_rules
    from metisgraph.api.settings import ApiSettings

    settings = ApiSettings()
    schema = build_schema(settings)._schema
    documents = {**_explorer_documents(), **_sdk_documents()}
    assert len(documents) == 15, sorted(documents)  # a client document no longer found
    for name, text in documents.items():
        document = parse(text, max_tokens=settings.max_query_tokens)
        errors = validate(schema, document, [*specified_rules, *limit_rules(settings)])
        assert errors == [], f"{name}: {errors}"
    # The rules used here are the served ones: a document over them fails here too.
    too_deep = parse(_nested(settings.max_query_depth + 1))
    assert validate(schema, too_deep, limit_rules(settings))
