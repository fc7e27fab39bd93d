"""Numbers that name one instance: UUIDs, process ids, memory addresses, digests and long
numbers (ids, sizes, epoch times) — not versions, short numbers or error codes.
"""

from __future__ import annotations

import re

from metisgraph.ingest.sanitize.passes import PassGroup, TextPass, case_variants, chars, word_anchor
from metisgraph.ingest.sanitize.placeholders import Details, put, word_before

__all__ = ["DIGESTS", "LONG_NUMBERS", "MEMORY_ADDRESSES", "PIDS", "PS_ROWS", "UUIDS"]


def _sha(match: re.Match[str], details: Details) -> str | None:
    value = match.group("sha")
    has_letter, has_digit = re.search(r"[a-fA-F]", value), re.search(r"\d", value)
    if not (has_letter and has_digit) or re.fullmatch(r"\d+[eE]\d+", value):
        return match.group(0)
    if "0000" in value:
        return match.group(0)  # flags and constants (c0000005, 2b000002); hashes almost never
    return put("SHA", "sha")(match, details)


_ERROR_WORDS = frozenset(
    {"code", "status", "errno", "signal", "exit", "exited", "returned", "rc", "error", "err"}
)


_GIT_RANGE = re.compile(r"\.\.\S+ $")


def _long_number(match: re.Match[str], details: Details) -> str:
    before = match.string[max(0, match.start() - 24) : match.start()]
    # "exit code 3221225477" is an error code; "index a1b2c3d..e4f5a6b 100644" a git mode.
    git_mode = before.endswith("mode ") or (".." in before and _GIT_RANGE.search(before))
    if word_before(match) in _ERROR_WORDS or git_mode:
        return match.group(0)
    return details.put("NUM", match.group(0))


def _ps_table(match: re.Match[str], details: Details) -> str:
    """Replace the PID column of each row under a ps/top header."""
    header = match.group("header")
    column = 1 if header.split()[0] in {"USER", "UID"} else 0
    rows = [_pid_in_column(row, column, details) for row in match.group("rows").split("\n")]
    return header + "\n".join(rows)


def _pid_in_column(row: str, column: int, details: Details) -> str:
    pieces = re.split(r"(\s+)", row)
    words = [i for i, piece in enumerate(pieces) if piece and not piece.isspace()]
    if len(words) > column and pieces[words[column]].isdigit():
        pieces[words[column]] = details.put("PID", pieces[words[column]])
    return "".join(pieces)


_PID_COMMANDS = ("pmap", "jmap", "jstack", "jcmd", "jinfo", "kill", "gcore", "pstack", "pidstat")
_TRACERS = ("strace", "ltrace", "gdb", "lsof", "perf", "py-spy", "top", "htop", "rbspy", "ps")


_TRACER_ON_LINE = re.compile(r"\b(?:" + "|".join(_TRACERS) + r")\b")


def _traced_pid(match: re.Match[str], details: Details) -> str | None:
    """``-p 4242`` is a pid when a tracer (strace, gdb, perf, ps …) runs on that line."""
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    if not _TRACER_ON_LINE.search(match.string, line_start, match.start()):
        return None
    return put("PID", "pid")(match, details)


UUIDS: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
        r"[0-9a-fA-F]{12}(?![\w-])"
    ),
    put("UUID"),
    ("-",),
    anchor=re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"),
    widen=chars("0-9a-fA-F"),
)
PS_ROWS: TextPass[Details] = TextPass(
    # "ps aux" rows without their header: USER PID %CPU %MEM VSZ RSS TTY.
    re.compile(
        r"\n[\w.+-]+[ \t]+(?P<pid>\d+)[ \t]+\d+\.\d+[ \t]+\d+\.\d+[ \t]+\d+[ \t]+\d+[ \t]+"
        r"(?:\?|pts/\d+|tty\w*)[ \t]"
    ),
    put("PID", "pid"),
    anchor=re.compile(r"\n[\w.+-]+[ \t]+\d+[ \t]+\d+\.\d"),
    needs_digit=True,
)
MEMORY_ADDRESSES: TextPass[Details] = TextPass(
    re.compile(r"(?<!\w)0x[0-9a-fA-F]{9,16}(?!\w)"),
    put("ADDR"),
    ("0x",),
    anchor=re.compile("0x"),
)
PIDS: PassGroup[Details] = PassGroup(
    re.compile(case_variants("pid", "tid") + "|" + "|".join(_PID_COMMANDS) + "|-p|/proc/"),
    (
        TextPass(
            re.compile(r"(?i)\b(?:ppid|pid|tid)\b[ \t]*[:=#]?[ \t]*(?P<pid>\d+)\b"),
            put("PID", "pid"),
            ("pid", "tid"),
            fold_case=True,
            anchor=re.compile(word_anchor("ppid", "pid", "tid", cases=True)),
        ),
        TextPass(
            re.compile(
                r"\b(?:" + "|".join(_PID_COMMANDS) + r")\b"
                r"(?:[ \t]+-{1,2}[\w=:-]+)*[ \t]+(?P<pid>\d+)\b"
            ),
            put("PID", "pid"),
            _PID_COMMANDS,
            anchor=re.compile(word_anchor(*_PID_COMMANDS)),
        ),
        TextPass(
            re.compile(r"[ \t](?:-p|--pid)[ \t=]?(?P<pid>\d+)\b"),
            _traced_pid,
            (" -p", "--pid"),
        ),
        TextPass(re.compile(r"/proc/(?P<pid>\d+)(?=/|\b)"), put("PID", "pid"), ("/proc/",)),
        TextPass(
            # ps and top tables: the PID column under a header that names it.
            re.compile(
                r"(?m)^(?P<header>[ \t]*(?:(?:USER|UID)[ \t]+)?PID\b[^\n]*)"
                r"(?P<rows>(?:\n[ \t]*(?:[\w.+-]+[ \t]+)?\d+\b[^\n]*)+)"
            ),
            _ps_table,
            ("PID",),
            anchor=re.compile(r"PID\b"),
            widen=frozenset(" \tUSERID"),
        ),
    ),
    needs_digit=True,
)
DIGESTS: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![\w-])(?:(?<=\.\.)|(?<!\.))(?P<sha>[0-9a-f]{7,128}|[0-9A-F]{32,128})(?![\w-])"
    ),
    _sha,
    # A digest has a digit next to a hex letter somewhere; digits are rare enough to scan for.
    anchor=re.compile(r"\d(?:[a-fA-F]|(?<=[a-fA-F]\d))"),
    widen=chars("0-9a-fA-F"),
    reach=128,
    needs_digit=True,
)
LONG_NUMBERS: TextPass[Details] = TextPass(
    re.compile(r"\d(?<![\w.+~^@#]\d)(?<!==\d)(?<![A-Za-z]-\d)\d{5,}(?:\.\d+)?(?!\w|\.\d)"),
    _long_number,
    needs_digit=True,
)
