"""The published GraphQL schema (SDL) and the breaking changes between two versions of it.

``schema.graphql`` at the repository root is the SDL portal builders read; ``metisgraph
schema graphql --write`` regenerates it and refuses a breaking change (a type, field or
argument removed or retyped) unless ``schema.breaking`` lists it as deliberate, one
change a line, as printed.
"""

from __future__ import annotations

from pathlib import Path

from graphql import build_schema as parse_sdl
from graphql.utilities import find_breaking_changes

from metisgraph.api.graphql.schema import build_schema
from metisgraph.api.settings import ApiSettings

__all__ = [
    "BREAKING_FILE",
    "SCHEMA_FILE",
    "SchemaUpdate",
    "accepted_changes",
    "breaking_changes",
    "current_sdl",
    "update_schema_file",
]

SCHEMA_FILE = "schema.graphql"
BREAKING_FILE = "schema.breaking"


def current_sdl() -> str:
    """The SDL of the schema this release serves."""
    return build_schema(ApiSettings()).as_str().rstrip() + "\n"


def breaking_changes(old: str, new: str) -> list[str]:
    """Each breaking change from ``old`` to ``new`` SDL, as one line (type: description)."""
    changes = find_breaking_changes(parse_sdl(old), parse_sdl(new))
    return sorted(f"{c.type.name}: {c.description}" for c in changes)


def accepted_changes(path: Path) -> set[str]:
    """The breaking changes marked deliberate (lines of ``schema.breaking``; # comments)."""
    if not path.is_file():
        return set()
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line and not line.startswith("#")}


class SchemaUpdate:
    """What writing the SDL to a file would change, and whether it may."""

    def __init__(self, target: Path, accepted: set[str], new: str) -> None:
        old = target.read_text(encoding="utf-8") if target.is_file() else None
        self.target = target
        self.new = new
        self.changed = old != new
        self.breaking = breaking_changes(old, new) if old else []
        self.refused = [c for c in self.breaking if c not in accepted]


def update_schema_file(target: Path, breaking_file: Path | None = None) -> SchemaUpdate:
    """Write the current SDL to ``target`` unless a breaking change is not accepted."""
    accepted = accepted_changes(breaking_file or target.with_name(BREAKING_FILE))
    update = SchemaUpdate(target, accepted, current_sdl())
    if update.changed and not update.refused:
        target.write_text(update.new, encoding="utf-8")
    return update
