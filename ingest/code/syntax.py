"""Small readers over tree-sitter trees, shared by the per-language analysers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from tree_sitter import Node

__all__ = [
    "doc_comment",
    "first_of",
    "header",
    "resolve",
    "text",
    "unique",
    "walk",
]


def text(node: Node | None) -> str:
    """The source text of a node ('' for None)."""
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def walk(node: Node) -> Iterator[Node]:
    """Every node below `node` (itself included), in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def first_of(nodes: Iterable[Node], types: Iterable[str]) -> Node | None:
    wanted = set(types)
    return next((node for node in nodes if node.type in wanted), None)


def header(node: Node, body: Node | None) -> str:
    """A declaration up to its body, on one line: the signature as written."""
    source = node.text or b""
    end = (body.start_byte - node.start_byte) if body is not None else len(source)
    return " ".join(source[:end].decode("utf-8", errors="replace").split()).rstrip(" {=>")


def doc_comment(node: Node) -> str | None:
    """The comment directly above a declaration: `/** … */` or a run of `//` lines."""
    lines: list[str] = []
    sibling = node.prev_sibling
    expected_row = node.start_point.row - 1
    while sibling is not None and "comment" in sibling.type:
        if sibling.end_point.row != expected_row:
            break
        lines.insert(0, text(sibling))
        expected_row = sibling.start_point.row - 1
        sibling = sibling.prev_sibling
    if not lines:
        return None
    cleaned = [_strip_comment(line) for line in "\n".join(lines).splitlines()]
    doc = "\n".join(line for line in cleaned if line).strip()
    return doc or None


def _strip_comment(line: str) -> str:
    line = line.strip()
    line = re.sub(r"^(?:/\*\*?|//+|#+|--)\s?", "", line)
    line = re.sub(r"\s*\*/$", "", line)
    return re.sub(r"^\*\s?", "", line).strip()


def resolve(dotted: str, aliases: dict[str, str], separator: str = ".") -> str:
    """Name a callee through the imports: `h.Get` with h = net/http → `net/http.Get`."""
    head, dot, rest = dotted.partition(".")
    if head in aliases:
        return aliases[head] + (separator + rest if dot else "")
    return dotted


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """Items in first-seen order, without repeats or blanks."""
    return tuple(dict.fromkeys(item for item in items if item))
