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
from collections.abc import Iterable, Iterator

from metisgraph.ingest.errors.signatures import ErrorSignature
from metisgraph.ingest.long_runs import without_long_runs

__all__ = [
    "CHANGED",
    "FRAME",
    "NAMED",
    "code_symbols",
    "question_symbols",
    "symbol_weights",
    "symbols_of_path",
    "symbols_of_qualified_name",
]

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
# Weights of a symbol by where it was found (measured on trace-to-fix recall; docs/recall.md).
CHANGED = 1.0  # a file the memory's patch changed
NAMED = 1.0  # named in the memory's own words (title, summary, command) or the question's
FRAME = 0.3  # the innermost own-code frame of the memory's error
FRAME_DECAY = 0.85  # each frame further out
TRACE_TEXT = 0.5  # of FRAME: named in a trace's text but in no parsed frame
QUESTION_FRAME_DECAY = 0.8  # the question's frames: 1.0 for the innermost, then this per frame
QUESTION_TRACE_TEXT = 0.5  # named in the question's error text but in no parsed frame


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


def _named_in(text: str) -> Iterator[str]:
    text = without_long_runs(text)  # a run past any name's length would cost its square
    for match in _QUALIFIED.finditer(text):
        if not match.group(0).startswith(_PLATFORM):
            yield from symbols_of_qualified_name(match.group(0))
    for match in _PATH.finditer(text):
        yield from symbols_of_path(match.group(0))


def _changed_by(patch: str) -> Iterator[str]:
    for match in _PATCH_PATH.finditer(patch):
        path = match.group(1) or match.group(2)
        if path and path != "/dev/null":
            yield from symbols_of_path(path)


class _Weights:
    """Symbols with the largest weight each was found with, up to _MAX of them."""

    def __init__(self) -> None:
        self.found: dict[str, float] = {}

    def add(self, names: Iterable[str], weight: float, *, keep: bool = False) -> None:
        """Add names; one found before keeps the larger weight (or its own, with ``keep``)."""
        for name in names:
            if not 2 <= len(name) <= 200:
                continue
            if name in self.found:
                if not keep:
                    self.found[name] = max(self.found[name], weight)
            elif len(self.found) < _MAX:
                self.found[name] = weight

    def add_frames(self, errors: Iterable[ErrorSignature], first: float, decay: float) -> None:
        """Each error's own-code symbols, innermost first: the nearer the fault, the more weight."""
        for error in errors:
            for depth, symbol in enumerate(error.symbols):
                self.add(symbols_of_qualified_name(symbol), first * decay**depth)


def symbol_weights(
    named: Iterable[str | None],
    errors: Iterable[ErrorSignature] = (),
    patches: Iterable[str] = (),
    traces: Iterable[str | None] = (),
) -> dict[str, float]:
    """What a memory is about, each symbol weighted by where it was found.

    A file its patch changed (CHANGED) or a name its own words use (NAMED: title, summary,
    command) is what the memory is about; a class its error's trace passed through is
    weaker evidence (FRAME, less with each frame further from the fault), and a name
    found elsewhere in a trace's text weaker still.
    """
    weights = _Weights()
    errors = list(errors)
    for patch in patches:
        weights.add(_changed_by(patch), CHANGED)
    for text in named:
        weights.add(_named_in(text or ""), NAMED)
    weights.add_frames(errors, FRAME, FRAME_DECAY)
    for text in traces:
        weights.add(_named_in(text or ""), FRAME * TRACE_TEXT)
    return weights.found


def question_symbols(
    text: str, error: str | None, errors: Iterable[ErrorSignature]
) -> dict[str, float]:
    """The symbols of a question, weighted like a memory's: named ones first, then frames.

    The innermost own frames of its errors weigh most (where a fault shows, it usually
    is) and keep their order even when the trace was pasted into the question; other
    names in the question count as named, those in its error text outside any frame (a
    failing test's header) less.
    """
    weights = _Weights()
    weights.add_frames(errors, 1.0, QUESTION_FRAME_DECAY)
    weights.add(_named_in(text), NAMED, keep=True)
    weights.add(_named_in(error or ""), QUESTION_TRACE_TEXT, keep=True)
    return weights.found


def code_symbols(
    texts: Iterable[str | None], errors: Iterable[ErrorSignature] = (), patches: Iterable[str] = ()
) -> list[str]:
    """Every symbol named in the texts, the errors' own-code frames and the patches' files."""
    return list(symbol_weights(texts, errors, patches))
