"""Shell structure: the commands a script runs, what it sources, its functions and arguments."""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from metisgraph.ingest.code.model import Parameter, Structure
from metisgraph.ingest.code.syntax import doc_comment, text, unique, walk

__all__ = ["analyze_shell", "positional_parameters"]

# A default may itself be a template placeholder: ${1:-{{path}}}.
_DEFAULT = r"(?P<default>(?:\{\{\w+\}\}|[^}\"'])*)"
_POSITIONAL = re.compile(rf"\$\{{?(?P<n>[1-9])(?:(?::?[-=]){_DEFAULT})?\}}?")
_NAMED = re.compile(
    r"""(?:\blocal\s+|\bdeclare\s+(?:-\w+\s+)*|\breadonly\s+|^\s*|;\s*)(?P<name>[A-Za-z_]\w*)="""
    rf"""["']?\$\{{?(?P<n>[1-9])(?:(?::?[-=]){_DEFAULT})?\}}?["']?""",
    re.M,
)


def analyze_shell(root: Node) -> Structure:
    source = text(root)
    function = next((n for n in walk(root) if n.type == "function_definition"), None)
    name = text(function.child_by_field_name("name")) if function else None
    return Structure(
        kind="shell",
        name=name or None,
        signature=f"{name}()" if name else None,
        parameters=positional_parameters(source),
        docstring=(doc_comment(function) if function else None) or _leading_comment(root),
        imports=unique(_sourced(root)),
        calls=unique(_commands(root)),
    )


def positional_parameters(source: str) -> tuple[Parameter, ...]:
    """`local target="${1:-/tmp/out}"` → target (default /tmp/out); a bare `$2` → `$2`."""
    named: dict[str, Parameter] = {}
    for match in _NAMED.finditer(source):
        named.setdefault(match["n"], Parameter(match["name"], None, match["default"] or None))
    for match in _POSITIONAL.finditer(source):
        named.setdefault(match["n"], Parameter(f"${match['n']}", None, match["default"] or None))
    return tuple(named[n] for n in sorted(named))


def _commands(root: Node) -> Iterator[str]:
    for node in walk(root):
        if node.type == "command":
            name = text(node.child_by_field_name("name"))
            if name and not name.startswith(("$", "(")):
                yield name


def _sourced(root: Node) -> Iterator[str]:
    for node in walk(root):
        if node.type == "command" and text(node.child_by_field_name("name")) in {"source", "."}:
            arguments = node.children_by_field_name("argument")
            if arguments:
                yield text(arguments[0]).strip("'\"")


def _leading_comment(root: Node) -> str | None:
    """A script's opening comment block (after the shebang) says what it is for."""
    lines = []
    for node in root.children:
        if node.type != "comment":
            break
        line = text(node)
        if not line.startswith("#!"):
            lines.append(line.lstrip("#").strip())
    doc = "\n".join(line for line in lines if line)
    return doc or None
