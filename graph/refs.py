"""What a node is called outside the graph: its kind, its project and its key.

Inside Neo4j a node is found by its label and ``(project, key property)``: ``(:Error
{project, key})``, ``(:Episode {project, id})``, ``(:Tool {project, name})``. Outside,
portals and exports name it by one **global id**: the base64url of
``1|Kind|project|key`` — versioned, with the project and kind inside, the same after a
restart. Cursors are opaque too: the base64url of the sort values of the last row seen.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "KINDS",
    "Cursor",
    "InvalidCursor",
    "InvalidId",
    "Kind",
    "NodeRef",
    "decode_cursor",
    "decode_id",
    "encode_cursor",
    "encode_id",
    "kind_of",
]

_ID_VERSION = "1"
_CURSOR_VERSION = "c1"
_SEPARATOR = "|"
_LABEL = re.compile(r"^[A-Z][A-Za-z]{1,31}$")
_PROPERTY = re.compile(r"^[a-z][a-z_]{0,31}$")


@dataclass(frozen=True)
class Kind:
    """A node label and the property that, with ``project``, identifies its nodes."""

    label: str
    key: str

    def __post_init__(self) -> None:
        # Labels and key properties are written into query text and exports: keep them plain.
        if not _LABEL.match(self.label) or not _PROPERTY.match(self.key):
            raise ValueError(f"not a plain label and key property: {self.label!r} {self.key!r}")


KINDS: dict[str, Kind] = {
    k.label: k
    for k in (
        Kind("Project", "name"),
        Kind("Task", "id"),
        Kind("Episode", "id"),
        Kind("Snippet", "id"),
        Kind("Error", "key"),
        Kind("Environment", "key"),
        Kind("Tool", "name"),
        Kind("Package", "name"),
        Kind("Tag", "name"),
        Kind("Symbol", "name"),
        Kind("File", "path"),
        Kind("Pattern", "id"),
    )
}


class InvalidId(ValueError):
    """Not a global id this service gave out."""


class InvalidCursor(ValueError):
    """Not a cursor of this list."""


def kind_of(labels: list[str] | tuple[str, ...]) -> Kind | None:
    """The kind among a node's labels, if it is one of ours."""
    return next((KINDS[label] for label in labels if label in KINDS), None)


@dataclass(frozen=True)
class NodeRef:
    """One node: its kind (label), project and key."""

    kind: str
    project: str
    key: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidId(f"unknown kind {self.kind!r}")
        if _SEPARATOR in self.project or not self.project:
            raise InvalidId(f"not a project name: {self.project!r}")

    @property
    def id(self) -> str:
        return encode_id(self)

    def row(self) -> dict[str, str]:
        """The shape the Cypher lookups take: {kind, project, key}."""
        return {"kind": self.kind, "project": self.project, "key": self.key}


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def _unb64(token: str) -> str:
    if not token or len(token) > 4096 or not re.fullmatch(r"[A-Za-z0-9_-]+", token):
        raise ValueError("not base64url")
    padded = token + "=" * (-len(token) % 4)
    try:
        return base64.urlsafe_b64decode(padded).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise ValueError("not base64url") from exc


@functools.lru_cache(maxsize=65536)  # a lineage's answer names the same nodes many times
def encode_id(ref: NodeRef) -> str:
    return _b64(_SEPARATOR.join((_ID_VERSION, ref.kind, ref.project, ref.key)))


def decode_id(token: str) -> NodeRef:
    """The node a global id names; InvalidId when it is not one of ours."""
    try:
        version, kind, project, key = _unb64(token.strip()).split(_SEPARATOR, 3)
    except ValueError:
        raise InvalidId(f"not a global id: {token[:80]!r}") from None
    if version != _ID_VERSION:
        raise InvalidId(f"global id of an unknown version {version!r}")
    return NodeRef(kind, project, key)


@dataclass(frozen=True)
class Cursor:
    """The sort values of the last row a page showed (keyset pagination)."""

    order: str
    values: tuple[Any, ...]


def encode_cursor(order: str, values: tuple[Any, ...]) -> str:
    return _b64(json.dumps([_CURSOR_VERSION, order, list(values)], separators=(",", ":")))


def decode_cursor(token: str, order: str, arity: int) -> Cursor:
    """A cursor given out for this list and order; InvalidCursor otherwise."""
    try:
        version, made_for, values = json.loads(_unb64(token.strip()))
    except (ValueError, TypeError):
        raise InvalidCursor("after: not a cursor of this list") from None
    if version != _CURSOR_VERSION or not isinstance(values, list) or len(values) != arity:
        raise InvalidCursor("after: not a cursor of this list")
    if made_for != order:
        raise InvalidCursor(f"after: a cursor of the {made_for} order, not of {order}")
    return Cursor(order, tuple(values))
