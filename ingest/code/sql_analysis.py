"""SQL structure: what a script creates, the functions it calls and its bind parameters."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from metisgraph.ingest.code.lexical import comment_spans, string_spans
from metisgraph.ingest.code.model import Parameter, Structure
from metisgraph.ingest.code.syntax import text, unique, walk

__all__ = ["analyze_sql", "bind_parameters"]

_BIND = re.compile(
    r"(?<![:\w]):(?P<colon>[A-Za-z_]\w*)|%\((?P<pyformat>\w+)\)s|(?P<dollar>\$\d+)|(?<!@)@(?P<at>[A-Za-z_]\w*)"
)


def analyze_sql(root: Node) -> Structure:
    created = next((n for n in walk(root) if n.type.startswith("create_")), None)
    name = _created_name(created) if created is not None else None
    return Structure(
        kind="sql",
        name=name,
        signature=" ".join(text(created).split("(", 1)[0].split()) if created is not None else None,
        parameters=bind_parameters(text(root)),
        docstring=_leading_comment(root),
        calls=unique(_invocations(root)),
    )


def bind_parameters(sql: str) -> tuple[Parameter, ...]:
    """`:region`, `%(region)s`, `$1` and `@region` placeholders, outside strings and comments."""
    masked = _mask(sql)
    names = []
    for match in _BIND.finditer(masked):
        names.append(next(value for value in match.groupdict().values() if value))
    return tuple(Parameter(name) for name in unique(names))


def _mask(sql: str) -> str:
    chars = list(sql)
    for start, end in comment_spans(sql, "sql") + string_spans(sql, "sql"):
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _created_name(created: Node) -> str | None:
    reference = next((c for c in created.named_children if c.type == "object_reference"), None)
    return text(reference) or None


def _invocations(root: Node) -> Iterator[str]:
    for node in walk(root):
        if node.type == "invocation":
            reference = next((c for c in node.named_children if c.type == "object_reference"), None)
            if reference is not None:
                yield text(reference).lower()


def _leading_comment(root: Node) -> str | None:
    lines = []
    for node in root.children:
        if node.type not in {"comment", "marginalia"}:
            break
        lines.append(re.sub(r"^(?:--+|/\*+)\s?|\s*\*+/$", "", text(node)).strip())
    doc = "\n".join(line for line in lines if line)
    return doc or None
