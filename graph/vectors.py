"""Embeddings as query parameters."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Vector"]


class Vector(list[float]):
    """An embedding sent as a parameter: a plain list of floats to Neo4j, one short line in a repr.

    The driver formats every RUN's query and parameters for its debug log before it asks
    whether debug logging is on. A write batch carries some 700 vectors of 384 floats: their
    repr cost ~100 ms of CPU per batch on the client, more than Neo4j took to store them.
    """

    __slots__ = ()

    def __init__(self, values: Iterable[float] = ()) -> None:
        super().__init__(values)

    def __repr__(self) -> str:
        return f"Vector(<{len(self)} floats>)"
