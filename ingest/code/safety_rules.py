"""The line rules of the static safety scan: dangerous commands and calls, by pattern.

Each rule has an id, a severity and a message; a few rules raise their severity for the worst
targets (`rm -rf /`, `DROP DATABASE`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LINE_RULES", "PYTHON_FALLBACK_RULES", "SHELL_WRITES", "SYSTEM_PREFIXES", "LineRule"]

# Paths that belong to the operating system: writing there changes the machine, not a project.
SYSTEM_PREFIXES = (
    "/etc/",
    "/usr/",
    "/bin/",
    "/sbin/",
    "/lib",
    "/boot/",
    "/sys/",
    "/proc/",
    "/root/",
    "/var/lib/",
    "/opt/",
)


@dataclass(frozen=True)
class LineRule:
    rule: str
    severity: str
    message: str
    pattern: re.Pattern[str]
    languages: frozenset[str] | None = None  # None: every language
    escalate: Callable[[re.Match[str]], str | None] | None = None


def _rm_target(match: re.Match[str]) -> str | None:
    target = (match["target"] or "").replace('"', "").replace("'", "")
    # The root, home, everything here, or a variable that may be empty ("$DIR"/ is then /).
    if re.fullmatch(r"/|/\*|~/?|\$HOME/?|\*|\.|\.\.|\$\{?\w+\}?/?\*?", target):
        return "critical"
    return None


def _drop_target(match: re.Match[str]) -> str | None:
    return "critical" if match["what"].upper() in {"DATABASE", "SCHEMA", "TABLE"} else None


def _kubectl_scope(match: re.Match[str]) -> str | None:
    rest = match["rest"] or ""
    return "critical" if re.search(r"--all\b|\b(?:ns|namespaces?)\b", rest) else None


_SHELLISH = None  # shell commands also run from strings in other languages
_PY = frozenset({"python"})
_JS = frozenset({"javascript", "typescript"})

# A command word starts a line or follows whitespace, `;`, `&`, `|` or `(`: the lookbehind
# `(?<![^\s;&|(])` says so without consuming the newline before it (which would move the line).

LINE_RULES: tuple[LineRule, ...] = (
    LineRule(
        "rm-rf",
        "high",
        "recursive forced delete",
        re.compile(
            r"\brm\s+(?:-[a-zA-Z]*[rR][a-zA-Z]*f[a-zA-Z]*|-[a-zA-Z]*f[a-zA-Z]*[rR][a-zA-Z]*|"
            r"(?:-[rR]|--recursive)\s+(?:-f|--force)|(?:-f|--force)\s+(?:-[rR]|--recursive))"
            r"(?:\s+--?[\w-]+)*(?:\s+(?P<target>[^\s;&|)]+))?"
        ),
        _SHELLISH,
        _rm_target,
    ),
    LineRule(
        "chmod-777",
        "high",
        "world-writable permissions",
        re.compile(
            r"\bchmod\s+(?:-[a-zA-Z]+\s+)*(?:0?777|a\+rwx|ugo\+rwx|o\+w)\b|\bchmod\(\s*[^,]+,\s*0o?777\)"
        ),
    ),
    LineRule(
        "curl-pipe-shell",
        "critical",
        "downloads a script and runs it unseen",
        re.compile(
            r"\b(?:curl|wget)\b[^\n|;]*\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k)?sh\b|"
            r"\b(?:curl|wget)\b[^\n|;]*\|\s*(?:sudo\s+)?python\d?\b|"
            r"\b(?:ba)?sh\s+(?:-c\s+)?[\"']?(?:<\(|\$\()\s*(?:curl|wget)\b"
        ),
    ),
    LineRule(
        "sql-drop",
        "high",
        "drops a database object",
        re.compile(
            r"\bDROP\s+(?P<what>TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|FUNCTION)\b", re.I
        ),
        None,
        _drop_target,
    ),
    LineRule(
        "sql-truncate",
        "high",
        "empties a table",
        re.compile(r"\bTRUNCATE\s+(?:TABLE\s+)?[\w\"`.]+", re.I),
    ),
    LineRule(
        "kubectl-delete",
        "high",
        "deletes cluster resources",
        re.compile(r"\bkubectl\b[^\n;&|]*?\sdelete\b(?P<rest>[^\n;&|]*)"),
        None,
        _kubectl_scope,
    ),
    LineRule(
        "git-force-push",
        "high",
        "rewrites remote history",
        re.compile(
            r"\bgit\s+(?:-\S+\s+)*push\b[^\n;&|]*?(?:\s--force(?!-with-lease)\b|\s-f\b|\s\+[\w/.-]+)"
        ),
    ),
    LineRule(
        "disk-wipe",
        "critical",
        "formats or overwrites a disk",
        re.compile(
            r"\bmkfs(?:\.\w+)?\s|\bdd\b[^\n]*\bof=/dev/(?!null\b)|\bwipefs\b|>\s*/dev/(?:sd|nvme|hd|xvd)\w*"
        ),
    ),
    LineRule(
        "insecure-tls",
        "medium",
        "turns off TLS certificate checks",
        re.compile(
            r"\bverify\s*=\s*False\b|\bcurl\b[^\n]*\s(?:-k|--insecure)\b|\bwget\b[^\n]*--no-check-certificate|"
            r"NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0|InsecureSkipVerify\s*:\s*true|"
            r"rejectUnauthorized\s*:\s*false|_create_unverified_context\("
        ),
    ),
    LineRule("sudo", "low", "runs with root privileges", re.compile(r"(?<![^\s;&|(])sudo\s+\w")),
    LineRule(
        "eval-exec",
        "high",
        "evaluates a string as code",
        re.compile(r"(?<![\w.])eval\s*\(|\bnew\s+Function\s*\(|(?<![^\s;&|(])eval\s+[^\s(]"),
        frozenset({"javascript", "typescript", "bash"}),
    ),
    LineRule(
        "subprocess-shell",
        "high",
        "runs a command line through a shell",
        re.compile(
            r"\bchild_process\b[^\n]*\bexec(?:Sync)?\s*\(|(?<!\w)exec(?:Sync)?\s*\(\s*[`'\"]|"
            r"\bexec\.Command\(\s*\"(?:ba)?sh\"\s*,\s*\"-c\"|Runtime\.getRuntime\(\)\.exec\("
        ),
        frozenset({"javascript", "typescript", "go", "java"}),
    ),
    LineRule(
        "unsafe-deserialization",
        "high",
        "deserialises untrusted data into objects",
        re.compile(
            r"\bObjectInputStream\b|\breadObject\s*\(|\bnode-serialize\b|\bunserialize\s*\("
        ),
        frozenset({"java", "javascript", "typescript"}),
    ),
    LineRule(
        "network-call",
        "low",
        "reaches the network",
        re.compile(
            r"(?<![^\s;&|(])(?:curl|wget|ssh|scp|rsync\s+\S*:|nc|netcat|telnet|ftp|sftp|http|https)\s|"
            r"\bfetch\s*\(|\baxios(?:\.\w+)?\s*\(|\bhttps?\.(?:get|request)\(|\bhttp\.(?:Get|Post|NewRequest)|"
            r"\bnet\.Dial|\bHttpClient\b|\bopenConnection\(|\bnew\s+WebSocket\("
        ),
        frozenset({"bash", "javascript", "typescript", "go", "java", "text", "dockerfile", "make"}),
    ),
)

# Python rules by pattern, for code the `ast` cannot read (fragments, lines added by a patch).
PYTHON_FALLBACK_RULES: tuple[LineRule, ...] = (
    LineRule(
        "os-system",
        "high",
        "runs a command line through a shell",
        re.compile(r"\bos\.(?:system|popen)\s*\("),
    ),
    LineRule(
        "subprocess-shell",
        "high",
        "runs a command line through a shell",
        re.compile(r"\bsubprocess\.\w+\(.*\bshell\s*=\s*True|\bsubprocess\.getoutput\("),
    ),
    LineRule(
        "eval-exec",
        "high",
        "evaluates a string as code",
        re.compile(r"(?<![\w.])(?:eval|exec)\s*\("),
    ),
    LineRule(
        "unsafe-deserialization",
        "high",
        "deserialises untrusted data into objects",
        re.compile(
            r"\b(?:c?[Pp]ickle|dill|marshal)\.loads?\s*\(|\byaml\.load\((?![^)\n]*Safe)|\byaml\.unsafe_load\("
        ),
    ),
    LineRule(
        "network-call",
        "low",
        "reaches the network",
        re.compile(
            r"\b(?:requests|httpx)\.(?:get|post|put|patch|delete|head|request|Session|Client)\b|\burlopen\("
        ),
    ),
)
# Shell writes: redirections, tee, sed -i, dd of=, and the destination of cp/mv/install.
SHELL_WRITES = re.compile(
    r"(?:\d?>>?\|?|\btee\s+(?:-a\s+)?)\s*[\"']?(?P<redirect>[/~][^\s;&|)\"']*)"
    r"|\bdd\b[^\n;&|]*\bof=(?P<dd>[/~][^\s;&|)]*)"
    r"|\bsed\s+(?:-[^i\s]\S*\s+)*-i\S*\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+(?P<sed>[/~][^\s;&|)]*)"
    r"|(?:^|[;&|(]\s*)(?:sudo\s+)?(?:cp|mv|install|rsync)\b(?:\s+(?!-)[^\s;&|]+|\s+-\S+)*?"
    r"\s+(?P<dest>[/~][^\s;&|)]*)\s*(?:$|[;&|)])",
    re.M,
)
