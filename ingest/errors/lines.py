"""Errors that fit on one line without a code: an exception printed alone, a failed
test in pytest's summary, a compiler diagnostic, a log line at an error level."""

from __future__ import annotations

import re

from metisgraph.ingest.errors.frames import python_frame, python_module
from metisgraph.ingest.errors.sightings import Frame, Sighting

__all__ = ["compiler_error", "exception_line", "level_error", "looks_like_code", "pytest_failure"]

# A line of source code (a statement, an assignment, a comment) names errors without having one:
# ``raise HTTPException(status_code=404)``, ``ERROR = 40``, ``# handle 503 Service Unavailable``.
_CODE_LINE = re.compile(
    r"^\s*(?:(?:raise|return|if|elif|while|for|assert|def|class|import|from|except|try|catch|throw"
    r"|const|let|var|case|yield|await|lambda|with|public|private|protected|static|func|fn)\b"
    r"|#|//|/\*|\*\s|[\w.\[\]'\"]+ [-+*/]?= )"
)


def looks_like_code(line: str) -> bool:
    """True for a line of source code rather than output."""
    return bool(_CODE_LINE.match(line))


_ERROR_SUFFIX = r"(?:Error|Exception|Exit|Interrupt|Timeout|Failure|Violation|Throwable)"
# At most two spaces of indentation: deeper, "ValueError: when …" is a docstring's Raises section.
_OWN_LINE_EXCEPTION = re.compile(
    r"^ {0,2}(?:Exception in thread \"[^\"]*\"\s+|Unhandled exception\.\s+|Uncaught\s+)?"
    rf"(?P<cls>(?:[A-Za-z_][\w$]*\.)*[A-Z][\w$]*?{_ERROR_SUFFIX})(?::\s*(?P<msg>.*?))?\s*$"
)
# A JVM or .NET exception with its message is distinctive enough to find inside a longer log
# line ("… ERROR OrderService - java.io.IOException: Broken pipe").
_QUALIFIED_EXCEPTION = re.compile(
    r"(?<![\w.$])(?P<cls>(?:java|javax|jakarta|kotlin|kotlinx|scala|org|com|io|net|android|System"
    r"|Microsoft)\.(?:[A-Za-z_][\w$]*\.)*[A-Z][\w$]*(?:Exception|Error)):\s+(?P<msg>\S.*?)\s*$"
)
_JVM_ROOTS = (
    "java.", "javax.", "jakarta.", "kotlin.", "kotlinx.", "scala.", "org.", "com.", "io.", "net.",
    "junit.",
    "android.", "androidx.", "dalvik.", "sun.", "jdk.", "groovy.",
)  # fmt: skip
_DOTNET_ROOTS = ("System.", "Microsoft.")


def _classify(cls: str) -> tuple[str, str]:
    """(category, kind) of an exception class by the naming habits of each runtime."""
    if cls.startswith(_DOTNET_ROOTS):
        return "dotnet", f"dotnet:{cls}"
    if cls.startswith(_JVM_ROOTS):
        return "java", cls
    return "python", f"python:{cls}"


def exception_line(line: str, index: int) -> Sighting | None:
    """An exception printed without a trace: ``KeyError: 'x'``, ``java.lang.OutOfMemoryError``."""
    found = _OWN_LINE_EXCEPTION.match(line) or _QUALIFIED_EXCEPTION.search(line)
    if found is None:
        return None
    category, kind = _classify(found["cls"])
    return Sighting(category, kind, found["msg"] or "", index, index + 1, chain=[kind])


_PYTEST = re.compile(
    r"^(?P<outcome>FAILED|ERROR) (?P<path>\S+?\.py)(?:::(?P<test>[^\s\[]+(?:\[[^\]]*\])?))?"
    r"(?: - (?P<reason>.*))?\s*$"
)
# Warnings count too: under -W error a warning fails the test.
_REASON = re.compile(rf"^(?P<cls>[\w.]+?(?:{_ERROR_SUFFIX}|Failed|Warning))(?::\s*(?P<msg>.*))?$")


def pytest_failure(line: str, index: int) -> Sighting | None:
    """pytest's short summary: ``FAILED tests/test_x.py::test_y - KeyError: 'a'``."""
    found = _PYTEST.match(line)
    if found is None:
        return None
    reason = (found["reason"] or "").strip()
    parsed = _REASON.match(reason)
    if parsed:
        kind, message = f"python:{parsed['cls']}", parsed["msg"] or ""
    elif reason:
        kind, message = "python:AssertionError", reason  # a failed assert prints its expression
    else:
        kind, message = f"pytest:{found['outcome'].lower()}", ""  # the summary gave no reason
    test = re.sub(r"\[.*$", "", found["test"] or "").replace("::", ".")
    frames: list[Frame] = [python_frame(found["path"], test or "<module>")]
    return Sighting("python", kind, message, index, index + 1, frames, [kind], [frames[0].symbol])


