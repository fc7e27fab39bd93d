"""JavaScript and TypeScript structure from a tree-sitter tree."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from metisgraph.ingest.code.model import Parameter, Requirement, Structure
from metisgraph.ingest.code.syntax import doc_comment, header, resolve, text, unique, walk

__all__ = ["analyze_ecmascript"]

_FUNCTIONS = {"function_declaration", "generator_function_declaration", "method_definition"}
_CLASSES = {"class_declaration", "abstract_class_declaration", "class"}
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
_WRAPPERS = {"export_statement", "lexical_declaration", "variable_declaration"}
_NODE_BUILTINS = frozenset(
    {
        "assert", "buffer", "child_process", "cluster", "crypto", "dgram", "dns", "events",
        "fs", "http", "http2", "https", "net", "os", "path", "perf_hooks", "process",
        "querystring", "readline", "stream", "string_decoder", "timers", "tls", "url", "util",
        "v8", "vm", "worker_threads", "zlib"
    }
)  # fmt: skip


def analyze_ecmascript(root: Node) -> Structure:
    aliases, modules = _imports(root)
    main = _main_declaration(root)
    calls = unique(resolve(name, aliases) for name in _callees(root))
    base = Structure(imports=modules, calls=calls, requires=_packages(modules))
    if main is None:
        return base
    kind = "class" if main.type in _CLASSES else "function"
    name_node = main.child_by_field_name("name")
    function = _constructor(main) if kind == "class" else _function_node(main)
    parameters = _parameters(function.child_by_field_name("parameters")) if function else ()
    documented = main
    while documented.parent is not None and documented.parent.type in _WRAPPERS:
        documented = documented.parent
    return Structure(
        kind=kind,
        name=text(name_node) or None,
        signature=header(main, main.child_by_field_name("body")),
        parameters=parameters,
        docstring=doc_comment(documented),
        imports=base.imports,
        calls=base.calls,
        requires=base.requires,
    )


def _main_declaration(root: Node) -> Node | None:
    for node in root.named_children:
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        if node.type in _FUNCTIONS | _CLASSES:
            return node
        if node.type in {"lexical_declaration", "variable_declaration"}:
            declarator = node.named_children[0] if node.named_children else None
            value = declarator.child_by_field_name("value") if declarator else None
            if value is not None and value.type in _FUNCTION_VALUES:
                return declarator
    return None


def _function_node(main: Node) -> Node | None:
    if main.type == "variable_declarator":
        return main.child_by_field_name("value")
    return main


def _constructor(cls: Node) -> Node | None:
    body = cls.child_by_field_name("body")
    for member in body.named_children if body else []:
        if (
            member.type == "method_definition"
            and text(member.child_by_field_name("name")) == "constructor"
        ):
            return member
    return None


def _parameters(params: Node | None) -> tuple[Parameter, ...]:
    if params is None:
        return ()
    if params.type == "identifier":  # x => x + 1
        return (Parameter(text(params)),)
    return tuple(_parameter(node) for node in params.named_children if node.type != "comment")


def _parameter(node: Node) -> Parameter:
    if node.type == "assignment_pattern":
        return Parameter(
            text(node.child_by_field_name("left")), None, text(node.child_by_field_name("right"))
        )
    if node.type in {"required_parameter", "optional_parameter"}:
        pattern = node.child_by_field_name("pattern")
        annotation = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        name = text(pattern) + ("?" if node.type == "optional_parameter" else "")
        type_text = text(annotation).lstrip(":").strip() or None
        return Parameter(name, type_text, text(value) or None)
    return Parameter(text(node))


def _imports(root: Node) -> tuple[dict[str, str], tuple[str, ...]]:
    """Local bindings of imports and requires, and the modules in the order they appear."""
    aliases: dict[str, str] = {}
    modules: list[str] = []
    for node in walk(root):
        if node.type == "import_statement":
            module = _string(node.child_by_field_name("source"))
            modules.append(module)
            aliases.update(_import_bindings(node, module))
        elif (
            node.type == "call_expression"
            and text(node.child_by_field_name("function")) == "require"
        ):
            args = node.child_by_field_name("arguments")
            module = _string(args.named_children[0]) if args and args.named_children else ""
            modules.append(module)
            aliases.update(_require_bindings(node, module))
    return aliases, unique(modules)


def _import_bindings(statement: Node, module: str) -> Iterator[tuple[str, str]]:
    for node in walk(statement):
        if node.type == "import_clause":
            for child in node.named_children:
                if child.type == "identifier":  # import axios from "axios"
                    yield text(child), module
        elif node.type == "namespace_import":
            yield text(node.named_children[-1]), module
        elif node.type == "import_specifier":
            name = text(node.child_by_field_name("name"))
            alias = text(node.child_by_field_name("alias")) or name
            yield alias, f"{module}.{name}"


def _require_bindings(call: Node, module: str) -> Iterator[tuple[str, str]]:
    declarator = call.parent
    if declarator is None or declarator.type != "variable_declarator":
        return
    target = declarator.child_by_field_name("name")
    if target is not None and target.type == "identifier":
        yield text(target), module
    elif target is not None and target.type == "object_pattern":
        for child in target.named_children:
            if child.type == "shorthand_property_identifier_pattern":
                yield text(child), f"{module}.{text(child)}"


def _string(node: Node | None) -> str:
    return text(node).strip("'\"`")


def _callees(root: Node) -> Iterator[str]:
    for node in walk(root):
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            if function is not None and function.type in {"identifier", "member_expression"}:
                callee = text(function)
                if "(" not in callee and "\n" not in callee and callee != "require":
                    yield callee.replace("?.", ".")


def _packages(modules: tuple[str, ...]) -> tuple[Requirement, ...]:
    """npm packages behind imports; relative paths and Node's own modules need nothing."""
    names = []
    for module in modules:
        if not module or module.startswith((".", "/", "node:")):
            continue
        parts = module.split("/")
        name = "/".join(parts[:2]) if module.startswith("@") else parts[0]
        if name not in _NODE_BUILTINS:
            names.append(name)
    return tuple(Requirement(name) for name in unique(names))
