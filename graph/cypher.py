"""Named Cypher queries, loaded from the .cypher files shipped in metisgraph.cypher.

A query file holds blocks that start with a header comment::

    // name: upsert_episodes
    // mode: write
    UNWIND $rows AS row ...

``schema.cypher`` is different: statements separated by ``;`` applied in order.

A query may hold slots, ``{{name}}``, for what Cypher takes no parameter for: a label or
an index name (``Query.naming``, checked against a strict pattern) or other named pieces
(``Query.filled``). Queries are composed by name (``union_all``), never by rewriting text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

__all__ = [
    "Query",
    "QueryNotFound",
    "load_queries",
    "query",
    "schema_statements",
    "union_all",
]

_PACKAGE = "metisgraph.cypher"
_HEADER = re.compile(r"^//\s*name:\s*([a-z][a-z0-9_]*)\s*$", re.MULTILINE)
_MODE = re.compile(r"^//\s*mode:\s*(read|write|batch)\s*$", re.MULTILINE)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,62}$")
_SLOT = re.compile(r"\{\{(\w+)\}\}")
_VERSION = "CYPHER 25"


class QueryNotFound(KeyError):
    """No query of that name in the shipped .cypher files."""


@dataclass(frozen=True)
class Query:
    name: str
    text: str
    # batch: an implicit transaction under the long (batch) timeout: IN TRANSACTIONS, waits
    mode: Literal["read", "write", "batch"]
    source: str

    @property
    def slots(self) -> set[str]:
        """The ``{{name}}`` slots still to fill before the query can run."""
        return set(_SLOT.findall(self.text))

    def naming(self, **names: str) -> Query:
        """The query with label or index name slots filled; each name checked, never trusted."""
        for slot, name in names.items():
            if not _NAME.match(name):
                raise ValueError(f"{self.name}: not a label or index name for {slot}: {name!r}")
        return self.filled(**names)

    def filled(self, **slots: str) -> Query:
        """The query with slots filled by Cypher of our own (other named queries' text)."""
        unknown = set(slots) - self.slots
        if unknown:
            raise ValueError(f"{self.name}: no slot {sorted(unknown)}")
        text = _SLOT.sub(lambda m: slots.get(m[1], m[0]), self.text)
        return Query(self.name, text, self.mode, self.source)


def _blocks(source: str, text: str) -> list[Query]:
    headers = list(_HEADER.finditer(text))
    out: list[Query] = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        body = text[header.end() : end]
        mode_match = _MODE.search(body)
        if mode_match is None:
            raise ValueError(f"{source}: query {header.group(1)!r} has no '// mode:' line")
        lines = [ln for ln in body.splitlines() if not ln.lstrip().startswith("//")]
        cypher = "\n".join(lines).strip().rstrip(";").strip()
        mode: Literal["read", "write", "batch"] = mode_match.group(1)  # type: ignore[assignment]
        out.append(Query(header.group(1), cypher, mode, source))
    return out


@cache
def load_queries() -> dict[str, Query]:
    """Every named query in the package, by name; duplicate names are an error."""
    queries: dict[str, Query] = {}
    for entry in sorted(resources.files(_PACKAGE).iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".cypher") or entry.name == "schema.cypher":
            continue
        for q in _blocks(entry.name, entry.read_text(encoding="utf-8")):
            if q.name in queries:
                raise ValueError(
                    f"query {q.name!r} defined in {queries[q.name].source} and {q.source}"
                )
            queries[q.name] = q
    return queries


def union_all(parts: list[Query]) -> Query:
    """Read queries answered in one round trip: their rows one after the other.

    Each part runs as Cypher 25 (the version the parts that need it declare); the parts
    must have the same columns.
    """
    if not parts or any(p.mode != "read" for p in parts):
        raise ValueError("union_all takes one or more read queries")
    bodies = [p.text.removeprefix(_VERSION).strip() for p in parts]
    text = f"{_VERSION}\n" + "\nUNION ALL\n".join(bodies)
    return Query("+".join(p.name for p in parts), text, "read", "composed")


def query(name: str) -> Query:
    try:
        return load_queries()[name]
    except KeyError:
        raise QueryNotFound(name) from None


@cache
def schema_statements() -> tuple[str, ...]:
    """The schema (constraints and indexes) as individual statements, in file order."""
    text = resources.files(_PACKAGE).joinpath("schema.cypher").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("//")]
    return tuple(s.strip() for s in "\n".join(lines).split(";") if s.strip())
