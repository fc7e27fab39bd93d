"""Errors named by a code on one line: database codes, HTTP statuses, exit codes,
Windows status codes and the OOM killer.

Each detector reads one line and returns ``(category, kind, message)`` hits.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "CODE_DETECTORS",
    "Hit",
    "exit_hits",
    "http_hits",
    "mysql_hits",
    "ntstatus",
    "ntstatus_hits",
    "oom_hits",
    "oracle_hits",
    "postgres_hits",
]

Hit = tuple[str, str, str]  # (category, kind, message)

# --- Oracle -----------------------------------------------------------------

_ORACLE = re.compile(r"\b(?P<code>(?:ORA|TNS|PLS|SP2)-\d{4,5})\b(?::\s*(?P<msg>[^\n]*))?")
# ORA-06512 lines are the PL/SQL call stack ("at line 5"), not an error of their own.
_ORACLE_BACKTRACE = {"ORA-06512"}


def _holds(line: str, words: tuple[str, ...]) -> bool:
    """A cheap first look: does the line (in lower case) hold any of these words?"""
    low = line.lower()
    return any(word in low for word in words)


def oracle_hits(line: str) -> list[Hit]:
    """``ORA-04031: unable to allocate …``, ``TNS-12541``, ``PLS-00201``."""
    if "-" not in line:
        return []
    return [
        ("oracle", m["code"], m["msg"] or "")
        for m in _ORACLE.finditer(line)
        if m["code"] not in _ORACLE_BACKTRACE
    ]


# --- MySQL ------------------------------------------------------------------

_MYSQL_CLIENT = re.compile(
    r"\bERROR (?P<num>\d{4}) \((?P<state>[0-9A-Z]{5})\)(?: at line \d+)?: (?P<msg>.*)"
)
_MYSQL_TUPLE = re.compile(r"\((?P<num>[1-4]\d{3}), [\"'](?P<msg>.*?)[\"']\)")
_MYSQL_CODE = re.compile(r"\bError Code: (?P<num>\d{4})\. (?P<msg>.*)")
_PDO = re.compile(r"SQLSTATE\[(?P<state>\w{5})\]: [^:]+: (?P<num>\d+) (?P<msg>.*)")
# Server messages that name their error even when no number is printed (JDBC, ORMs).
_MYSQL_MESSAGES = (
    (re.compile(r"\bDuplicate entry '.*' for key\b"), "1062"),
    (re.compile(r"\bTable '[^']+' doesn't exist\b"), "1146"),
    (re.compile(r"\bUnknown column '[^']+' in\b"), "1054"),
    (re.compile(r"\bYou have an error in your SQL syntax\b"), "1064"),
    (re.compile(r"\bAccess denied for user '"), "1045"),
    (re.compile(r"\bLock wait timeout exceeded\b"), "1205"),
    (re.compile(r"\bDeadlock found when trying to get lock\b"), "1213"),
    (re.compile(r"\bCannot add or update a child row: a foreign key constraint fails\b"), "1452"),
    (re.compile(r"\bData too long for column '"), "1406"),
    (re.compile(r"\bColumn '[^']+' cannot be null\b"), "1048"),
    (re.compile(r"\bUnknown database '"), "1049"),
    (re.compile(r"\bCan't connect to local MySQL server through socket\b"), "2002"),
    (re.compile(r"\bCan't connect to MySQL server on\b"), "2003"),
    (re.compile(r"\bMySQL server has gone away\b"), "2006"),
    (re.compile(r"\bLost connection to MySQL server\b"), "2013"),
)


_MYSQL_WORDS = (
    "error", "mysql", "sqlstate", "duplicate entry", "doesn't exist", "unknown column", "denied",
    "lock wait", "deadlock", "foreign key", "too long", "cannot be null", "unknown database",
    "can't connect", "gone away", "lost connection",
)  # fmt: skip


def mysql_hits(line: str) -> list[Hit]:
    """``ERROR 1062 (23000): Duplicate entry …``, driver tuples ``(1062, "…")``, PDO messages."""
    if not _holds(line, _MYSQL_WORDS):
        return []
    for pattern in (_MYSQL_CLIENT, _MYSQL_CODE, _MYSQL_TUPLE):
        found = pattern.search(line)
        if found:
            return [("mysql", f"mysql:{found['num']}", found["msg"])]
    pdo = _PDO.search(line)
    if (
        pdo and int(pdo["num"]) >= 1000
    ):  # MySQL numbers its errors from 1000; PostgreSQL's PDO code is small
        return [("mysql", f"mysql:{pdo['num']}", pdo["msg"])]
    for pattern, num in _MYSQL_MESSAGES:
        found = pattern.search(line)
        if found:
            return [("mysql", f"mysql:{num}", line[found.start() :])]
    return []


# --- PostgreSQL -----------------------------------------------------------------

_PG_STATE = re.compile(
    r"SQLSTATE\[(?P<a>[0-9A-Z]{5})\]|\(SQLSTATE (?P<b>[0-9A-Z]{5})\)"
    r"|\bSQL ?state:? (?P<c>[0-9A-Z]{5})\b|\bsqlstate[=:] ?(?P<d>[0-9A-Z]{5})\b"
    r"|\bSQLSTATE (?P<e>[0-9A-Z]{5})\b",
    re.IGNORECASE,
)
_PG_SEVERITY = re.compile(r"\b(?:ERROR|FATAL|PANIC):\s+(?P<msg>.*)")
_PG_HINT = re.compile(
    r"postgres|psql|PSQLException|psycopg|asyncpg|\bpq: |\bPG::|libpq|\bpg_", re.IGNORECASE
)
_PG_MESSAGES = (
    (r"duplicate key value violates unique constraint", "23505"),
    (r"violates foreign key constraint", "23503"),
    (r"null value in column .* violates not-null constraint", "23502"),
    (r"violates check constraint", "23514"),
    (r"relation \"[^\"]+\" does not exist", "42P01"),
    (r"relation \"[^\"]+\" already exists", "42P07"),
    (r"column \"[^\"]+\" (?:of relation \"[^\"]+\" )?does not exist", "42703"),
    (r"column \"[^\"]+\" of relation \"[^\"]+\" already exists", "42701"),
    (r"function .+ does not exist", "42883"),
    (r"syntax error at or near", "42601"),
    (r"permission denied for", "42501"),
    (r"password authentication failed for user", "28P01"),
    (r"role \"[^\"]+\" does not exist", "28000"),
    (r"database \"[^\"]+\" does not exist", "3D000"),
    (r"deadlock detected", "40P01"),
    (r"could not serialize access", "40001"),
    (r"canceling statement due to statement timeout", "57014"),
    (r"sorry, too many clients already|remaining connection slots are reserved", "53300"),
    (r"out of shared memory", "53200"),
    (r"could not extend file", "53100"),
    (r"value too long for type", "22001"),
    (r"invalid input syntax for", "22P02"),
    (r"division by zero", "22012"),
    (r"current transaction is aborted, commands ignored", "25P02"),
    (r"there is no unique or exclusion constraint matching the ON CONFLICT", "42P10"),
    (r"terminating connection due to administrator command", "57P01"),
    (r"the database system is (?:starting up|shutting down)", "57P03"),
    (r"could not connect to server|connection to server .* failed", "08001"),
)
_PG_TABLE = [(re.compile(rx), state) for rx, state in _PG_MESSAGES]


_PG_WORDS = (
    "sqlstate", "sql state", "error", "fatal", "panic", "postgres", "psql", "pq: ", "psycopg",
    "asyncpg", "pg::", "libpq", "pg_",
)  # fmt: skip


def postgres_hits(line: str) -> list[Hit]:
    """SQLSTATE codes, and PostgreSQL messages (``ERROR:  duplicate key …``) by their state."""
    if not _holds(line, _PG_WORDS):
        return []
    if mysql_hits(line):
        return []  # PDO prints a SQLSTATE for MySQL too
    severity = _PG_SEVERITY.search(line)
    hinted = bool(_PG_HINT.search(line)) or "ERROR:  " in line or "FATAL:  " in line
    message = severity["msg"] if severity else line.strip()
    state = _PG_STATE.search(line)
    if state:
        code = next(g for g in state.groups() if g)
        return [("postgres", f"postgres:{code.upper()}", message)]
    if not (severity or hinted):
        return []
    for pattern, code in _PG_TABLE:
        if pattern.search(message):
            return [("postgres", f"postgres:{code}", message)]
    return [("postgres", "postgres:error", message)] if hinted and severity else []


# --- HTTP ---------------------------------------------------------------------

_REASONS = "|".join(
    (
        "Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed",
        "Not Acceptable|Proxy Authentication Required|Request Time-?out|Conflict|Gone",
        "Length Required|Precondition Failed|Request Entity Too Large|Payload Too Large",
        "Content Too Large|URI Too Long|Unsupported Media Type|Range Not Satisfiable",
        "Expectation Failed|Misdirected Request|Unprocessable (?:Entity|Content)|Locked",
        "Failed Dependency|Too Early|Upgrade Required|Precondition Required|Too Many Requests",
        "Request Header Fields Too Large|Unavailable For Legal Reasons|Internal Server Error",
        "Not Implemented|Bad Gateway|Service Unavailable|Gateway Time-?out",
        "HTTP Version Not Supported|Variant Also Negotiates|Insufficient Storage|Loop Detected",
        "Network Authentication Required",
    )
)
# Context words are matched in any case; reason phrases only as the standard spells them,
# so "401 locked files" is not a status.
_HTTP = re.compile(
    r"HTTP/\d(?:\.\d)?\"?\s+(?P<a>[45]\d\d)\b"
    r"|(?i:\bHTTP(?: error| status| code| response)?):? (?P<b>[45]\d\d)\b"
    r"|(?i:\b(?:status(?:[ _-]?code)?|response code))[\"']?\s*[:=]?\s*(?P<c>[45]\d\d)\b"
    r"|\b(?P<d>[45]\d\d) (?:Client|Server) Error\b|\breturned error: (?P<f>[45]\d\d)\b"
    rf"|\(?\b(?P<e>[45]\d\d)\)?[ :-]+(?:{_REASONS}|(?i:not found))\b"
)


_STATUS_NUMBER = re.compile(r"[45]\d\d")
# kubectl names the API server's HTTP status by its reason.
_KUBE_ERROR = re.compile(r"\bError from server \((?P<reason>\w+)\)")
_KUBE_STATUS = {
    "BadRequest": 400, "Unauthorized": 401, "Forbidden": 403, "NotFound": 404,
    "MethodNotAllowed": 405, "AlreadyExists": 409, "Conflict": 409, "Gone": 410, "Invalid": 422,
    "TooManyRequests": 429, "InternalError": 500, "ServiceUnavailable": 503, "Timeout": 504,
}  # fmt: skip


def http_hits(line: str) -> list[Hit]:
    """4xx and 5xx statuses, only where the text says they are HTTP statuses."""
    kube = _KUBE_ERROR.search(line) if "Error from server" in line else None
    if kube is not None and kube["reason"] in _KUBE_STATUS:
        return [("http", f"HTTP {_KUBE_STATUS[kube['reason']]}", line.strip())]
    found = _HTTP.search(line) if _STATUS_NUMBER.search(line) else None
    if found is None:
        return []
    status = next(g for g in found.groups() if g)
    return [("http", f"HTTP {status}", line.strip())]


# --- Windows status codes -------------------------------------------------------

_NTSTATUS = re.compile(r"\b0x[cC]0[0-9a-fA-F]{6}\b")
_NTSTATUS_NAMES = {
    "ACCESS_VIOLATION": "0xc0000005",
    "STACK_OVERFLOW": "0xc00000fd",
    "STACK_BUFFER_OVERRUN": "0xc0000409",
    "HEAP_CORRUPTION": "0xc0000374",
    "DLL_NOT_FOUND": "0xc0000135",
    "INTEGER_DIVIDE_BY_ZERO": "0xc0000094",
    "ILLEGAL_INSTRUCTION": "0xc000001d",
    "IN_PAGE_ERROR": "0xc0000006",
    "INVALID_HANDLE": "0xc0000008",
    "NO_MEMORY": "0xc0000017",
    "PRIVILEGED_INSTRUCTION": "0xc0000096",
}
_NTSTATUS_NAME = re.compile(rf"\b(?:STATUS|EXCEPTION)_(?P<name>{'|'.join(_NTSTATUS_NAMES)})\b")


def ntstatus(number: int) -> str | None:
    """The NTSTATUS a process exit code stands for (``-1073741819`` → ``0xc0000005``), if any."""
    unsigned = number & 0xFFFFFFFF
    return f"0x{unsigned:08x}" if 0xC0000000 <= unsigned <= 0xC0FFFFFF else None


def ntstatus_hits(line: str) -> list[Hit]:
    """Windows crash codes: ``0xC0000005``, ``STATUS_ACCESS_VIOLATION``."""
    if not _holds(line, ("0xc0", "status_", "exception_")):
        return []
    found = _NTSTATUS.search(line)
    if found:
        return [("native", found.group().lower(), line.strip())]
    named = _NTSTATUS_NAME.search(line)
    if named:
        return [("native", _NTSTATUS_NAMES[named["name"]], line.strip())]
    return []


# --- exit codes -------------------------------------------------------------------

_EXIT = re.compile(
    r"\bexit(?:ed)?(?: with)?(?: a)?(?: non-zero)? (?:code|status)\b[ :=(]*(?P<a>-?\d+)"
    r"|\breturned (?:a )?non-zero (?:exit status|code):? (?P<b>-?\d+)"
    r"|\bfailed with exit (?:code|status):? (?P<c>-?\d+)"
    r"|\bmake(?:\[\d+\])?: \*\*\* .*\bError (?P<d>\d+)"
    r"|\bExited \((?P<e>-?\d+)\)"
    r"|\bexit status:? (?P<f>-?\d+)"
    r"|\b[Ee]xit code:? (?P<g>-?\d+)",
    re.IGNORECASE,
)


# The shell exits 127 when it cannot find the command.
_NOT_FOUND = re.compile(r"(?:^|: )(?:line \d+: )?[\w./+-]+: command not found\s*$")


def exit_hits(line: str) -> list[Hit]:
    """Non-zero exit codes; a negative Windows code that is an NTSTATUS becomes that status."""
    if "command not found" in line and (missing := _NOT_FOUND.search(line)):
        return [("exit", "exit 127", line[missing.start() :].lstrip(": "))]
    if not _holds(line, ("exit", "non-zero", "error ")):
        return []
    found = _EXIT.search(line)
    if found is None:
        return []
    code = int(next(g for g in found.groups() if g))
    if code == 0:
        return []
    status = ntstatus(code)
    if status is not None:
        return [("native", status, line.strip())]
    return [("exit", f"exit {code}", line.strip())]


# --- the OOM killer ------------------------------------------------------------------

_OOM = re.compile(
    r"\bOut of memory: Kill(?:ed)? process\b|\binvoked oom-killer\b|\boom-kill:|\bOOMKilled\b"
    r"|\bMemory cgroup out of memory\b|\boom_reaper: reaped process\b"
    r"|\bKilled process \d+ \(.*\) total-vm"
)


def oom_hits(line: str) -> list[Hit]:
    """The Linux OOM killer and containers killed for memory (``OOMKilled``)."""
    if not _holds(line, ("oom", "out of memory", "killed process")):
        return []
    found = _OOM.search(line)
    return [("oom", "oom-killer", line[found.start() :].strip())] if found else []


CODE_DETECTORS: tuple[Callable[[str], list[Hit]], ...] = (
    oracle_hits,
    mysql_hits,
    postgres_hits,
    http_hits,
    ntstatus_hits,
    exit_hits,
    oom_hits,
)
