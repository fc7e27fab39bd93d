"""Python structure with `ast`: signature, parameters, docstring, imports and resolved calls."""

from __future__ import annotations

import ast
import copy
import textwrap
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from metisgraph.ingest.code.model import Parameter, Structure

__all__ = ["ResolvedCall", "analyze_python", "parse_python", "parse_source", "resolved_calls"]

_Def = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class ResolvedCall:
    """A call with its callee named through the imports (`pd.read_sql` → `pandas.read_sql`)."""

    name: str
    node: ast.Call


# CPython 3.11 keeps the AST converter's recursion counter per interpreter, not per thread
# (gh-106905): two threads parsing at once can fail with "SystemError: AST constructor
# recursion depth mismatch". Ingest prepares batches in worker threads, so every parse of
# foreign code goes through this one lock (it also guards `warnings.catch_warnings`, which
# is not thread-safe either).
_PARSE_LOCK = threading.Lock()


def parse_source(text: str) -> ast.Module | None:
    """`ast.parse` of foreign code, or None when CPython cannot or will not parse it."""
    with _PARSE_LOCK:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in copied code are not ours
                return ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError, SystemError):
            # MemoryError: CPython's parser gives up on some huge inputs; SystemError: the
            # converter bug above, should another caller parse outside this lock.
            return None


def parse_python(code: str) -> ast.Module | None:
    """Parse code, also when it was copied with a common indent; None when it is not Python."""
    for text in (code, textwrap.dedent(code)):
        tree = parse_source(text)
        if tree is not None:
            return tree
    return None


def analyze_python(code: str) -> Structure | None:
    """The structure of a Python snippet, or None when it does not parse."""
    tree = parse_python(code)
    if tree is None:
        return None
    try:
        return _structure(tree)
    except RecursionError:
        return None  # ast.unparse of absurdly nested expressions


def _structure(tree: ast.Module) -> Structure:
    main = _main_definition(tree)
    imports = tuple(dict.fromkeys(_imported_modules(tree)))
    calls = tuple(dict.fromkeys(call.name for call in resolved_calls(tree)))
    if isinstance(main, ast.ClassDef):
        init = _constructor(main)
        return Structure(
            kind="class",
            name=main.name,
            signature=_class_signature(main, init),
            parameters=_parameters(init.args, skip_first=True) if init else (),
            docstring=ast.get_docstring(main),
            imports=imports,
            calls=calls,
        )
    if main is not None:
        return Structure(
            kind="function",
            name=main.name,
            signature=_signature(main),
            parameters=_parameters(main.args, skip_first=False),
            docstring=ast.get_docstring(main),
            imports=imports,
            calls=calls,
        )
    return Structure(docstring=ast.get_docstring(tree), imports=imports, calls=calls)


def _main_definition(tree: ast.Module) -> _Def | ast.ClassDef | None:
    """The first top-level function or class: what a snippet is 'about'."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return node
    return None


def _constructor(cls: ast.ClassDef) -> _Def | None:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__init__":
            return node
    return None


def _signature(fn: _Def) -> str:
    prefix = "async def" if isinstance(fn, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
    return f"{prefix} {fn.name}({ast.unparse(fn.args)}){returns}"


def _class_signature(cls: ast.ClassDef, init: _Def | None) -> str:
    bases = [ast.unparse(b) for b in cls.bases] + [ast.unparse(k) for k in cls.keywords]
    head = f"class {cls.name}({', '.join(bases)})" if bases else f"class {cls.name}"
    if init is None:
        return head
    args = copy.copy(init.args)
    if args.posonlyargs:
        args.posonlyargs = args.posonlyargs[1:]
    else:
        args.args = args.args[1:]
    return f"{head}: __init__({ast.unparse(args)})"


def _parameters(args: ast.arguments, *, skip_first: bool) -> tuple[Parameter, ...]:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    pairs: list[tuple[str, ast.arg, ast.expr | None]] = [
        ("", arg, default) for arg, default in zip(positional, defaults, strict=True)
    ]
    if skip_first and pairs:
        pairs = pairs[1:]
    if args.vararg:
        pairs.append(("*", args.vararg, None))
    pairs += [("", a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg:
        pairs.append(("**", args.kwarg, None))
    return tuple(
        Parameter(
            name=star + arg.arg,
            type=ast.unparse(arg.annotation) if arg.annotation else None,
            default=ast.unparse(default) if default is not None else None,
        )
        for star, arg, default in pairs
    )


def _imported_modules(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield "." * node.level + (node.module or "")


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local names bound by imports, mapped to what they stand for."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def resolved_calls(tree: ast.Module) -> list[ResolvedCall]:
    """Every call whose callee is a dotted name, resolved through the imports, in source order."""
    aliases = _aliases(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func)
        if dotted is None:
            continue
        head, _, rest = dotted.partition(".")
        if head in aliases:
            dotted = aliases[head] + (f".{rest}" if rest else "")
        found.append(ResolvedCall(dotted, node))
    found.sort(key=lambda call: (call.node.lineno, call.node.col_offset))
    return found
