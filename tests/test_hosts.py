"""DNS rebinding: a request under a name the service does not answer to is refused.

A page on any site can have a browser call the loopback API under the page owner's name;
without tokens that reached read, write and forget. The Host header says which name.
"""

from __future__ import annotations

from typing import Any

import pytest

from metisgraph.api.http.hosts import host_allowed, host_name
from metisgraph.api.settings import ApiSettings

FORGET = "mutation($p: String!) { forgetProject(project: $p, confirm: $p) { deleted } }"
RECORD = "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id status } }"


@pytest.mark.parametrize(
    ("header", "name"),
    [("127.0.0.1:8000", "127.0.0.1"), ("LocalHost", "localhost"), ("[::1]:8000", "::1"),
     ("evil.example:80", "evil.example"), ("", "")],
)  # fmt: skip
def test_the_name_in_a_host_header(header: str, name: str) -> None:
    assert host_name(header) == name


def test_the_default_names_are_loopback_and_the_listening_address() -> None:
    assert ApiSettings(host="127.0.0.1").host_names == [
        "127.0.0.1",
        "localhost",
        "::1",
        "127.0.0.1",
    ]
    anywhere = "0.0.0.0"  # noqa: S104  (the address listened on, not a name)
    served = ApiSettings(host=anywhere, allowed_hosts="memory.internal,*.corp.example")
    assert host_allowed("memory.internal", served.host_names)
    assert host_allowed("api.corp.example", served.host_names)
    assert not host_allowed(anywhere, served.host_names)
    assert not host_allowed("corp.example.evil", served.host_names)


def test_a_foreign_host_reaches_nothing(client: Any, gql: Any, project: str) -> None:
    episode = {"project": project, "id": "e1", "summary": "Kept through the attack"}
    assert gql(RECORD, {"i": episode})["data"]["recordEpisode"]["status"] == "written"
    for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.attacker.example"):
        response = client.post(
            "/graphql",
            json={"query": FORGET, "variables": {"p": project}},
            headers={"Host": host},
        )
        assert response.status_code == 400, response.text
        assert "is not a name this service answers to" in response.text
    query = 'query($p: String!) { recall(project: $p, query: "kept") { hits { score } } }'
    assert gql(query, {"p": project})["data"]["recall"]["hits"]  # still there
    assert client.get("/healthz", headers={"Host": "10.1.2.3:8000"}).status_code == 200


def test_loopback_names_are_served(client: Any) -> None:
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000"):
        response = client.post("/graphql", json={"query": "{ __typename }"}, headers={"Host": host})
        assert response.status_code == 200, (host, response.text)
