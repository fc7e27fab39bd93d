"""Crashes: Go panics, Rust panics, and native (C, C++) crashes with their backtraces."""

from __future__ import annotations

import re
from collections.abc import Iterable

from metisgraph.ingest.errors.frames import go_frame, native_frame, rust_frame, rust_location
from metisgraph.ingest.errors.lines import looks_like_code
from metisgraph.ingest.errors.sightings import Frame, Sighting, scan

__all__ = ["find_go_panics", "find_native_crashes", "find_rust_panics"]

_LOOKAHEAD = 12  # lines a backtrace may start after the line that announced the crash

# --- Go -----------------------------------------------------------------------

_GO_PANIC = re.compile(r"^\s*(?P<what>panic|fatal error): (?P<msg>.+?)(?: \[recovered\])?\s*$")
_GO_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]]*\]:\s*$")
_GO_FUNC = re.compile(r"^(?P<func>\S.*)\((?P<args>[^()]*)\)\s*$")
_GO_FILE = re.compile(r"^\s+(?P<file>\S+?):\d+(?: \+0x[0-9a-f]+)?\s*$")


def _go_frames(lines: list[str], j: int) -> tuple[list[Frame], int]:
    """Frames of the first goroutine (the one that panicked), from its header line."""
    frames: list[Frame] = []
    j += 1
    while j + 1 < len(lines):
        func, file = _GO_FUNC.match(lines[j]), _GO_FILE.match(lines[j + 1])
        if func is None or file is None:
            break
        frames.append(go_frame(func["func"], file["file"]))
        j += 2
    while j < len(lines) and lines[j].startswith("created by "):
        j += 2 if j + 1 < len(lines) and _GO_FILE.match(lines[j + 1]) else 1
    return frames, j


def _go_panic(lines: list[str], i: int) -> Sighting | None:
    found = (
        _GO_PANIC.match(lines[i]) if "panic: " in lines[i] or "fatal error: " in lines[i] else None
    )
    if found is None:
        return None
    for j in range(i + 1, min(i + _LOOKAHEAD, len(lines))):
        if _GO_GOROUTINE.match(lines[j]):
            frames, end = _go_frames(lines, j)
            kind = "go:panic" if found["what"] == "panic" else "go:fatal"
            symbols = [f.symbol for f in frames if f.own]
            return Sighting("go", kind, found["msg"], i, end, frames, [kind], symbols)
    return None


def find_go_panics(lines: list[str], candidates: Iterable[int]) -> list[Sighting]:
    """Go panics and fatal runtime errors followed by a goroutine trace."""
    return scan(lines, candidates, _go_panic)


# --- Rust ---------------------------------------------------------------------

_RUST_PANIC = re.compile(r"^\s*thread '[^']*' panicked at (?P<rest>.+?)\s*$")
_RUST_OLD = re.compile(r"^'(?P<msg>.*)', (?P<loc>\S+?):\d+(?::\d+)?$")
_RUST_NEW = re.compile(r"^(?P<loc>\S+?):\d+(?::\d+)?:?$")
_RUST_FRAME = re.compile(r"^\s*\d+: (?P<func>\S.*?)\s*$")
_RUST_AT = re.compile(r"^\s+at (?P<file>.+?):\d+(?::\d+)?\s*$")


def _rust_backtrace(lines: list[str], j: int) -> tuple[list[Frame], int]:
    frames: list[Frame] = []
    while j < len(lines):
        frame = _RUST_FRAME.match(lines[j])
        if frame is None:
            break
        at = _RUST_AT.match(lines[j + 1]) if j + 1 < len(lines) else None
        frames.append(rust_frame(frame["func"], at["file"] if at else None))
        j += 2 if at else 1
    return frames, j


def _rust_panic(lines: list[str], i: int) -> Sighting | None:
    found = _RUST_PANIC.match(lines[i]) if "panicked at " in lines[i] else None
    if found is None:
        return None
    old, new = _RUST_OLD.match(found["rest"]), _RUST_NEW.match(found["rest"])
    end = i + 1
    if old is not None:
        message, location = old["msg"], old["loc"]
    elif new is not None:
        location = new["loc"]
        message = lines[i + 1].strip() if i + 1 < len(lines) else ""
        end = i + 2
    else:
        return None
    frames: list[Frame] = []
    for j in range(end, min(end + 3, len(lines))):
        if lines[j].strip() == "stack backtrace:":
            frames, end = _rust_backtrace(lines, j + 1)
            break
    own = [f for f in frames if f.own]
    if not own:
        frames = [rust_location(location), *frames]
    symbols = [f.symbol for f in frames if f.own]
    return Sighting("rust", "rust:panic", message, i, end, frames, ["rust:panic"], symbols)


def find_rust_panics(lines: list[str], candidates: Iterable[int]) -> list[Sighting]:
    """Rust panics, in the formats before and after Rust 1.73, with their backtraces."""
    return scan(lines, candidates, _rust_panic)


# --- native -----------------------------------------------------------------

