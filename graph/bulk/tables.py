"""Node and relationship files for `neo4j-admin database import`, written as rows come.

A node or relationship is a mapping of properties; its columns are typed from the Python
values (str, int, float, bool, datetime and lists of them), as the driver would send them
as parameters — but an embedding whose every value is a float32's (a model's output) is
stored as `float[]`: each value written in the nine significant digits that give that
float32 back (half the bytes of a double on disk, ~35 % less text to write and parse), read
back as the same floats the pipeline's `double[]` holds. Rows of one label (or type) whose
typed columns differ go to files of their own, each with its header: the files are
streamed, never held, and a property left unset (None) is absent from the node as it would
be after a Cypher SET of null.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import numpy as np

from metisgraph.graph.vectors import Vector

__all__ = [
    "ARRAY_DELIMITER",
    "BulkTables",
    "Chunks",
    "Pending",
    "TableFile",
    "column_type",
    "format_rows",
    "node_id",
]

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


def _single(value: Vector) -> bool:
    """Whether every value of an embedding is a float32's (a model's output)."""
    return np.array_equal(np.asarray(value, np.float64), np.asarray(value, np.float32))


def _vector(value: Vector) -> tuple[str, str]:
    """An embedding's import type and text: `float[]` in nine significant digits when every
    value is a float32's (nine digits name one float32), else `double[]`, each value its
    shortest repr."""
    if _single(value):
        return "float[]", ARRAY_DELIMITER.join([format(v, ".9g") for v in value])
    return "double[]", ARRAY_DELIMITER.join(map(float.__repr__, value))


def column_type(value: object) -> str:
    """The import type of a property value (`string`, `long[]`, `datetime` …)."""
    if type(value) is Vector:  # floats by construction: an embedding
        return "float[]" if _single(value) else "double[]"
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
    if type(value) is Vector:
        return _vector(value)[1]
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


# A row to write: (kind, name, ids, properties) — "nodes"/"relationships", the label or
# type, the :ID or :START_ID/:END_ID values, the properties (no None, no empty list).
Pending = list[tuple[str, str, tuple[str, ...], dict[str, Any]]]
# Rows formatted: (kind, name, typed columns) -> (CSV text, rows), in first-met order.
Chunks = dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[str, int]]


def format_rows(rows: Pending) -> Chunks:
    """Rows as CSV text per file (same kind, name and typed columns) — the costly part of
    writing (typing and formatting every value), a pure function: any process may run it.
    A vector met twice among the rows (an episode's and its text vector's) is formatted once."""
    out: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[io.StringIO, Any, list[int]]]
    out = {}
    done: dict[int, tuple[str, str]] = {}  # id of a vector -> its type and text
    for kind, name, ids, props in rows:
        typed = []
        for k, v in props.items():
            if type(v) is Vector:
                made = done.get(id(v))
                if made is None:
                    made = done[id(v)] = _vector(v)
                typed.append((k, made[0]))
            else:
                typed.append((k, column_type(v)))
        columns = tuple(sorted(typed))
        key = (kind, name, columns)
        entry = out.get(key)
        if entry is None:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
            entry = out[key] = (buffer, writer, [0])
        values = []
        for k, _ in columns:
            value = props[k]
            values.append(done[id(value)][1] if type(value) is Vector else _text(value))
        entry[1].writerow([*ids, *values])
        entry[2][0] += 1
    return {key: (buffer.getvalue(), n[0]) for key, (buffer, _, n) in out.items()}


@dataclass
class TableFile:
    """One file of a label or type with one header."""

    kind: str  # "nodes" | "relationships"
    name: str  # the label or the relationship type
    path: Path
    columns: tuple[tuple[str, str], ...]
    handle: IO[str]
    rows: int = 0


@dataclass
class BulkTables:
    """Every file of one import, in a folder; ``arguments`` names them for the tool."""

    folder: Path
    files: dict[tuple[str, str, tuple[tuple[str, str], ...]], TableFile] = field(
        default_factory=dict
    )
    # rows taken but not yet formatted: `write` them here, or `take` them to format elsewhere
    pending: Pending = field(default_factory=list)

    def node(self, label: str, ident: str, props: Mapping[str, Any]) -> list[str]:
        """Write one node; returns the names of its empty lists, which an import cannot
        store (an empty field is no value): they are set after it."""
        kept = {k: v for k, v in props.items() if v is not None}
        empty = sorted(k for k, v in kept.items() if isinstance(v, list | tuple) and not v)
        for name in empty:
            del kept[name]
        self.pending.append(("nodes", label, (ident,), kept))
        return empty

    def edge(self, kind: str, source: str, target: str, props: Mapping[str, Any] = {}) -> None:
        kept = {k: v for k, v in props.items() if v is not None}
        self.pending.append(("relationships", kind, (source, target), kept))

    def take(self) -> Pending:
        """The rows not yet written, handed over (to `format_rows` in another process)."""
        rows, self.pending = self.pending, []
        return rows

    def write(self, chunks: Chunks) -> None:
        """Formatted rows into their files (opened with their header when first met)."""
        for (kind, name, columns), (text, rows) in chunks.items():
            table = self._file(kind, name, columns)
            table.handle.write(text)
            table.rows += rows

    def _file(self, kind: str, name: str, columns: tuple[tuple[str, str], ...]) -> TableFile:
        key = (kind, name, columns)
        table = self.files.get(key)
        if table is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{kind}-{name}-{len(self.files):04d}.csv"
            handle = path.open("w", newline="", encoding="utf-8")
            table = TableFile(kind, name, path, columns, handle)
            ids = (":ID",) if kind == "nodes" else (":START_ID", ":END_ID")
            header = [*ids, *(f"{c}:{t}" for c, t in columns)]
            csv.writer(handle, lineterminator="\n", quoting=csv.QUOTE_ALL).writerow(header)
            self.files[key] = table
        return table

    def close(self) -> None:
        """The rows still pending written here, every file closed."""
        self.write(format_rows(self.take()))
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
