"""Find table names in SQL, whether the snippet is SQL or SQL sits in a string literal."""

from __future__ import annotations

import re
from collections.abc import Iterator

from metisgraph.ingest.code.lexical import comment_spans, string_spans
from metisgraph.ingest.code.lifting import Lift, Source

__all__ = ["table_lifts"]

_IDENT = r'(?:"[^"\n]+"|`[^`\n]+`|\[[^\]\n]+\]|[A-Za-z_][\w$]*)'
_TABLE = re.compile(
    r"\b(?P<verb>FROM|JOIN|INTO|UPDATE|TABLE|TRUNCATE)\s+"
    r"(?:(?:IF\s+(?:NOT\s+)?EXISTS|ONLY|TABLE)\s+)*"
    rf"(?P<name>{_IDENT}(?:\.{_IDENT})?)",
    re.I,
)
_CTE = re.compile(
    rf"(?:\bWITH(?:\s+RECURSIVE)?|,)\s*(?P<name>{_IDENT})\s*(?:\([^)]*\)\s*)?AS\s*\(", re.I
)
_SQL_LITERAL = re.compile(
    r"^[rRbBuUfF]{0,2}(?:\"\"\"|'''|[\"'`])\s*"
    r"(?:SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|TRUNCATE|WITH|MERGE|REPLACE|UPSERT)\b",
    re.I,
)
_NOT_TABLES = frozenset(
    {"dual", "select", "lateral", "unnest", "values", "set", "where", "sqlite_master", "table"}
)
_SYSTEM_SCHEMAS = ("information_schema.", "pg_catalog.", "sys.", "mysql.")


def table_lifts(source: Source) -> Iterator[Lift]:
    """Table names after FROM, JOIN, INTO, UPDATE, TABLE and TRUNCATE become `table` parameters.

    Names a `WITH name AS (…)` defines are the query's own, not tables.
    """
    regions = _sql_regions(source)
    ctes = {m["name"].lower() for s, e in regions for m in _CTE.finditer(source.code[s:e])}
    for start, end in regions:
        yield from _tables_in(source.code, start, end, ctes)


def _sql_regions(source: Source) -> list[tuple[int, int]]:
    if source.language == "sql":
        return _outside_literals(source.code)
    return [(s, e) for s, e in source.strings if _SQL_LITERAL.match(source.code[s:e])]


def _outside_literals(code: str) -> list[tuple[int, int]]:
    """The parts of a SQL text that are neither comments nor string literals."""
    regions, cursor = [], 0
    for start, end in sorted(comment_spans(code, "sql") + string_spans(code, "sql")):
        if start < cursor:
            continue  # a quote inside a comment, or a comment marker inside a string
        regions.append((cursor, start))
        cursor = end
    regions.append((cursor, len(code)))
    return regions


def _tables_in(code: str, start: int, end: int, ctes: set[str]) -> Iterator[Lift]:
    text = code[start:end]
    for match in _TABLE.finditer(text):
        name = match["name"]
        lowered = name.lower()
        if lowered in ctes or lowered in _NOT_TABLES or lowered.startswith(_SYSTEM_SCHEMAS):
            continue
        verb = match["verb"].upper()
        if verb in {"FROM", "JOIN"} and re.match(r"\s*\(", text[match.end() :]):
            continue  # FROM generate_series(1, 10) reads a function, not a table
        if verb == "FROM" and _inside_function_call(text, match.start()):
            continue
        s, e = match.span("name")
        yield Lift(start + s, start + e, "table", name, "table")


def _inside_function_call(text: str, offset: int) -> bool:
    """`EXTRACT(YEAR FROM ts)` and `TRIM(x FROM y)` use FROM without naming a table."""
    depth = 0
    for index in range(offset - 1, -1, -1):
        char = text[index]
        if char == ")":
            depth += 1
        elif char == "(":
            if depth == 0:
                return not re.match(r"\s*(?:SELECT|WITH)\b", text[index + 1 :], re.I)
            depth -= 1
    return False