_SIGNAL_NUMBERS = {4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL"}
_SIGNAL_NUMBERS |= {11: "SIGSEGV", 31: "SIGSYS"}
_SIGNAL_WORDS = (
    (re.compile(r"\bSegmentation fault\b|\bsegmentation (?:fault|violation)\b", re.I), "SIGSEGV"),
    (re.compile(r"\bAborted\s+\(core dumped\)|(?:^\s*|\s\d+\s+)Aborted\s*$"), "SIGABRT"),
    (re.compile(r"\bBus error\b"), "SIGBUS"),
    (re.compile(r"\bFloating point exception\b"), "SIGFPE"),
    (re.compile(r"\bIllegal instruction\b"), "SIGILL"),
    (re.compile(r"\bTrace/breakpoint trap\b"), "SIGTRAP"),
    (re.compile(r"(?:^|\s\d+\s+)Killed(?! process)(?:\s|$)"), "SIGKILL"),
)
_SIGNAL_NAME = re.compile(r"\b(SIG(?:SEGV|ABRT|BUS|FPE|ILL|KILL|TRAP|SYS))\b")
_SIGNAL_NUMBER = re.compile(
    r"\b(?:received|caught|got|by|with|on|from) signal:? (\d{1,2})\b", re.IGNORECASE
)
_GLIBC_ABORT = re.compile(
    r"\*\*\* (?:stack smashing|buffer overflow) detected \*\*\*|double free or corruption"
    r"|\b(?:free|malloc|realloc|munmap_chunk)\(\): \w|corrupted size vs\. prev_size"
)
_CXX_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_CXX_WHAT = re.compile(r"^\s*what\(\):\s*(?P<what>.*)$")
_SANITIZER = re.compile(
    r"\b(?P<tool>Address|Leak|Thread|Memory|UndefinedBehavior)Sanitizer:? (?P<what>[\w-]+)"
)
# Addresses may already be abstracted to a placeholder such as <ADDR> before we read them.
_NATIVE_FRAME = re.compile(r"^\s*#\d+\s+(?:(?:0x[0-9a-fA-F]+|<[A-Z_]+>)\s+in\s+)?(?P<rest>\S.*)$")
_NATIVE_WHERE = re.compile(
    r"\s(?:at|from) (?P<at>\S+)\s*$"
    r"|\s\((?P<lib>[^()]+\+0x[0-9a-f]+)\)\s*$"
    r"|\s(?P<file>\S+:\d+(?::\d+)?)\s*$"
)
_TRIGGERS = re.compile(
    r"Segmentation|segmentation|Aborted|Bus error|Floating point|Illegal instruction"
    r"|Trace/breakpoint|Killed|SIG[A-Z]{2,4}\b|signal|\*\*\*|double free|\(\): |corrupted size"
    r"|terminate called|Sanitizer"
)


def _split_call(rest: str) -> tuple[str, str | None]:
    """``func (args) at file.c:4`` → (``func``, ``file.c:4``).

    The function name ends at the first space outside brackets (C++ signatures hold spaces).
    """
    depth, k = 0, len(rest)
    for at, char in enumerate(rest):
        if char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
        elif char == " " and depth <= 0:
            k = at
            break
    where = _NATIVE_WHERE.search(rest[k:])
    return rest[:k], where and (where["at"] or where["lib"] or where["file"])


def _native_backtrace(lines: list[str], i: int) -> tuple[list[Frame], int]:
    """The ``#0 … #N`` frames printed by gdb or a sanitizer shortly after line ``i``."""
    for j in range(i + 1, min(i + _LOOKAHEAD, len(lines))):
        if _NATIVE_FRAME.match(lines[j]) and lines[j].lstrip().startswith("#0 "):
            frames: list[Frame] = []
            while j < len(lines) and (frame := _NATIVE_FRAME.match(lines[j])):
                frames.append(native_frame(*_split_call(frame["rest"])))
                j += 1
            return frames, j
    return [], i + 1


def _native_kind(lines: list[str], i: int) -> tuple[str, str] | None:
    """(kind, message) of a crash announced on line ``i``."""
    line = lines[i]
    if sanitizer := _SANITIZER.search(line):
        tool = sanitizer["tool"]
        what = "memory-leak" if tool == "Leak" else sanitizer["what"]
        short = {"Address": "asan", "Leak": "lsan", "Thread": "tsan", "Memory": "msan"}.get(
            tool, "ubsan"
        )
        return f"{short}:{what}", line[sanitizer.start() :]
    if terminate := _CXX_TERMINATE.search(line):
        what = _CXX_WHAT.match(lines[i + 1]) if i + 1 < len(lines) else None
        return terminate["type"], what["what"] if what else ""
    if _GLIBC_ABORT.search(line):
        return "SIGABRT", line
    if name := _SIGNAL_NAME.search(line):
        return name.group(1), line
    if (number := _SIGNAL_NUMBER.search(line)) and int(number.group(1)) in _SIGNAL_NUMBERS:
        return _SIGNAL_NUMBERS[int(number.group(1))], line
    for pattern, kind in _SIGNAL_WORDS:
        if pattern.search(line):
            return kind, line
    return None


def _native_crash(lines: list[str], i: int) -> Sighting | None:
    if not _TRIGGERS.search(lines[i]) or looks_like_code(lines[i]):
        return None
    crash = _native_kind(lines, i)
    if crash is None:
        return None
    kind, message = crash
    frames, end = _native_backtrace(lines, i)
    symbols = [f.symbol for f in frames if f.own]
    return Sighting("native", kind, message.strip(), i, end, frames, [kind], symbols)


def find_native_crashes(lines: list[str], candidates: Iterable[int]) -> list[Sighting]:
    """Signals, sanitizer reports, glibc aborts, uncaught C++ exceptions, and their frames."""
    return scan(lines, candidates, _native_crash)
