"""Node and relationship files for `neo4j-admin database import`, written as rows come.

A node or relationship is a mapping of properties; its columns are typed from the Python
values (str, int, float, bool, datetime and lists of them), as the driver would send them
as parameters. Rows of one label (or type) whose typed columns differ go to files of their
own, each with its header: the files are streamed, never held, and a property left unset
(None) is absent from the node as it would be after a Cypher SET of null.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

__all__ = ["ARRAY_DELIMITER", "BulkTables", "TableFile", "column_type", "node_id"]

# Between the elements of an array value: a control character no stored text holds (a
# value holding it is refused by `column_type`'s caller, never split wrongly).
ARRAY_DELIMITER = "\x1f"
_ID = "\x1e"


def node_id(label: str, *key: str) -> str:
    """The import's id of a node: its label and key (project and id, name or key)."""
    return _ID.join((label, *key))


def _scalar(value: object) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "long"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, datetime):
        return "datetime"
    return None


def column_type(value: object) -> str:
    """The import type of a property value (`string`, `long[]`, `datetime` …)."""
    if isinstance(value, list | tuple):
        kinds = {_scalar(v) for v in value}
        if len(kinds) == 1 and None not in kinds:
            return f"{kinds.pop()}[]"
        raise ValueError(f"a list of mixed or unsupported values: {sorted(map(str, kinds))}")
    kind = _scalar(value)
    if kind is None:
        raise ValueError(f"a value of type {type(value).__name__} cannot be a property")
    return kind


def _text(value: object) -> str:
    if isinstance(value, list | tuple):
        parts = [_text(v) for v in value]
        if any(ARRAY_DELIMITER in p for p in parts):
            raise ValueError("a list element holds the array delimiter")
        return ARRAY_DELIMITER.join(parts)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


@dataclass
class TableFile:
    """One file of a label or type with one header."""

    kind: str  # "nodes" | "relationships"
    name: str  # the label or the relationship type
    path: Path
    columns: tuple[tuple[str, str], ...]
    handle: IO[str]
    writer: Any = None
    rows: int = 0


@dataclass
class BulkTables:
    """Every file of one import, in a folder; ``arguments`` names them for the tool."""

    folder: Path
    files: dict[tuple[str, str, tuple[tuple[str, str], ...]], TableFile] = field(
        default_factory=dict
    )

    def node(self, label: str, ident: str, props: Mapping[str, Any]) -> list[str]:
        """Write one node; returns the names of its empty lists, which an import cannot
        store (an empty field is no value): they are set after it."""
        kept = {k: v for k, v in props.items() if v is not None}
        empty = sorted(k for k, v in kept.items() if isinstance(v, list | tuple) and not v)
        for name in empty:
            del kept[name]
        columns = tuple(sorted((k, column_type(v)) for k, v in kept.items()))
        table = self._file("nodes", label, columns, (":ID",))
        table.writer.writerow([ident, *(_text(kept[k]) for k, _ in columns)])
        table.rows += 1
        return empty

    def edge(self, kind: str, source: str, target: str, props: Mapping[str, Any] = {}) -> None:
        kept = {k: v for k, v in props.items() if v is not None}
        columns = tuple(sorted((k, column_type(v)) for k, v in kept.items()))
        table = self._file("relationships", kind, columns, (":START_ID", ":END_ID"))
        table.writer.writerow([source, target, *(_text(kept[k]) for k, _ in columns)])
        table.rows += 1

    def _file(
        self, kind: str, name: str, columns: tuple[tuple[str, str], ...], ids: tuple[str, ...]
    ) -> TableFile:
        key = (kind, name, columns)
        table = self.files.get(key)
        if table is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{kind}-{name}-{len(self.files):04d}.csv"
            handle = path.open("w", newline="", encoding="utf-8")
            table = TableFile(kind, name, path, columns, handle)
            table.writer = csv.writer(handle, lineterminator="\n", quoting=csv.QUOTE_ALL)
            header = [*ids, *(f"{c}:{t}" for c, t in columns)]
            table.writer.writerow(header)
            self.files[key] = table
        return table

    def close(self) -> None:
        for table in self.files.values():
            table.handle.close()

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for table in self.files.values():
            out[table.name] = out.get(table.name, 0) + table.rows
        return out

    def arguments(self) -> Iterator[str]:
        """The tool's --nodes/--relationships arguments, one a file."""
        for table in self.files.values():
            flag = "--nodes" if table.kind == "nodes" else "--relationships"
            yield f"{flag}={table.name}={table.path}"
