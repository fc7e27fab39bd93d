"""Stack traces of exceptions: Python tracebacks, and JVM, .NET and Node.js traces.

Each finder reads the lines of a block of text and returns one sighting per
trace, with the root cause as its kind and the chain from the outermost wrapper
to the root cause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from metisgraph.ingest.errors.frames import (
    claim_project_frames,
    dotnet_frame,
    jvm_frame,
    jvm_library,
    node_frame,
    python_frame,
)
from metisgraph.ingest.errors.sightings import Frame, Sighting, scan

__all__ = ["JVM_FRAME", "PYTHON_FRAME", "find_exception_traces", "find_python_tracebacks"]

# --- Python -----------------------------------------------------------------

_TRACEBACK = re.compile(r"^(\s*)Traceback \(most recent call last\):\s*$")
_PY_FILE = re.compile(r'^\s+File "(?P<path>[^"]+)", line \d+(?:, in (?P<func>\S.*?))?\s*$')
_PY_EXCEPTION = re.compile(r"^(?P<cls>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$")
_PY_CHAIN = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)


# A syntax error in the script run is printed without a "Traceback" line.
_SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def _section_start(lines: list[str], i: int) -> tuple[int, int, bool] | None:
    """(first line to read, indentation of the block, headless) for a traceback at line ``i``."""
    header = _TRACEBACK.match(lines[i])
    if header is not None:
        return i + 1, len(header.group(1)), False
    if _PY_FILE.match(lines[i]) and ", in " not in lines[i]:
        lead = len(lines[i]) - len(lines[i].lstrip())
        return i, max(0, lead - 2), True
    return None


def _python_section(lines: list[str], i: int) -> tuple[str, str, list[Frame], int] | None:
    """One traceback from its first line: (class, message, frames innermost first, end)."""
    start = _section_start(lines, i)
    if start is None:
        return None
    j, indent, headless = start
    frames: list[Frame] = []
    while j < len(lines):
        line = lines[j][indent:]
        if not line.strip():
            return None  # a traceback cut short: no exception line
        if line[0].isspace():
            found = _PY_FILE.match(line)
            if found:
                frames.append(python_frame(found["path"], found["func"] or "<module>"))
            j += 1
            continue
        exception = _PY_EXCEPTION.match(line.rstrip())
        if exception is None or (headless and not exception["cls"].endswith(_SYNTAX_ERRORS)):
            return None
        frames.reverse()
        return exception["cls"], (exception["msg"] or "").strip(), frames, j + 1
    return None


_MESSAGE_TAIL = 10  # lines an exception message (DETAIL:, HINT:, …) may run on for


def _next_chained(lines: list[str], end: int) -> int | None:
    """Index of the next chained ``Traceback`` line after a section, if the chain goes on."""
    j = end
    while j < min(end + _MESSAGE_TAIL, len(lines)) and lines[j].strip() not in _PY_CHAIN:
        if _TRACEBACK.match(lines[j]):
            return None
        j += 1
    if j >= len(lines) or lines[j].strip() not in _PY_CHAIN:
        return None
    j += 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    return j if j < len(lines) and _TRACEBACK.match(lines[j]) else None


def _python_trace(lines: list[str], i: int) -> Sighting | None:
    sections: list[tuple[str, str, list[Frame], int]] = []
    start: int | None = i
    while start is not None:
        section = _python_section(lines, start)
        if section is None:
            break
        sections.append(section)
        start = _next_chained(lines, section[3])
    if not sections:
        return None
    # Printed order runs from the first exception (the root cause) to the last one raised.
    root_cls, root_msg = sections[0][0], sections[0][1]
    frames = [frame for section in sections for frame in section[2]]
    symbols = [f.symbol for section in sections for f in reversed(section[2]) if f.own]
    return Sighting(
        category="python",
        kind=f"python:{root_cls}",
        message=root_msg,
        start=i,
        end=sections[-1][3],
        frames=frames,
        chain=[f"python:{s[0]}" for s in reversed(sections)],
        symbols=symbols,
    )


def _python_start(lines: list[str], i: int) -> Sighting | None:
    line = lines[i]
    if "Traceback (most recent call last)" in line:
        return _python_trace(lines, i)
    # A headless block starts after an unindented line; inside a block, File lines follow others.
    if line.startswith('  File "') and (i == 0 or not lines[i - 1][:1].isspace()):
        return _python_trace(lines, i)
    return None


def find_python_tracebacks(lines: list[str], candidates: Iterable[int]) -> list[Sighting]:
    """Every Python traceback, chained tracebacks folded into one sighting."""
    return scan(lines, candidates, _python_start)


# --- exception-first traces: JVM, .NET, Node.js --------------------------------

_HEADLINE = re.compile(
    r"^\s*(?P<prefix>Exception in thread \"[^\"]*\"\s+|Caused by:\s+|Unhandled [Ee]xception[.:]?\s+"
    r"|Uncaught\s+)?"
    r"(?P<cls>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:\s*\[(?P<code>[A-Z][A-Z0-9_]+)\])?"
    r"(?::\s?(?P<msg>.*?))?\s*$"
)
# A logger may print its own prefix on the exception's line: "… ERROR Foo - java.io.IOException: x".
_PREFIXED_HEADLINE = re.compile(
    r"(?:^|\s)(?P<cls>(?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable))"
    r"(?::\s?(?P<msg>.*?))?\s*$"
)
_ERROR_CLASS = re.compile(r"(?:Error|Exception|Failure|Throwable)$")
_JVM_AT = re.compile(
    r"^\s*at (?P<method>[\w$./<>-]+)\((?P<src>(?:[\w$-]+\.(?:java|kt|kts|scala|groovy|clj|cljc)"
    r"|Native Method|Unknown Source|SourceFile|[\w$-]+)(?::\d+)?)\)"
)
# The frame lines as the trace parsers read them, for whoever else needs to spot one.
JVM_FRAME, PYTHON_FRAME = _JVM_AT, _PY_FILE
_JVM_ELIDED = re.compile(r"^\s*\.\.\. \d+ (?:more|common frames omitted)")
_DOTNET_AT = re.compile(
    r"^\s*at (?P<method>[\w.`<>\[\],|+]+)\((?P<args>[^)]*)\)(?: in (?P<file>.+):line \d+)?\s*$"
)
_DOTNET_INNER = re.compile(r"\s*--->\s*")
_NODE_AT = re.compile(
    r"^\s*at (?:(?P<func>[^()]+?) \((?P<loc>[^()]+)\)|(?P<bare>\S+:\d+(?::\d+)?))\s*$"
)
_LOCATION = re.compile(r":\d+(?::\d+)?$")
_MAX_MESSAGE_LINES = 3  # a message may run over a few lines before the first frame
# ... and over many when the headline names an exception class outright (assertion diffs).
_MAX_LONG_MESSAGE_LINES = 200
_QUALIFIED_ERROR = re.compile(
    r"^\s*(?:Exception in thread \"[^\"]*\"\s+|Caused by:\s+)?(?:[a-z_][\w$]*\.)+[A-Z][\w$]*"
    r"(?:Exception|Error|Failure|Throwable)(?::|\s*$)"
)

Section = tuple[str, str, list[Frame]]


def _is_at(line: str) -> bool:
    return line.lstrip().startswith("at ")


def _first_frame(lines: list[str], i: int) -> int | None:
    """The first ``at …`` line after a headline, allowing for a message over several lines."""
    qualified = bool(_QUALIFIED_ERROR.match(lines[i]))
    window = _MAX_LONG_MESSAGE_LINES if qualified else _MAX_MESSAGE_LINES
    for j in range(i + 1, min(i + 2 + window, len(lines))):
        if _is_at(lines[j]):
            return j
        if (
            qualified
            and _QUALIFIED_ERROR.match(lines[j])
            and not lines[j].lstrip().startswith("Caused")
        ):
            return None  # another exception begins: this one was printed without frames
    return None


def _jvm_trace(lines: list[str], i: int, first: int, headline: re.Match[str]) -> Sighting:
    sections: list[Section] = [(headline["cls"], headline["msg"] or "", [])]
    symbols = [] if jvm_library(headline["cls"]) else [headline["cls"]]
    suppressed_indent: int | None = None
    since_headline = 0
    j = first  # lines before the first frame continue the message
    while j < len(lines):
        line = lines[j]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        frame = _JVM_AT.match(line)
        if suppressed_indent is not None and indent > suppressed_indent and stripped:
            j += 1  # a suppressed exception is beside the causal chain, not in it
            continue
        if stripped.startswith("Suppressed: "):
            suppressed_indent = indent
        elif stripped.startswith(("Caused by: ", "Wrapped by: ")):
            suppressed_indent = None
            cause = _HEADLINE.match(stripped.split(": ", 1)[1])
            if cause is not None:
                sections.append((cause["cls"], cause["msg"] or "", []))
                symbols += [] if jvm_library(cause["cls"]) else [cause["cls"]]
                since_headline = 0
        elif frame is not None:
            suppressed_indent = None
            parsed = jvm_frame(frame["method"])
            sections[-1][2].append(parsed)
            symbols += [parsed.symbol] if parsed.own else []
        elif not _JVM_ELIDED.match(line):
            if not stripped or sections[-1][2] or since_headline >= _MAX_MESSAGE_LINES:
                break
            since_headline += 1  # the message goes on over another line
        j += 1
    sections = [(cls, msg, claim_project_frames(frames)) for cls, msg, frames in sections]
    claimed = [f.symbol for _, _, frames in sections for f in frames if f.own]
    return _chain_sighting("java", "", sections, i, j, list(dict.fromkeys(symbols + claimed)))


def _dotnet_trace(lines: list[str], i: int) -> Sighting:
    sections: list[Section] = []
    for part in _DOTNET_INNER.split(lines[i].strip()):
        found = _HEADLINE.match(part)
        if found is not None:
            sections.append((found["cls"], found["msg"] or "", []))
    symbols: list[str] = []
    j = i + 1
    while j < len(lines):
        frame = _DOTNET_AT.match(lines[j])
        if frame is not None:
            parsed = dotnet_frame(frame["method"])
            sections[-1][2].append(parsed)
            symbols += [parsed.symbol] if parsed.own else []
        elif not lines[j].strip().startswith("--- End of"):
            break
        j += 1
    return _chain_sighting("dotnet", "dotnet:", sections, i, j, symbols)


def _node_trace(lines: list[str], i: int, first: int, headline: re.Match[str]) -> Sighting:
    frames: list[Frame] = []
    j = first
    while j < len(lines) and _is_at(lines[j]):
        frame = _NODE_AT.match(lines[j])
        location = frame and (frame["loc"] or frame["bare"])
        if frame is not None and location and _LOCATION.search(location):
            frames.append(node_frame(frame["func"], location))
        j += 1
    kind = headline["code"] or headline["cls"]
    symbols = [f.symbol for f in frames if f.own]
    return _chain_sighting("node", "node:", [(kind, headline["msg"] or "", frames)], i, j, symbols)


def _chain_sighting(
    category: str, prefix: str, sections: list[Section], start: int, end: int, symbols: list[str]
) -> Sighting:
    """Sections run from the outermost exception to the root cause."""
    root = sections[-1]
    return Sighting(
        category=category,
        kind=f"{prefix}{root[0]}",
        message=root[1].strip(),
        start=start,
        end=end,
        frames=[frame for section in reversed(sections) for frame in section[2]],
        chain=[f"{prefix}{s[0]}" for s in sections],
        symbols=symbols,
    )


def _exception_trace(lines: list[str], i: int, first: int) -> Sighting | None:
    headline = _HEADLINE.match(lines[i])
    if headline is None and _JVM_AT.match(lines[first]):
        headline = _PREFIXED_HEADLINE.search(lines[i])
        return _jvm_trace(lines, i, first, headline) if headline is not None else None
    if headline is None or (headline["prefix"] or "").startswith("Caused"):
        return None
    named = "." in headline["cls"] or bool(headline["prefix"])
    if not (named or _ERROR_CLASS.search(headline["cls"])):
        return None  # a plain word before "at" lines is prose, not an exception
    if named and _JVM_AT.match(lines[first]):
        return _jvm_trace(lines, i, first, headline)
    if first == i + 1 and _DOTNET_AT.match(lines[first]):
        return _dotnet_trace(lines, i)
    if _NODE_AT.match(lines[first]):
        return _node_trace(lines, i, first, headline)
    return None


def _exception_start(lines: list[str], i: int) -> Sighting | None:
    first = None if _is_at(lines[i]) else _first_frame(lines, i)
    return _exception_trace(lines, i, first) if first is not None else None


def find_exception_traces(lines: list[str], candidates: Iterable[int]) -> list[Sighting]:
    """Every JVM, .NET and Node.js trace: a headline followed by ``at …`` frames."""
    return scan(lines, candidates, _exception_start)
