"""Code locations an episode is about: classes, modules and files named in traces, patches, text.

Two memories about the same class are related whatever their words: a failing test's
trace names ``CategoryPlot``; the past fix that changed ``CategoryPlot.java`` is the
memory to recall. Symbols are normalised so both sides meet:

* a Java-like class (``org.jfree.chart.plot.CategoryPlot``, ``CategoryPlot.java``) is its
  simple name, ``CategoryPlot``;
* a test class or module also names its subject by the common convention
  (``CategoryPlotTests`` / ``TestCategoryPlot`` -> ``CategoryPlot``, ``test_query.py`` ->
  ``query``);
* a Python module is its last two dotted parts (``django/db/models/query.py`` ->
  ``models.query``), other source files their last two path parts (``src/parser.c``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from metisgraph.ingest.errors import ErrorSignature

__all__ = ["code_symbols", "symbols_of_path", "symbols_of_qualified_name"]

_CLASS_FILE = re.compile(r"\.(java|kt|kts|scala|groovy|cs|swift)$")
_PYTHON_FILE = re.compile(r"\.pyi?$")
_SOURCE_FILE = re.compile(r"\.(c|cc|cpp|cxx|h|hpp|go|rs|js|jsx|ts|tsx|rb|php|m|mm)$")
_PATCH_PATH = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)|^diff --git a/(\S+) b/", re.MULTILINE)
_QUALIFIED = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.){2,}[A-Z][A-Za-z0-9_]*\b")
_PATH = re.compile(r"(?:[\w.-]+/)+[\w.-]+\.[A-Za-z]{1,5}\b")
_TEST_AFFIX = re.compile(r"^(?:Test)(?=[A-Z])|(?<=[a-z0-9])(?:Tests?|TestCase|Spec|IT)$")
# Runtime and test-framework namespaces name where code ran, not what it is about.
_PLATFORM = (
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "kotlin.",
    "scala.",
    "junit.",
    "org.junit.",
    "org.testng.",
    "org.apache.tools.ant.",
    "android.",
    "dalvik.",
)
_GENERIC = {"__init__", "__main__", "index", "main", "utils", "util", "test", "tests", "conftest"}
_MAX = 64


def _class_names(name: str) -> list[str]:
    out = [name]
    subject = _TEST_AFFIX.sub("", name)
    if subject and subject != name:
        out.append(subject)
    return out


def symbols_of_qualified_name(name: str) -> list[str]:
    """``org.x.Foo`` -> [Foo]; ``org.x.FooTests`` -> [FooTests, Foo]; ``a.b.mod`` -> [b.mod]."""
    parts = [p for p in name.replace("$", ".").split(".") if p]
    if not parts:
        return []
    classes = [p for p in parts if p[:1].isupper()]
    if classes:
        return _class_names(classes[0])
    module = [p for p in parts if p not in _GENERIC] or parts
    tail = ".".join(module[-2:])
    return [tail] + ([module[-1].removeprefix("test_")] if module[-1].startswith("test_") else [])


def symbols_of_path(path: str) -> list[str]:
    """The symbols a source file path stands for (nothing for non-code files)."""
    path = path.strip().strip("\"'")
    name = path.rsplit("/", 1)[-1]
    if _CLASS_FILE.search(name):
        return _class_names(name.rsplit(".", 1)[0])
    if _PYTHON_FILE.search(name):
        parts = [p for p in path.rsplit(".", 1)[0].split("/") if p and p not in (".", "..")]
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        parts = [p for p in parts if p not in ("src", "lib", "testbed")]
        if not parts:
            return []
        stem = parts[-1]
        out = [".".join(parts[-2:])]
        for affix in ("test_", "tests_"):
            if stem.startswith(affix):
                out.append(stem.removeprefix(affix))
        if stem.endswith("_test"):
            out.append(stem.removesuffix("_test"))
        return out
    if _SOURCE_FILE.search(name):
        return ["/".join(path.split("/")[-2:])]
    return []


def code_symbols(
    texts: Iterable[str | None], errors: Iterable[ErrorSignature] = (), patches: Iterable[str] = ()
) -> list[str]:
    """Every symbol named in the texts, the errors' own-code frames and the patches' files."""
    found: dict[str, None] = {}

    def add(names: Iterable[str]) -> None:
        for name in names:
            if len(found) < _MAX and 2 <= len(name) <= 200:
                found.setdefault(name)

    for error in errors:
        for symbol in error.symbols:
            add(symbols_of_qualified_name(symbol))
    for patch in patches:
        for match in _PATCH_PATH.finditer(patch):
            path = match.group(1) or match.group(2)
            if path and path != "/dev/null":
                add(symbols_of_path(path))
    for text in texts:
        if not text:
            continue
        for match in _QUALIFIED.finditer(text):
            if not match.group(0).startswith(_PLATFORM):
                add(symbols_of_qualified_name(match.group(0)))
        for match in _PATH.finditer(text):
            add(symbols_of_path(match.group(0)))
    return list(found)
