"""Property values as exports write them: JSON-able, with the type of what JSON cannot say."""

from __future__ import annotations

from typing import Any

from neo4j.time import Date, DateTime, Duration, Time

__all__ = ["TEMPORAL_TYPES", "plain_value", "restore_value"]

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
