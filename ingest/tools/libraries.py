"""Libraries that code imports (Python, Java, JavaScript; the added lines of patches too),
the standard library and the platform left out.
"""

from __future__ import annotations

import ast
import re

from metisgraph.ingest.code.python_analysis import parse_source
from metisgraph.ingest.tools.uses import ToolUse, dedupe

__all__ = ["libraries_in_code"]

# Modules so common they say nothing about what was done (os, sys, re, json …).
_COMMON_PYTHON = frozenset(
    {
        "__future__", "os", "sys", "re", "json", "typing", "typing_extensions", "collections",
        "itertools", "functools", "dataclasses", "pathlib", "abc", "enum", "math", "time",
        "datetime", "io", "string", "copy", "types", "warnings", "contextlib", "operator",
        "random", "textwrap", "glob", "shutil", "tempfile", "argparse", "logging", "builtins",
        "pprint", "uuid", "base64", "struct", "numbers", "heapq", "bisect", "weakref",
        "keyword", "codecs", "locale", "errno", "stat", "site", "inspect", "traceback",
    }
)  # fmt: skip
_COMMON_NODE = frozenset({"fs", "path", "os", "util", "events", "url", "buffer", "process"})
_JAVA_PLATFORM = ("java.", "javax.swing.", "javax.annotation.", "jdk.", "sun.")
_JAVA_ROOTS = frozenset({"org", "com", "net", "io", "edu", "de", "fr", "uk", "ch", "nl", "dev"})

_PY_IMPORT = re.compile(
    r"^[+ ]?[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b"
    r"|import[ \t]+([A-Za-z_][\w.]*(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*"
    r"(?:[ \t]+as[ \t]+\w+)?)*)[ \t]*(?:#.*)?$)",
    re.MULTILINE,
)
_JAVA_IMPORT = re.compile(
    r"^[+ ]?[ \t]*import[ \t]+(?:static[ \t]+)?([\w.]+?)(?:\.\*)?[ \t]*;", re.M
)
_JS_IMPORT = re.compile(
    r"\brequire\(\s*['\"]([^'\"\s]+)['\"]\s*\)"
    r"|^[+ ]?[ \t]*(?:import|export)[ \t]+(?:[^'\";]*?[ \t]+from[ \t]+)?['\"]([^'\"\s]+)['\"]"
    r"|\bimport\(\s*['\"]([^'\"\s]+)['\"]\s*\)",
    re.MULTILINE,
)


def _python_modules(code: str) -> list[str] | None:
    """Top-level modules imported by Python code, or None when it does not parse."""
    tree = parse_source(code)
    if tree is None:
        return None
    modules: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module)
    return modules


def _python_library(module: str) -> str | None:
    top = module.split(".")[0]
    return None if top in _COMMON_PYTHON else top.lower()


def _java_library(name: str) -> str | None:
    """``org.apache.hadoop.fs.FileSystem`` → ``org.apache.hadoop``; the JDK is left out."""
    if name.startswith(_JAVA_PLATFORM):
        return None
    parts = name.split(".")
    classes = [i for i, part in enumerate(parts) if part[:1].isupper()]
    package = parts[: classes[0]] if classes else parts[:-1]
    if not package:
        return None
    if package[0] in _JAVA_ROOTS:
        return ".".join(package[:3])
    if package[0] in {"javax", "jakarta"}:
        return ".".join(package[:2])
    return package[0]


def _js_library(specifier: str) -> str | None:
    """``@scope/pkg/sub`` → ``@scope/pkg``; relative paths and Node built-ins are left out."""
    if specifier.startswith((".", "/", "node:")):
        return None
    parts = specifier.split("/")
    name = "/".join(parts[:2]) if specifier.startswith("@") else parts[0]
    return None if name in _COMMON_NODE else name.lower()


def libraries_in_code(code: str, language: str | None = None) -> list[ToolUse]:
    """Libraries imported by code (Python, Java, JavaScript; patches' added lines too)."""
    names: list[str | None] = []
    modules = _python_modules(code) if language in {None, "python"} else None
    if modules is not None:
        names = [_python_library(m) for m in modules]
    else:
        if language in {None, "python"}:
            for match in _PY_IMPORT.finditer(code):
                found = match.group(1) or match.group(2)
                parts = (p.split()[0] for p in found.split(","))
                names += [_python_library(p) for p in parts]
        if language in {None, "java"}:
            names += [_java_library(m.group(1)) for m in _JAVA_IMPORT.finditer(code)]
        if language in {None, "javascript", "typescript"}:
            names += [
                _js_library(next(g for g in m.groups() if g)) for m in _JS_IMPORT.finditer(code)
            ]
    return dedupe(ToolUse(name, "library") for name in names if name)
