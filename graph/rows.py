"""Values as they come back from Neo4j, made plain for the layers above."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from neo4j.time import Date, DateTime

__all__ = ["iso_time", "native_time"]


def native_time(value: Any) -> datetime | None:
    """A Neo4j DateTime (or a Python one) as a Python datetime; None stays None."""
    if value is None:
        return None
    if isinstance(value, DateTime):
        native: datetime = value.to_native()
        return native
    if isinstance(value, datetime):
        return value
    if isinstance(value, Date | date):
        raise TypeError(f"a date, not a moment: {value!r}")
    raise TypeError(f"not a time: {type(value).__name__}")


def iso_time(value: Any) -> str:
    """A moment as ISO 8601 text, to the nanosecond Neo4j keeps (for cursors)."""
    if isinstance(value, DateTime | Date):
        text: str = value.iso_format()
        return text
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"not a time: {type(value).__name__}")
