"""Every transaction has a time limit from the settings: a query gone wrong is ended by Neo4j."""

from __future__ import annotations

from typing import Any

import pytest
from neo4j.exceptions import ClientError

from metisgraph.graph.store import GraphStore

pytestmark = pytest.mark.anyio

# A read that would count for minutes.
_ENDLESS = "UNWIND range(1, 2000000000) AS n WITH n WHERE n < 0 RETURN count(n) AS none"


@pytest.mark.parametrize("read", [True, False])
async def test_a_transaction_over_its_timeout_is_ended(store: Any, read: bool) -> None:
    hurried = GraphStore(store.driver, store.database, timeout=0.5)
    with pytest.raises(ClientError) as raised:
        await hurried.run_text(_ENDLESS, read=read)
    assert "TimedOut" in (raised.value.code or ""), raised.value.code


async def test_write_many_has_the_timeout_too(store: Any) -> None:
    hurried = GraphStore(store.driver, store.database, timeout=0.5)

    async def endless(tx: Any) -> None:
        await tx._tx.run(_ENDLESS)  # no named query runs this long: the raw transaction

    with pytest.raises(ClientError) as raised:
        await hurried.write_many([], endless)
    assert "TimedOut" in (raised.value.code or "")


def test_the_timeouts_come_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from metisgraph.graph.settings import Neo4jSettings

    monkeypatch.setenv("NEO4J_TRANSACTION_TIMEOUT", "7.5")
    assert Neo4jSettings().transaction_timeout == 7.5
