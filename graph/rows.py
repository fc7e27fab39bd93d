"""Values as they come back from Neo4j, made plain for the layers above (and back)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from neo4j.time import Date, DateTime, Duration, Time

__all__ = [
    "TEMPORAL_TYPES",
    "iso_time",
    "moment_of_micros",
    "native_time",
    "native_value",
    "plain_value",
    "restore_value",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def native_time(value: Any) -> datetime | None:
    """A Neo4j DateTime, its text (Cypher ``toString``) or a Python datetime as a Python
    datetime; None stays None. Text is the cheap way for a query to return many moments:
    the driver builds each DateTime in Python, tens of microseconds apiece."""
    if value is None:
        return None
    if isinstance(value, str):
        return _parse_time(value)
    if isinstance(value, DateTime):
        native: datetime = value.to_native()
        return native
    if isinstance(value, datetime):
        return value
    if isinstance(value, Date | date):
        raise TypeError(f"a date, not a moment: {value!r}")
    raise TypeError(f"not a time: {type(value).__name__}")


def native_value(value: Any) -> Any:
    """A value from the driver in Python's own types (a Neo4j DateTime, Date, Time or
    Duration as its ``datetime`` counterpart); any other value as it is."""
    return value.to_native() if hasattr(value, "to_native") else value


def moment_of_micros(value: int | None) -> datetime | None:
    """An instant a query returned as microseconds since the epoch (``t.epochSeconds *
    1000000 + t.microsecond``), as an aware UTC datetime; None stays None.

    The driver turns each DateTime it receives into Python objects in pure Python (~0.1 ms
    apiece): a query returning many of them to a hot path returns the number instead.
    """
    return None if value is None else _EPOCH + timedelta(microseconds=value)


def _parse_time(text: str) -> datetime:
    # ISO 8601 as Neo4j prints it: fractions to the nanosecond (kept to the microsecond, as
    # a Python datetime can), "Z" or an offset, and a zone name in brackets after it when
    # the value has one (the offset before it already fixes the moment). Text rather than
    # epoch numbers where a moment goes back into a cursor: it keeps Neo4j's nanoseconds.
    return datetime.fromisoformat(text.split("[", 1)[0])


def iso_time(value: Any) -> str:
    """A moment as ISO 8601 text, to the nanosecond Neo4j keeps (for cursors). Text from
    Cypher's ``toString`` is that already, and is kept as it is."""
    if isinstance(value, str):
        _parse_time(value)  # refuse what is not a moment
        return value
    if isinstance(value, DateTime | Date):
        text: str = value.iso_format()
        return text
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"not a time: {type(value).__name__}")


TEMPORAL_TYPES = ("datetime", "localdatetime", "date", "time", "localtime", "duration")


def plain_value(value: Any) -> tuple[Any, str | None]:
    """(a JSON-able value, the name of its temporal type or None)."""
    if isinstance(value, DateTime):
        return value.iso_format(), "datetime" if value.tzinfo is not None else "localdatetime"
    if isinstance(value, Date):
        return value.iso_format(), "date"
    if isinstance(value, Time):
        return value.iso_format(), "time" if value.tzinfo is not None else "localtime"
    if isinstance(value, Duration):
        return value.iso_format(), "duration"
    if isinstance(value, list):
        return [plain_value(v)[0] for v in value], None
    if isinstance(value, dict):
        return {str(k): plain_value(v)[0] for k, v in value.items()}, None
    return value, None


def restore_value(value: Any, temporal: str | None) -> Any:
    """A value read back from an export, as the driver should send it to Neo4j."""
    if temporal is None:
        return value
    if not isinstance(value, str):
        raise ValueError(f"a {temporal} must be written as text, got {type(value).__name__}")
    if temporal in ("datetime", "localdatetime"):
        return DateTime.from_iso_format(value)
    if temporal == "date":
        return Date.from_iso_format(value)
    if temporal in ("time", "localtime"):
        return Time.from_iso_format(value)
    if temporal == "duration":
        return Duration.from_iso_format(value)
    raise ValueError(f"unknown temporal type {temporal!r}")
