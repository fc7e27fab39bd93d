"""docs/architecture.md stays true to the tree: every module and every Cypher file is named
in the table of its room, and no table names one that is gone. No database needed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
# The rooms, deepest first: a module belongs to the deepest room whose folder holds it.
ROOMS = ("api/http", "api/graphql", "api/cli", "api/eval", "api", "graph", "ingest", "cypher")
HEADING = re.compile(r"^### `([\w/]+)/`", re.M)
NAMED = re.compile(r"`([\w/]+\.(?:py|cypher))`")


def _room_of(path: Path) -> tuple[str, str]:
    rel = path.relative_to(ROOT).as_posix()
    for room in ROOMS:
        if rel.startswith(room + "/"):
            return room, rel[len(room) + 1 :]
    raise AssertionError(f"{rel} is in no room")


def _modules() -> dict[str, set[str]]:
    """Each room's modules by their path inside it (package faces are the room itself)."""
    found: dict[str, set[str]] = {room: set() for room in ROOMS}
    for folder in ("api", "graph", "ingest"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name != "__init__.py":
                room, name = _room_of(path)
                found[room].add(name)
    found["cypher"] = {p.name for p in (ROOT / "cypher").glob("*.cypher")}
    return found


def _tables() -> dict[str, set[str]]:
    """What each room's section of the doc names in its table rows."""
    doc = DOC.read_text()
    heads = list(HEADING.finditer(doc))
    tables: dict[str, set[str]] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else doc.find("\n## ", head.end())
        section = doc[head.end() : end if end > 0 else len(doc)]
        rows = [line for line in section.splitlines() if line.startswith("| `")]
        tables[head[1]] = {name for row in rows for name in NAMED.findall(row.split(" | ")[0])}
    return tables


def test_every_room_has_a_table_in_the_doc() -> None:
    assert set(_tables()) == set(ROOMS)


def test_every_module_and_cypher_file_is_named_in_its_rooms_table() -> None:
    tables = _tables()
    for room, modules in _modules().items():
        missing = sorted(modules - tables.get(room, set()))
        assert not missing, f"docs/architecture.md: {room}/ table misses {missing}"


def test_no_table_names_a_module_that_is_gone_or_in_another_room() -> None:
    modules = _modules()
    for room, named in _tables().items():
        stale = sorted(named - modules.get(room, set()))
        assert not stale, f"docs/architecture.md: {room}/ table names {stale}, not in {room}/"
