"""The one error the embedded Neo4j raises."""

from __future__ import annotations

__all__ = ["EmbeddedNeo4jError"]


class EmbeddedNeo4jError(RuntimeError):
    """The embedded Neo4j could not be prepared, started or stopped."""
