"""Abstraction: instance details become typed placeholders so a memory generalises.

"valgrind on server-01 at commit a1b2c3d found a leak" is stored as "valgrind on
<HOST> at commit <SHA> found a leak", and comes back for the next leak on another
host at another commit. What makes text findable stays: Java packages and classes
(``org.apache.hadoop.fs.FileSystem``), ``Foo.java:57``, versions (``2.9.2``), short
numbers, error codes (``ORA-04031``, ``HTTP 413``, ``exit 137``, ``0xc0000005``).

Host names are recognised by context, never by shape alone, because a dotted
lowercase word is far more often code than a machine:

* the authority of a URL (``scheme://user@host:port``), ``user@host`` (shell prompts,
  ssh and git remotes) and e-mail addresses;
* a value given to a host key (``host=``, ``hostname:``, ``--host``, ``DB_HOST=``,
  ``Host:``), the target of ssh/scp/rsync/ping/dig/nc, the node name in ``uname -a``;
* a numbered name after a host word (``on server-01``, ``node worker-3``);
* a bare fully qualified name whose last label is a real top-level domain that is
  not also a file extension or a common attribute (``.com``, ``.org``, ``.internal``;
  not ``.py``, ``.md``, ``.info``), whose first label is not a reverse-DNS root
  (``org.apache…``, ``java.io``, ``com.example.App`` are code), written in lower case.

``localhost`` is the same on every machine, so it stays; its port does not.

Numbers: six digits or more become ``<NUM>`` (ids, sizes, epoch times), unless they
are part of a word, a version, an issue reference (``#123456``) or follow an error
context (``exit code 3221225477``). Process ids are usually four or five digits and
cannot be told from a line number or a port by shape, so they are abstracted only
where the context says they are pids: ``pid 4242``, ``kill -9 4242``, ``pmap -x
4242``, ``strace -p 4242``, ``/proc/4242/``.

Placeholders: ``<HOST>``, ``<IP>`` (v4 and v6), ``<PORT>``, ``<EMAIL>``, ``<MAC>``,
``<UUID>``, ``<SHA>`` (hex digests of 7+ characters with a digit and a letter),
``<ADDR>`` (``0x`` and 9+ hex digits: a memory address; 8 digits stay, they are
status codes), ``<HOME>`` (``/home/<user>``, ``/Users/<user>``, ``/root``,
``C:\\Users\\<user>``: what follows is kept), ``<TMP>`` (``/tmp``, ``/var/folders/…/T``,
``%TEMP%``: random directories right under it are dropped, the stable tail kept),
``<TIMESTAMP>`` (ISO, SQL, syslog, ``date``, RFC 2822, common log format, Java
logging), ``<NUM>`` and ``<PID>``. ``details`` keeps the originals, for facts.

Placeholders are idempotent: abstracting an abstracted text changes nothing.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from metisgraph.ingest.sanitize.redaction import (
    PassChain,
    PassGroup,
    TextPass,
    chars,
    redact,
    word_anchor,
)

__all__ = ["PLACEHOLDER_KINDS", "Abstracted", "abstract", "placeholder", "sanitize"]

PLACEHOLDER_KINDS = (
    "ADDR", "EMAIL", "HOME", "HOST", "IP", "MAC", "NUM", "PID", "PORT", "SHA", "TIMESTAMP",
    "TMP", "UUID",
)  # fmt: skip


@dataclass(frozen=True)
class Abstracted:
    """A text with instance details replaced, and the original values by placeholder kind."""

    text: str
    details: dict[str, list[str]]
    redactions: dict[str, int] = field(default_factory=dict)


def placeholder(kind: str) -> str:
    """The typed placeholder for one kind of instance detail, e.g. ``<HOST>``."""
    return f"<{kind}>"


# While the passes run, a placeholder is written as a word (``ꙮHOSTꙮ``; the letter is an
# archaic Cyrillic one nobody types). The detail it replaced was a word too (a host, a
# number, a digest), so the text around it keeps its word boundaries: a later pass sees
# "000000::0" and "<NUM>::0" alike, and abstracting abstracted text changes nothing.
_WORDLIKE = "\ua66e"
_PLACEHOLDER = re.compile("<(" + "|".join(PLACEHOLDER_KINDS) + ")>")
_WORDLIKE_PLACEHOLDER = re.compile(_WORDLIKE + "(" + "|".join(PLACEHOLDER_KINDS) + ")" + _WORDLIKE)


def _wordlike(kind: str) -> str:
    return f"{_WORDLIKE}{kind}{_WORDLIKE}"


class _Details:
    """Collects replaced originals per kind, in order of first appearance, without repeats."""

    def __init__(self) -> None:
        self.seen: dict[str, dict[str, None]] = {}

    def put(self, kind: str, original: str) -> str:
        self.seen.setdefault(kind, {})[original] = None
        return _wordlike(kind)

    def as_dict(self) -> dict[str, list[str]]:
        return {kind: list(values) for kind, values in self.seen.items()}


Replace = Callable[[re.Match[str], _Details], str | None]


# --- host names ---------------------------------------------------------------------------

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
# Top-level domains a bare name may end with. Left out on purpose: those that are also file
# extensions or common attributes (py md sh rs pl in so pt ps cc ai app info local test).
_BARE_TLDS = frozenset(
    {
        "com", "net", "org", "edu", "gov", "mil", "io", "dev", "biz", "co", "tv", "ly",
        "internal", "intranet", "lan", "corp", "localdomain", "example", "invalid",
        "uk", "de", "fr", "jp", "cn", "ru", "nl", "br", "au", "ca", "us", "eu", "ch", "fi",
        "dk", "kr", "tw", "hk", "sg", "be", "cz", "ie", "nz", "za", "mx", "il", "ua", "hu",
        "ro", "vn", "se", "no",
    }
)  # fmt: skip
_REVERSE_DNS_ROOTS = _BARE_TLDS | {
    "java", "javax", "jdk", "sun", "android", "androidx", "kotlin", "kotlinx", "scala",
    "jakarta", "groovy",
}  # fmt: skip
# Two-label names starting with these are attribute access in code ("self.net").
_CODE_RECEIVERS = frozenset(
    {
        "self", "this", "cls", "super", "model", "module", "app", "np", "pd", "os", "sys",
        "torch", "nn", "tf", "config", "settings", "args", "opts", "options", "ctx",
        "request", "req", "res", "response", "env", "obj", "result", "data", "cfg", "conf",
    }
)  # fmt: skip
_FILE_EXTENSIONS = frozenset(
    {
        "py", "js", "ts", "java", "json", "yaml", "yml", "xml", "conf", "cfg", "ini", "txt",
        "log", "sh", "md", "html", "css", "toml", "lock", "properties", "jar", "war", "so",
        "dll", "exe", "c", "h", "cpp", "go", "rs", "rb", "class", "kt", "scala", "sql", "csv",
        "pem", "crt", "key", "service", "socket", "pid", "out", "err", "tmp", "bak", "gz",
    }
)  # fmt: skip
# Words before "-<digits>" that name a version, encoding or counter, not a machine.
_NOT_HOST_PREFIXES = frozenset(
    {
        "utf", "iso", "x86", "x64", "sha", "md", "latin", "ucs", "cp", "win", "windows",
        "python", "py", "java", "jdk", "jre", "gcc", "clang", "llvm", "ubuntu", "debian",
        "centos", "rhel", "fedora", "alpine", "macos", "ios", "android", "api", "http",
        "https", "tls", "ssl", "ipv", "es", "ecma", "version", "release", "branch", "step",
        "day", "page", "line", "level", "phase", "stage", "part", "round", "epoch", "batch",
        "iteration", "attempt", "run", "test", "case", "issue", "bug", "pr", "ticket",
        "week", "php", "ruby", "go", "rust", "gpu", "cpu", "cuda", "core", "port", "slot",
        "rank", "log4j", "junit", "spring", "hadoop", "spark", "kafka", "postgres", "mysql",
        "redis", "django", "rails", "arm", "amd", "aarch", "armv", "gpt", "llama", "top",
        "chapter", "section", "figure", "table", "item", "sprint", "rfc", "cve", "pep", "jsr",
    }
)  # fmt: skip
_IPV4 = r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return False
    return True


def _is_fqdn(name: str) -> bool:
    """A dotted name that reads as a machine rather than as code."""
    labels = name.lower().split(".")
    if len(labels) < 2 or labels[-1] not in _BARE_TLDS or labels[0] in _REVERSE_DNS_ROOTS:
        return False
    return not (len(labels) == 2 and labels[0] in _CODE_RECEIVERS)


def _numbered_host(name: str, *, needs_hyphen: bool) -> bool:
    """``server-01``, ``web3``, ``db-prod-2``: a name with a number that is not a version."""
    lowered = name.lower()
    if not re.search(r"\d", lowered) or (needs_hyphen and "-" not in lowered):
        return False
    prefix = re.match(r"[a-z]+", lowered)
    return prefix is not None and prefix.group(0) not in _NOT_HOST_PREFIXES


def _host_or_ip(value: str, details: _Details) -> str:
    if value.lower() in _LOCAL_NAMES:
        return value
    return details.put("IP" if _is_ip(value) else "HOST", value)


def _with_port(match: re.Match[str], details: _Details, host: str) -> str:
    """Rebuild a match with its ``host`` group (and optional ``port`` group) replaced."""
    whole, base = match.group(0), match.start()
    spans = [(match.span("host"), host)]
    if match.groupdict().get("port"):
        spans.append((match.span("port"), details.put("PORT", match.group("port"))))
    for (start, end), new in sorted(spans, reverse=True):
        whole = whole[: start - base] + new + whole[end - base :]
    return whole


def _url(match: re.Match[str], details: _Details) -> str:
    return _with_port(match, details, _host_or_ip(match.group("host"), details))


def _email(match: re.Match[str], details: _Details) -> str:
    return details.put("EMAIL", match.group(0))


def _user_at_host(match: re.Match[str], details: _Details) -> str:
    host = match.group("host")
    prompt_or_path = match.string.startswith(":", match.end())
    if host.lower() in _LOCAL_NAMES:
        return match.group(0)
    if "." not in host and not prompt_or_path and not _numbered_host(host, needs_hyphen=False):
        return match.group(0)  # "pkg@latest", "me@laptop": a tag or a word, not a machine
    return _with_port(match, details, details.put("HOST", host))


def _plain_host(match: re.Match[str], details: _Details) -> str:
    host = match.group("host")
    if host.lower() in _LOCAL_NAMES:
        return match.group(0)
    return _with_port(match, details, details.put("HOST", host))


_STRONG_HOST_KEYS = frozenset({"host", "hostname", "fqdn", "nodename", "servername"})
_NOT_HOST_VALUES = frozenset(
    {
        "none", "null", "nil", "true", "false", "str", "string", "self", "any", "all",
        "default", "the", "a", "an", "is", "was", "are", "and", "or", "not", "to", "of",
        "in", "on", "for", "with", "this", "that", "it", "be", "by", "from", "as", "at",
    }
)  # fmt: skip


def _keyed_host(match: re.Match[str], details: _Details) -> str:
    key = re.split(r"[_-]", match.group("key").lower().lstrip("-"))[-1]
    host = match.group("host")
    labels = host.lower().split(".")
    strong = key in _STRONG_HOST_KEYS and match.group("sep").strip() in {"=", ":"}
    if (
        host.lower() in _LOCAL_NAMES | _NOT_HOST_VALUES
        or host.lower() == key
        or labels[0] in _CODE_RECEIVERS
        or labels[-1] in _FILE_EXTENSIONS
    ):
        return match.group(0)
    if len(labels) > 1:
        ok = strong or _is_fqdn(host)
    else:
        ok = strong or _numbered_host(host, needs_hyphen=False)
    return _with_port(match, details, details.put("HOST", host)) if ok else match.group(0)


def _context_host(match: re.Match[str], details: _Details) -> str | None:
    """A numbered name after a host word: ``on server-01``, ``node worker-3``."""
    word = _word_before(match)
    if word not in _HOST_WORDS:
        return None
    if not _numbered_host(match.group("host"), needs_hyphen=word == "on"):
        return None
    return _plain_host(match, details)


def _bare_fqdn(match: re.Match[str], details: _Details) -> str:
    if not _is_fqdn(match.group("host")):
        return match.group(0)
    return _plain_host(match, details)


# Remote targets of network commands: the first operand (ssh, ping, dig) or every
# "host:path" operand (scp, rsync). Options that take a value are skipped with it.
_OPTION_ARGS = {
    "ssh": "bcDEeFIiJLlmOoPpQRSWw",
    "mosh": "p",
    "ping": "cIiswtWlQMmpS",
    "ping6": "cIiswtWlQMmpS",
    "traceroute": "fmNpqwzsgi",
    "nc": "ipsqwWX",
    "ncat": "ipswx",
    "netcat": "ipsqw",
    "telnet": "bln",
    "dig": "bcfkpqtxy",
    "ssh-copy-id": "ipoF",
}
_HOST_TOKEN = re.compile(r"(?P<user>[\w.-]+@)?(?P<host>[A-Za-z0-9][A-Za-z0-9.-]*)(?P<rest>:.*)?")


def _target_token(token: str, details: _Details, *, remote_path: bool) -> str:
    found = _HOST_TOKEN.fullmatch(token)
    if found is None or (remote_path and not found.group("rest")):
        return token
    host = found.group("host")
    if host.lower() in _LOCAL_NAMES or host.replace(".", "").isdigit():
        return token
    if remote_path and len(host) == 1:
        return token  # C:\path, not a host
    plain_word = "." not in host and not found.group("user")
    if plain_word and not _numbered_host(host, needs_hyphen=False):
        return token  # "ssh into the box": prose after a command word
    new_host = details.put("IP" if _is_ip(host) else "HOST", host)
    return (found.group("user") or "") + new_host + (found.group("rest") or "")


def _command_targets(match: re.Match[str], details: _Details) -> str:
    command = match.group("cmd")
    remote_path = command in {"scp", "rsync", "sftp"}
    arg_letters = _OPTION_ARGS.get(command, "")
    tokens = re.split(r"([ \t]+)", match.group("args"))
    skip_next, done = False, False
    for i, token in enumerate(tokens):
        if not token or token.isspace() or done:
            continue
        if skip_next:
            skip_next = False
        elif token.startswith(("-", "+", "@", "<", "$", "~", "/", ".")):
            skip_next = len(token) == 2 and token[1] in arg_letters
        else:
            tokens[i] = _target_token(token, details, remote_path=remote_path)
            done = not remote_path
    return match.group(0)[: match.start("args") - match.start()] + "".join(tokens)


# --- paths --------------------------------------------------------------------------------

# A path starts after a delimiter, never inside another path: the characters a segment may
# hold are exactly those that may not come before a root (so "/a+/tmp" is not a root).
_PATH_START = r"(?:(?<=//)|(?<![\w.~@%+$/-]))"
_SEGMENT = r"[\w.~@%+-]+"
_RANDOM_SEGMENT = re.compile(
    r"tmp(?=[a-z0-9_]*\d)[a-z0-9_]{6,12}|tmp\.[A-Za-z0-9]{6,}|pytest-of-.+|pytest-\d+|\d+"
    r"|[0-9a-f]{8,}|_MEI\w+"
    r"|(?=(?:[A-Za-z_]*\d){2})(?=(?:[\d_]*[A-Za-z]){2})[A-Za-z0-9_]{8,}"
)


def _stable_tail(rest: str) -> str:
    """Drop the random directories right under a temporary root; keep the stable tail."""
    segments = rest.split("/")[1:]
    while len(segments) > 1 and _RANDOM_SEGMENT.fullmatch(segments[0]):
        segments.pop(0)
    return "".join("/" + s for s in segments)


def _tmp(match: re.Match[str], details: _Details) -> str:
    rest = match.group("rest") or ""
    tail = _stable_tail(rest)
    details.put(
        "TMP", match.group(0)[: len(match.group(0)) - len(tail)] if tail else match.group(0)
    )
    return _wordlike("TMP") + tail


def _tmp_windows(match: re.Match[str], details: _Details) -> str:
    rest = (match.group("rest") or "").replace("\\", "/")
    tail = _stable_tail(rest)
    sep = "\\" if "\\" in match.group(0) else "/"
    details.put(
        "TMP", match.group(0)[: len(match.group(0)) - len(tail)] if tail else match.group(0)
    )
    return _wordlike("TMP") + tail.replace("/", sep)


def _home(match: re.Match[str], details: _Details) -> str:
    return details.put("HOME", match.group(0))


# --- rules, in order ----------------------------------------------------------------------

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]{0,6},?"
_TIME = r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?"
_ZONE_NAME = r"(?:UTC|GMT|Z|[ECMP][SD]T|CES?T|BST|IST|JST|KST|HKT|SGT|AES?T|AEDT)"
_ZONE = r"(?:Z|[+-]\d{2}:?\d{2}|[ \t]" + _ZONE_NAME + r"\b)?"
_HOSTNAME = r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?"


def _put(kind: str, group: str = "") -> Replace:
    """Replace the whole match, or just one group of it, by the placeholder for ``kind``."""

    def replace(match: re.Match[str], details: _Details) -> str:
        if not group:
            return details.put(kind, match.group(0))
        whole, base = match.group(0), match.start()
        start, end = match.span(group)
        return whole[: start - base] + details.put(kind, match.group(group)) + whole[end - base :]

    return replace


_LAST_WORD = re.compile(r"\w*$")


def _word_before(match: re.Match[str]) -> str:
    """The word just before a match, skipping the separators between."""
    head = match.string[max(0, match.start() - 24) : match.start()].rstrip(" \t:=#([-")
    last = _LAST_WORD.search(head)
    return last.group(0).lower() if last else ""


def _ipv4(match: re.Match[str], details: _Details) -> str:
    if _word_before(match) in {"version", "release", "ver", "v"}:
        return match.group(0)  # "version 1.2.3.4" is a four-part version
    return _with_port(match, details, details.put("IP", match.group("host")))


def _ipv6(match: re.Match[str], details: _Details) -> str:
    address = match.group("ip")
    if not any(c.isdigit() for c in address):
        return match.group(0)  # "a::b" is C++ or Haskell, not an address
    if ("::" not in address and address.count(":") != 7) or not _is_ip(address):
        return match.group(0)
    return details.put("IP", match.group(0))


def _sha(match: re.Match[str], details: _Details) -> str | None:
    value = match.group("sha")
    has_letter, has_digit = re.search(r"[a-fA-F]", value), re.search(r"\d", value)
    if not (has_letter and has_digit) or re.fullmatch(r"\d+[eE]\d+", value):
        return match.group(0)
    if "0000" in value:
        return match.group(0)  # flags and constants (c0000005, 2b000002); hashes almost never
    return _put("SHA", "sha")(match, details)


_ERROR_WORDS = frozenset(
    {"code", "status", "errno", "signal", "exit", "exited", "returned", "rc", "error", "err"}
)


_GIT_RANGE = re.compile(r"\.\.\S+ $")


def _long_number(match: re.Match[str], details: _Details) -> str:
    before = match.string[max(0, match.start() - 24) : match.start()]
    # "exit code 3221225477" is an error code; "index a1b2c3d..e4f5a6b 100644" a git mode.
    git_mode = before.endswith("mode ") or (".." in before and _GIT_RANGE.search(before))
    if _word_before(match) in _ERROR_WORDS or git_mode:
        return match.group(0)
    return details.put("NUM", match.group(0))


def _ps_table(match: re.Match[str], details: _Details) -> str:
    """Replace the PID column of each row under a ps/top header."""
    header = match.group("header")
    column = 1 if header.split()[0] in {"USER", "UID"} else 0
    rows = [_pid_in_column(row, column, details) for row in match.group("rows").split("\n")]
    return header + "\n".join(rows)


def _pid_in_column(row: str, column: int, details: _Details) -> str:
    pieces = re.split(r"(\s+)", row)
    words = [i for i, piece in enumerate(pieces) if piece and not piece.isspace()]
    if len(words) > column and pieces[words[column]].isdigit():
        pieces[words[column]] = details.put("PID", pieces[words[column]])
    return "".join(pieces)


def _case_variants(*words: str) -> str:
    """An alternation of each word as written in lower, Capitalised and UPPER case."""
    return "|".join(v for w in words for v in dict.fromkeys((w, w.capitalize(), w.upper())))


def _uname_host(match: re.Match[str], details: _Details) -> str | None:
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    if match.string[line_start : match.start()].strip():
        return None
    return _plain_host(match, details)


_NETWORK_COMMANDS = (
    "ssh-copy-id", "ssh", "scp", "sftp", "rsync", "mosh", "telnet", "ping6", "ping",
    "traceroute", "nslookup", "dig", "ncat", "netcat", "nc",
)  # fmt: skip
_HOST_WORDS = (
    "on", "host", "server", "node", "machine", "instance", "worker", "vm", "box", "runner",
    "agent", "executor", "pod", "container", "replica",
)  # fmt: skip
_WORD_CHARS = chars(r"A-Za-z0-9_-")
_WINDOWS_USERS = re.compile(r":[\\/](?:Users|USERS|users|Documents and Settings)[\\/]")
_PID_COMMANDS = ("pmap", "jmap", "jstack", "jcmd", "jinfo", "kill", "gcore", "pstack", "pidstat")
_TRACERS = ("strace", "ltrace", "gdb", "lsof", "perf", "py-spy", "top", "htop", "rbspy", "ps")


_TRACER_ON_LINE = re.compile(r"\b(?:" + "|".join(_TRACERS) + r")\b")


def _traced_pid(match: re.Match[str], details: _Details) -> str | None:
    """``-p 4242`` is a pid when a tracer (strace, gdb, perf, ps …) runs on that line."""
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    if not _TRACER_ON_LINE.search(match.string, line_start, match.start()):
        return None
    return _put("PID", "pid")(match, details)


_STEPS: tuple[TextPass[_Details] | PassGroup[_Details], ...] = (
    TextPass(
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://(?:[^\s/?#@<>\"']*@)?"
            r"(?P<host>\[[0-9A-Fa-f:.]+\]|" + _HOSTNAME + r")(?::(?P<port>\d{1,5})(?!\w))?"
        ),
        _url,
        ("://",),
        anchor=re.compile("://"),
        widen=chars(r"A-Za-z0-9+.-"),
    ),
    TextPass(
        re.compile(
            r"(?<![\w.%+/-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}"
            r"(?![\w-]|\.\w|:[\w/~])"
        ),
        _email,
        ("@",),
        anchor=re.compile("@"),
        widen=chars(r"A-Za-z0-9._%+-"),
    ),
    TextPass(
        re.compile(
            r"(?<![\w.%+/-])[A-Za-z0-9._-]+@(?P<host>[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*)"
            r"(?![\w-]|\.\w)"
        ),
        _user_at_host,
        ("@",),
        anchor=re.compile("@"),
        widen=chars(r"A-Za-z0-9._-"),
    ),
    TextPass(
        re.compile(
            r"(?<![\w-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
            r"[0-9a-fA-F]{12}(?![\w-])"
        ),
        _put("UUID"),
        ("-",),
        anchor=re.compile(r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"),
        widen=chars("0-9a-fA-F"),
    ),
    TextPass(
        re.compile(
            r"\b(?:"
            + _DAY
            + r"[ \t]+)?(?:"
            + _MONTH
            + r"[ \t]+\d{1,2}(?:,?[ \t]+\d{4})?,?[ \t]+"
            + _TIME
            + r"(?:[ \t]?[AP]M)?"
            + r"(?:[ \t]+(?:"
            + _ZONE_NAME
            + r"|[+-]\d{4}))?(?:[ \t]+\d{4}\b)?"
            + r"|\d{1,2}[ \t]+"
            + _MONTH
            + r"[ \t]+\d{4}(?:[ \t]+"
            + _TIME
            + r"(?:[ \t]+(?:"
            + _ZONE_NAME
            + r"|[+-]\d{4}))?)?"
            + r")(?![\w:])"
        ),
        _put("TIMESTAMP"),
        anchor=re.compile(
            r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
        ),
        needs_digit=True,
    ),
    TextPass(
        re.compile(
            r"\d(?<![\w.:/-]\d)(?:"
            + r"\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ]"
            + _TIME
            + _ZONE
            + r")?"
            + r"|\d{3}/(?:0[1-9]|1[0-2])/(?:0[1-9]|[12]\d|3[01])(?:[ T]"
            + _TIME
            + r")?"
            + r"|\d?/"
            + _MONTH
            + r"/\d{4}:"
            + _TIME
            + r"(?:[ \t][+-]\d{4})?"
            + r"|\d?[/.-]\d{1,2}[/.-]\d{2,4}[ ,T]+"
            + _TIME
            + r"|(?<=[01])\d:[0-5]\d:[0-5]\d(?:[.,]\d{1,9})?"
            + r"|(?<=2)[0-3]:[0-5]\d:[0-5]\d(?:[.,]\d{1,9})?"
            + r")(?![\w:])"
        ),
        _put("TIMESTAMP"),
        needs_digit=True,
    ),
    TextPass(
        re.compile(
            r"(?<![0-9A-Fa-f:-])[0-9A-Fa-f]{2}(?P<s>[:-])(?:[0-9A-Fa-f]{2}(?P=s)){4}[0-9A-Fa-f]{2}"
            r"(?![\w:-])"
        ),
        _put("MAC"),
        anchor=re.compile(r":[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}:|-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-"),
        widen=chars("0-9A-Fa-f"),
    ),
    TextPass(
        re.compile(
            r"(?<![\w.])(?<![=<>~!]=)(?P<host>" + _IPV4 + r")(?!\w|\.\d)"
            r"(?::(?P<port>\d{1,5})(?![\w.]))?"
        ),
        _ipv4,
        (".",),
        # A literal "." first scans far faster than a digit class; the first octet is widened.
        anchor=re.compile(r"\.\d{1,3}\.\d{1,3}\.\d"),
        widen=chars("0-9"),
        reach=3,
        needs_digit=True,
    ),
    TextPass(
        re.compile(
            r"(?<![\w:.])(?P<ip>[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?:%[\w.]+)?(?![\w:])"
        ),
        _ipv6,
        (":",),
        anchor=re.compile(r"::|:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:"),
        widen=chars("0-9A-Fa-f:"),
    ),
    PassGroup(
        re.compile(r"/tmp|/var/|/private/|/dev/shm|/home/|/Users/|/root|:\\|:/"),  # noqa: S108
        (
            TextPass(
                re.compile(
                    r"(?i)\b[A-Z]:[\\/]Users[\\/][^\\/\s'\"<>]+[\\/]AppData[\\/]Local[\\/]Temp"
                    r"(?P<rest>(?:[\\/][^\\/\s'\"<>:;|&]+)*)"
                ),
                _tmp_windows,
                ("\\temp", "/temp"),
                fold_case=True,
                anchor=_WINDOWS_USERS,
                back=1,
            ),
            TextPass(
                re.compile(
                    _PATH_START + r"(?:(?:/private)?/var/folders/[\w.+-]+/[\w.+-]+/[TC]"
                    r"|/(?:private/)?(?:var/)?tmp|/dev/shm)(?![\w.-])(?P<rest>(?:/"
                    + _SEGMENT
                    + r")*)"
                ),
                _tmp,
                ("/tmp", "/var/folders", "/dev/shm"),  # noqa: S108 (patterns, not files)
                anchor=re.compile(r"/tmp|/var/|/private/|/dev/shm"),  # noqa: S108
            ),
            TextPass(
                # A user directory has more path after it or is a bare name: /home/run.sh is a file.
                re.compile(
                    _PATH_START + r"(?:/home|/Users)/(?:" + _SEGMENT + r"(?=/)|[\w-]+(?![\w.-]))"
                    r"|" + _PATH_START + r"/root(?![\w.-])"
                ),
                _home,
                ("/home/", "/Users/", "/root"),
                anchor=re.compile(r"/home/|/Users/|/root"),
            ),
            TextPass(
                re.compile(r"(?i)\b[A-Z]:[\\/](?:Users|Documents and Settings)[\\/][^\\/\s'\"<>]+"),
                _home,
                (":\\users", ":/users", "documents and settings"),
                fold_case=True,
                anchor=_WINDOWS_USERS,
                back=1,
            ),
        ),
    ),
    TextPass(
        re.compile(
            r"(?:Linux|Darwin|FreeBSD|OpenBSD|NetBSD|SunOS)[ \t]+"
            r"(?P<host>[A-Za-z0-9][\w.-]*)(?=[ \t]+\d+\.\d+)"
        ),
        _uname_host,
        ("Linux", "Darwin", "BSD", "SunOS"),
        anchor=re.compile(word_anchor("Linux", "Darwin", "FreeBSD", "OpenBSD", "NetBSD", "SunOS")),
        needs_digit=True,
    ),
    TextPass(
        re.compile(
            r"(?i)(?<![\w.-])(?P<key>(?:--?)?[\w-]*(?:host|hostname|server|servername|nodename"
            r"|fqdn))[\"']?(?P<sep>[ \t]*[=:][ \t]*[\"']?|[ \t]+)(?P<host>" + _HOSTNAME + r")"
            r"(?![\w(\[-]|\.\w)(?::(?P<port>\d{1,5})(?!\w))?"
        ),
        _keyed_host,
        ("host", "server", "nodename", "fqdn"),
        fold_case=True,
        anchor=re.compile(
            "(?:" + _case_variants("host", "server", "nodename", "fqdn") + r")[\w-]*[\"']?"
            r"(?:[ \t]*[=:][ \t]*[\"']?|[ \t]+)[A-Za-z0-9]"
        ),
        widen=_WORD_CHARS,
    ),
    TextPass(
        re.compile(
            r"[\n;&|(`$][ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?"
            r"(?P<cmd>" + "|".join(_NETWORK_COMMANDS) + r")[ \t]+(?P<args>[^\n|;&<>()]*)"
        ),
        _command_targets,
        _NETWORK_COMMANDS,
        # Rare characters first: a line start or a shell operator, then the command word.
        anchor=re.compile(
            r"[\n;&|(`$][ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?(?:"
            + "|".join(_NETWORK_COMMANDS)
            + r")"
            r"[ \t]"
        ),
    ),
    TextPass(
        re.compile(r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9-]+)*\b"),
        _put("HOST"),
        ("ip-",),
        anchor=re.compile("ip-"),
        needs_digit=True,
    ),
    TextPass(
        # Found from the name (a space, then a token with a digit), the host word checked
        # after: scanning for fifteen words in three cases would cost more than all the rest.
        # Host names are lower case; "on ORA-04031" names an error, not a machine.
        re.compile(r"[ \t]+(?P<host>[a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w.-]|\.\w)"),
        _context_host,
        anchor=re.compile(r"[ \t](?=[a-z][a-z0-9-]*\d)"),
        needs_digit=True,
    ),
    TextPass(
        re.compile(
            r"(?<![\w.@/\\:$-])(?P<host>(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,13})"
            r"(?![\w-]|\.\w|\()(?::(?P<port>\d{1,5})(?![\w.]))?"
        ),
        _bare_fqdn,
        anchor=re.compile(r"\.(?:" + "|".join(sorted(_BARE_TLDS)) + r")(?![a-z0-9-])"),
        widen=chars("a-z0-9.-"),
    ),
    PassGroup(
        re.compile(_case_variants("port", "listen") + "|localhost:"),
        (
            TextPass(
                re.compile(
                    r"(?i)(?<![\w.-])(?:--?port|port|[\w-]*_port|listen)"
                    r"(?:[\"']?[ \t]*[=:][ \t]*[\"']?|[ \t]+)(?P<port>\d{2,5})(?![\w.])"
                ),
                _put("PORT", "port"),
                ("port", "listen"),
                fold_case=True,
                anchor=re.compile(
                    "(?:"
                    + _case_variants("port", "listen")
                    + r")[\"']?(?:[ \t]*[=:][ \t]*[\"']?|[ \t]+)\d"
                ),
                widen=_WORD_CHARS,
            ),
            TextPass(
                re.compile(r"\blocalhost:(?P<port>\d{2,5})(?!\w)"),
                _put("PORT", "port"),
                ("localhost:",),
                anchor=re.compile("localhost:"),
            ),
        ),
        needs_digit=True,
    ),
    TextPass(
        # "ps aux" rows without their header: USER PID %CPU %MEM VSZ RSS TTY.
        re.compile(
            r"\n[\w.+-]+[ \t]+(?P<pid>\d+)[ \t]+\d+\.\d+[ \t]+\d+\.\d+[ \t]+\d+[ \t]+\d+[ \t]+"
            r"(?:\?|pts/\d+|tty\w*)[ \t]"
        ),
        _put("PID", "pid"),
        anchor=re.compile(r"\n[\w.+-]+[ \t]+\d+[ \t]+\d+\.\d"),
        needs_digit=True,
    ),
    TextPass(
        re.compile(r"(?<!\w)0x[0-9a-fA-F]{9,16}(?!\w)"),
        _put("ADDR"),
        ("0x",),
        anchor=re.compile("0x"),
    ),
    PassGroup(
        re.compile(_case_variants("pid", "tid") + "|" + "|".join(_PID_COMMANDS) + "|-p|/proc/"),
        (
            TextPass(
                re.compile(r"(?i)\b(?:ppid|pid|tid)\b[ \t]*[:=#]?[ \t]*(?P<pid>\d+)\b"),
                _put("PID", "pid"),
                ("pid", "tid"),
                fold_case=True,
                anchor=re.compile(word_anchor("ppid", "pid", "tid", cases=True)),
            ),
            TextPass(
                re.compile(
                    r"\b(?:" + "|".join(_PID_COMMANDS) + r")\b"
                    r"(?:[ \t]+-{1,2}[\w=:-]+)*[ \t]+(?P<pid>\d+)\b"
                ),
                _put("PID", "pid"),
                _PID_COMMANDS,
                anchor=re.compile(word_anchor(*_PID_COMMANDS)),
            ),
            TextPass(
                re.compile(r"[ \t](?:-p|--pid)[ \t=]?(?P<pid>\d+)\b"),
                _traced_pid,
                (" -p", "--pid"),
            ),
            TextPass(re.compile(r"/proc/(?P<pid>\d+)(?=/|\b)"), _put("PID", "pid"), ("/proc/",)),
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
    ),
    TextPass(
        re.compile(
            r"(?<![\w-])(?:(?<=\.\.)|(?<!\.))(?P<sha>[0-9a-f]{7,128}|[0-9A-F]{32,128})(?![\w-])"
        ),
        _sha,
        # A digest has a digit next to a hex letter somewhere; digits are rare enough to scan for.
        anchor=re.compile(r"\d(?:[a-fA-F]|(?<=[a-fA-F]\d))"),
        widen=chars("0-9a-fA-F"),
        reach=128,
        needs_digit=True,
    ),
    TextPass(
        re.compile(r"\d(?<![\w.+~^@#]\d)(?<!==\d)(?<![A-Za-z]-\d)\d{5,}(?:\.\d+)?(?!\w|\.\d)"),
        _long_number,
        needs_digit=True,
    ),
)


_CHAIN = PassChain(_STEPS)


def abstract(text: str) -> Abstracted:
    """Replace instance details (hosts, IPs, ports, SHAs, paths, times, ids) by placeholders."""
    details = _Details()
    if "<" in text:
        text = _PLACEHOLDER.sub(lambda m: _wordlike(m.group(1)), text)
    # The leading newline gives patterns that need a delimiter before a token one at the start.
    text = _CHAIN.run("\n" + text, details)[1:]
    if _WORDLIKE in text:
        text = _WORDLIKE_PLACEHOLDER.sub(lambda m: placeholder(m.group(1)), text)
    return Abstracted(text=text, details=details.as_dict())


def sanitize(text: str) -> Abstracted:
    """Redact secrets, then abstract instance details: the path of every stored or embedded text."""
    redacted = redact(text)
    result = abstract(redacted.text)
    return Abstracted(text=result.text, details=result.details, redactions=redacted.kinds)
