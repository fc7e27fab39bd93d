"""Typed access to decoded JSON that fails with a ShapeError naming the field."""

from __future__ import annotations

import json
from typing import Any

from metisgraph.ingest.adapters.base import ShapeError

__all__ = ["as_int", "as_object", "list_at", "object_at", "text_at", "text_of"]


def as_object(value: object, field: str) -> dict[str, Any]:
    """``value`` when it is a JSON object."""
    if not isinstance(value, dict):
        raise ShapeError(field, f"expected an object, got {_kind(value)}")
    return value


def object_at(item: dict[str, Any], key: str, field: str | None = None) -> dict[str, Any]:
    """The object under ``key``; an absent or null key gives an empty object."""
    value = item.get(key)
    if value is None:
        return {}
    if isinstance(value, str):
        # Some writers store nested config as a JSON string.
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ShapeError(field or key, "expected an object, got a string") from None
    return as_object(value, field or key)


def list_at(item: dict[str, Any], key: str, field: str | None = None) -> list[Any]:
    """The list under ``key``; absent or null gives an empty list."""
    value = item.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ShapeError(field or key, f"expected a list, got {_kind(value)}")
    return value


def text_at(item: dict[str, Any], key: str, field: str | None = None) -> str | None:
    """The text under ``key`` (None when absent); numbers are not text."""
    value = item.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ShapeError(field or key, f"expected a string, got {_kind(value)}")


def text_of(content: object, field: str) -> str:
    """Message content as text: a string, or a list of parts whose text parts are joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [part.get("text") for part in content if isinstance(part, dict)]
        return "\n".join(t for t in texts if isinstance(t, str))
    raise ShapeError(field, f"expected text or a list of parts, got {_kind(content)}")


def as_int(value: object) -> int | None:
    """An integer from an int or a numeric string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), f"a {type(value).__name__}")
