"""Java structure from a tree-sitter tree."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from metisgraph.ingest.code.model import Parameter, Structure
from metisgraph.ingest.code.syntax import doc_comment, header, resolve, text, unique, walk

__all__ = ["analyze_java"]

_TYPES = {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
_METHODS = {"method_declaration", "constructor_declaration"}


def analyze_java(root: Node) -> Structure:
    aliases, imports = _imports(root)
    calls = unique(resolve(name, aliases) for name in _callees(root))
    main = next((n for n in root.named_children if n.type in _TYPES | _METHODS), None)
    if main is None:
        return Structure(imports=imports, calls=calls)
    is_type = main.type in _TYPES
    method = _constructor(main) if is_type else main
    params = method.child_by_field_name("parameters") if method is not None else None
    if params is None and main.type == "record_declaration":
        params = main.child_by_field_name("parameters")
    return Structure(
        kind="class" if is_type else "function",
        name=text(main.child_by_field_name("name")) or None,
        signature=header(main, main.child_by_field_name("body")),
        parameters=_parameters(params),
        docstring=doc_comment(main),
        imports=imports,
        calls=calls,
    )


def _constructor(cls: Node) -> Node | None:
    body = cls.child_by_field_name("body")
    return (
        next((m for m in body.named_children if m.type == "constructor_declaration"), None)
        if body
        else None
    )


def _parameters(params: Node | None) -> tuple[Parameter, ...]:
    if params is None:
        return ()
    found = []
    for node in params.named_children:
        if node.type == "formal_parameter":
            found.append(
                Parameter(
                    text(node.child_by_field_name("name")),
                    text(node.child_by_field_name("type")) or None,
                )
            )
        elif node.type == "spread_parameter":
            declarator = next(
                (c for c in node.named_children if c.type == "variable_declarator"), None
            )
            type_node = next(
                (
                    c
                    for c in node.named_children
                    if c.type not in {"variable_declarator", "modifiers"}
                ),
                None,
            )
            name = text(declarator.child_by_field_name("name")) if declarator else ""
            found.append(Parameter(f"...{name}", text(type_node) or None))
    return tuple(found)


def _imports(root: Node) -> tuple[dict[str, str], tuple[str, ...]]:
    """Simple names bound by imports (`List` → `java.util.List`), and the imported names."""
    aliases: dict[str, str] = {}
    imports = []
    for node in root.named_children:
        if node.type != "import_declaration":
            continue
        target = next(
            (c for c in node.named_children if c.type in {"scoped_identifier", "identifier"}), None
        )
        name = text(target)
        wildcard = any(c.type == "asterisk" for c in node.named_children)
        imports.append(f"{name}.*" if wildcard else name)
        if not wildcard:
            aliases[name.rsplit(".", 1)[-1]] = name
    return aliases, unique(imports)


def _callees(root: Node) -> Iterator[str]:
    for node in walk(root):
        if node.type != "method_invocation":
            continue
        name = text(node.child_by_field_name("name"))
        receiver = node.child_by_field_name("object")
        if receiver is None:
            yield name
        elif receiver.type in {"identifier", "field_access", "scoped_identifier", "this"}:
            yield f"{text(receiver)}.{name}"
