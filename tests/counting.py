"""A GraphStore that counts the statements it sends (how many round trips a read makes)."""

from __future__ import annotations

from typing import Any

from metisgraph.graph import GraphStore


class CountingStore(GraphStore):
    """The store, counting the statements it sends (``sent``) and keeping their texts."""

    def __init__(self, store: GraphStore) -> None:
        super().__init__(store.driver, store.database)
        self.sent = 0
        self.texts: list[str] = []

    def reset(self) -> None:
        self.sent = 0
        self.texts.clear()

    async def run_text(
        self, text: str, params: dict[str, Any] | None = None, *, read: bool = False
    ) -> list[dict[str, Any]]:
        self.sent += 1
        self.texts.append(text)
        return await super().run_text(text, params, read=read)
