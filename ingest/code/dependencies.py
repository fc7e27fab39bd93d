"""What code needs to run: packages from its imports and the runtime versions its syntax implies."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator, Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from metisgraph.ingest.code.model import Requirement

__all__ = ["packages_for_imports", "pin_to_environment", "python_runtime", "runtime_requirement"]

# Import names that differ from the distribution that provides them.
_DISTRIBUTIONS = {
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "yaml": "pyyaml",
    "cv2": "opencv-python",
    "PIL": "pillow",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "pyjwt",
    "Crypto": "pycryptodome",
    "OpenSSL": "pyopenssl",
    "attr": "attrs",
    "MySQLdb": "mysqlclient",
    "zmq": "pyzmq",
    "serial": "pyserial",
    "usb": "pyusb",
    "git": "gitpython",
    "magic": "python-magic",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "gi": "pygobject",
    "win32api": "pywin32",
    "win32con": "pywin32",
    "kafka": "kafka-python",
    "ldap": "python-ldap",
    "Levenshtein": "levenshtein",
    "fitz": "pymupdf",
    "multipart": "python-multipart",
    "jose": "python-jose",
    "slugify": "python-slugify",
    "telegram": "python-telegram-bot",
    "websocket": "websocket-client",
    "sentence_transformers": "sentence-transformers",
    "tree_sitter": "tree-sitter",
    "pkg_resources": "setuptools",
    "faiss": "faiss-cpu",
    "umap": "umap-learn",
    "Bio": "biopython",
    "nacl": "pynacl",
    "snappy": "python-snappy",
    "markdown_it": "markdown-it-py",
    "ruamel": "ruamel.yaml",
}
_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
# Standard modules that appeared (≥) or went away (<) in a given Python version.
_MODULE_RUNTIME = {
    "tomllib": ">=3.11",
    "zoneinfo": ">=3.9",
    "graphlib": ">=3.9",
    "dataclasses": ">=3.7",
    "contextvars": ">=3.7",
    "distutils": "<3.12",
    "imp": "<3.12",
    "asynchat": "<3.12",
    "asyncore": "<3.12",
    "smtpd": "<3.12",
    "cgi": "<3.13",
    "cgitb": "<3.13",
    "crypt": "<3.13",
    "pipes": "<3.13",
    "telnetlib": "<3.13",
    "nntplib": "<3.13",
    "imghdr": "<3.13",
    "sndhdr": "<3.13",
}
_METHOD_RUNTIME = {"removeprefix": ">=3.9", "removesuffix": ">=3.9", "is_relative_to": ">=3.9"}


def packages_for_imports(imports: Iterable[str]) -> tuple[Requirement, ...]:
    """Third-party distributions behind Python imports; the standard library and relative
    imports need nothing."""
    names: dict[str, None] = {}
    for module in imports:
        top = module.split(".")[0]
        if not top or module.startswith(".") or top in _STDLIB:
            continue
        names[canonicalize_name(_distribution(module))] = None
    return tuple(Requirement(name) for name in names)


def _distribution(module: str) -> str:
    parts = module.split(".")
    if parts[0] == "google" and len(parts) > 1:
        # google.protobuf → protobuf; google.cloud.storage → google-cloud-storage
        return "protobuf" if parts[1] == "protobuf" else "-".join(parts[:3])
    return _DISTRIBUTIONS.get(parts[0], parts[0])


def python_runtime(tree: ast.Module, imports: Iterable[str]) -> Requirement | None:
    """The Python versions a module can run on, judged from its syntax and standard imports."""
    specs = list(_syntax_specs(tree))
    specs += [
        _MODULE_RUNTIME[m.split(".")[0]] for m in imports if m.split(".")[0] in _MODULE_RUNTIME
    ]
    return runtime_requirement("python", specs)


def runtime_requirement(runtime: str, specs: Iterable[str]) -> Requirement | None:
    """Fold specifiers into the tightest lower and upper bound: `>=3.8`, `>=3.10` → `>=3.10`."""
    lower: Version | None = None
    upper: Version | None = None
    for spec in specs:
        op, version = (">=", spec[2:]) if spec.startswith(">=") else ("<", spec[1:])
        parsed = Version(version)
        if op == ">=" and (lower is None or parsed > lower):
            lower = parsed
        if op == "<" and (upper is None or parsed < upper):
            upper = parsed
    parts = ([f">={lower}"] if lower else []) + ([f"<{upper}"] if upper else [])
    return Requirement(runtime, ",".join(parts)) if parts else None


def _syntax_specs(tree: ast.Module) -> Iterator[str]:
    # With postponed evaluation, `int | None` in an annotation is never evaluated.
    lazy = any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(alias.name == "annotations" for alias in node.names)
        for node in tree.body
    )
    for node in ast.walk(tree):
        yield from _node_specs(node)
        if not lazy and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _annotation_specs(node)


def _node_specs(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.NamedExpr):
        yield ">=3.8"
    elif isinstance(node, ast.Match):
        yield ">=3.10"
    elif isinstance(node, ast.TryStar):
        yield ">=3.11"
    elif isinstance(node, ast.arguments) and node.posonlyargs:
        yield ">=3.8"
    elif isinstance(node, ast.JoinedStr):
        yield ">=3.6"
    elif isinstance(node, ast.AsyncFunctionDef | ast.Await) or (
        isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)
    ):
        yield ">=3.5"
    elif isinstance(node, ast.Attribute) and node.attr in _METHOD_RUNTIME:
        yield _METHOD_RUNTIME[node.attr]


def _annotation_specs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[str]:
    """`int | None` in a signature is evaluated at definition time from Python 3.10 on."""
    args = fn.args
    every = (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg)
    annotations = [a.annotation for a in every if a is not None and a.annotation is not None]
    annotations += [fn.returns] if fn.returns else []
    for annotation in annotations:
        for sub in ast.walk(annotation):
            if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.BitOr):
                yield ">=3.10"
            elif isinstance(sub, ast.Subscript) and _dotted_name(sub.value) in _BUILTIN_GENERICS:
                yield ">=3.9"


_BUILTIN_GENERICS = frozenset({"list", "dict", "set", "tuple", "frozenset", "type"})


def _dotted_name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def pin_to_environment(
    requires: Iterable[Requirement], packages: Mapping[str, str]
) -> tuple[Requirement, ...]:
    """Give unversioned packages the range they were verified in: pandas 1.5.3 → `>=1.5.3,<2`.

    Versions below 1 are bounded at the next minor release, as semantic versioning reads them.
    """
    installed = {canonicalize_name(name): version for name, version in packages.items()}
    pinned = []
    for requirement in requires:
        version = installed.get(canonicalize_name(requirement.name))
        if requirement.spec is None and version is not None:
            requirement = Requirement(requirement.name, _verified_range(version))
        pinned.append(requirement)
    return tuple(pinned)


def _verified_range(version: str) -> str | None:
    try:
        parsed = Version(version)
    except InvalidVersion:
        return None
    major, minor = parsed.major, parsed.minor
    ceiling = f"{major + 1}" if major > 0 else f"0.{minor + 1}"
    spec = f">={parsed.base_version},<{ceiling}"
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    return spec