_RUSTC = re.compile(r"^\s*error\[(?P<code>E\d{4})\]: (?P<msg>.*)$")
_CODED = re.compile(r"\berror (?P<code>(?P<tool>TS|CS|C|LNK)\d{4,5})\s*:\s*(?P<msg>.*)$")
_TOOLS = {"TS": "tsc", "CS": "csc", "C": "msvc", "LNK": "link"}
_DIAGNOSTIC = re.compile(
    # gcc, clang, javac, go vet: "file:12:5: error: …"; Maven's javac: "[ERROR] File.java:[12,5] …"
    r"^(?P<file>[^\s:]+\.\w+):\d+(?::\d+)?: (?:fatal )?error: (?P<msg>.*)$"
    r"|^\[ERROR\] (?P<mvn>\S+\.(?:java|kt|scala|groovy)):\[\d+(?:,\d+)?\] (?P<mvn_msg>.*)$"
    # go build prints no "error:" word: "./main.go:12:2: undefined: foo"
    r"|^(?P<go>\S+\.go):\d+:\d+: (?P<go_msg>\S.*)$"
)


def compiler_error(line: str, index: int) -> Sighting | None:
    """Compiler diagnostics: rustc ``error[E0382]``, tsc/csc/MSVC codes, ``file:line: error: …``."""
    if found := _RUSTC.match(line):
        kind = f"rustc:{found['code']}"
        return Sighting("rust", kind, found["msg"], index, index + 1, chain=[kind])
    if found := _CODED.search(line):
        kind = f"{_TOOLS[found['tool']]}:{found['code']}"
        return Sighting("log", kind, found["msg"], index, index + 1, chain=[kind])
    if found := _DIAGNOSTIC.match(line):
        path = found["file"] or found["mvn"] or found["go"]
        message = found["msg"] or found["mvn_msg"] or found["go_msg"]
        symbol = python_module(re.sub(r"\.\w+$", ".py", path))
        return Sighting(
            "log", "compile:error", message, index, index + 1, [], ["compile:error"], [symbol]
        )
    return None


_LEVEL_WORD = r"ERROR|FATAL|CRITICAL|SEVERE|PANIC|EMERG|ALERT|CRIT"
# The level word starts a token among the first few; "ERROR = 40" and "level=ERROR" are code.
_LEVEL = re.compile(
    rf"^(?:\S+\s+){{0,4}}?[\[<(]?(?P<level>{_LEVEL_WORD})[\]>)]?(?::|\s+|$)(?P<msg>(?!\s*[=(,)]).*)$"
)
# Tools print lower-case levels at the start of a line: "error: …", "fatal: …", "npm ERR! …".
_LOWER_LEVEL = re.compile(
    r"^(?:npm |yarn )?(?:(?P<level>error|fatal|Error|Fatal|E)(?:\[[^\]]*\])?:|(?P<bang>ERR!))"
    r" (?P<msg>\S.*)$"
)
_LEVELS = {"error": "error", "severe": "error", "err!": "error", "e": "error", "fatal": "fatal"}
_LEVELS |= {
    "panic": "fatal",
    "critical": "critical",
    "emerg": "critical",
    "alert": "critical",
    "crit": "critical",
}


# What build tools print at the error level after every failure: advice to the reader, not
# an error. As signatures they would link every failed build to every other one.
_ADVICE = re.compile(
    r"^(?:to see the full stack trace|re-?run (?:\w+ )?(?:with|using) the -\w switch"
    r"|for more information about the errors|after correcting the problems"
    r"|\[help \d+\](?:\s|$)|mvn <\w+>|a complete log of this run can be found"
    r"|this is probably not a problem with)",
    re.IGNORECASE,
)


def level_error(line: str, index: int) -> Sighting | None:
    """A log line at an error level: ``… ERROR [main] …``, ``error: …``, ``fatal: …``, ``E: …``."""
    found = _LEVEL.match(line) or _LOWER_LEVEL.match(line)
    if found is None:
        return None
    level = found["level"] or found.groupdict().get("bang") or ""
    message = found["msg"].strip()
    if not message or _ADVICE.match(message):
        return None  # "ERROR:" alone says nothing of which error; the lines below will
    kind = f"log:{_LEVELS[level.lower()]}"
    return Sighting("log", kind, message, index, index + 1, chain=[kind])
