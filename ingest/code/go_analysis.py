"""Go structure from a tree-sitter tree."""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from metisgraph.ingest.code.dependencies import runtime_requirement
from metisgraph.ingest.code.model import Parameter, Requirement, Structure
from metisgraph.ingest.code.syntax import doc_comment, header, resolve, text, unique, walk

__all__ = ["analyze_go"]

_FUNCTIONS = {"function_declaration", "method_declaration"}
# Hosts whose module paths are host/owner/repo; the rest of an import path is a package inside.
_THREE_PART_HOSTS = ("github.com/", "gitlab.com/", "bitbucket.org/", "golang.org/x/")


def analyze_go(root: Node) -> Structure:
    aliases, imports = _imports(root)
    calls = unique(resolve(name, aliases) for name in _callees(root))
    requires = _modules(imports)
    if any(node.type == "type_parameter_list" for node in walk(root)):
        generics = runtime_requirement("go", [">=1.18"])
        requires += (generics,) if generics else ()
    main = next(
        (n for n in root.named_children if n.type in _FUNCTIONS | {"type_declaration"}), None
    )
    if main is None:
        return Structure(imports=imports, calls=calls, requires=requires)
    if main.type == "type_declaration":
        spec = next((c for c in main.named_children if c.type == "type_spec"), None)
        return Structure(
            kind="class",
            name=text(spec.child_by_field_name("name")) if spec else None,
            signature=" ".join(text(main).split("{", 1)[0].split()),
            docstring=doc_comment(main),
            imports=imports,
            calls=calls,
            requires=requires,
        )
    return Structure(
        kind="function",
        name=text(main.child_by_field_name("name")) or None,
        signature=header(main, main.child_by_field_name("body")),
        parameters=_parameters(main.child_by_field_name("parameters")),
        docstring=doc_comment(main),
        imports=imports,
        calls=calls,
        requires=requires,
    )


def _parameters(params: Node | None) -> tuple[Parameter, ...]:
    found: list[Parameter] = []
    for node in params.named_children if params else []:
        type_text = text(node.child_by_field_name("type")) or None
        names = [text(c) for c in node.children_by_field_name("name")]
        if node.type == "variadic_parameter_declaration":
            names = [f"...{name}" for name in names]
            type_text = f"...{type_text}" if type_text else None
        found += [Parameter(name, type_text) for name in names] or [Parameter("_", type_text)]
    return tuple(found)


def _imports(root: Node) -> tuple[dict[str, str], tuple[str, ...]]:
    aliases: dict[str, str] = {}
    paths = []
    for node in walk(root):
        if node.type != "import_spec":
            continue
        path = text(node.child_by_field_name("path")).strip('"`')
        paths.append(path)
        alias = text(node.child_by_field_name("name"))
        if alias not in {"_", "."}:
            aliases[alias or path.rsplit("/", 1)[-1]] = path
    return aliases, unique(paths)


def _callees(root: Node) -> Iterator[str]:
    for node in walk(root):
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            if function is not None and function.type in {"identifier", "selector_expression"}:
                callee = text(function)
                if "(" not in callee and "\n" not in callee:
                    yield callee


def _modules(imports: tuple[str, ...]) -> tuple[Requirement, ...]:
    """Go modules behind import paths; the standard library has no dot in its first element."""
    modules = []
    for path in imports:
        if "." not in path.split("/")[0]:
            continue
        modules.append(
            "/".join(path.split("/")[:3]) if path.startswith(_THREE_PART_HOSTS) else path
        )
    return tuple(Requirement(module) for module in unique(modules))
