"""Host names, recognised by their context, never by shape alone: a dotted lowercase word
is far more often code than a machine (see ``abstraction`` for the rules).
"""

from __future__ import annotations

import ipaddress
import re

from metisgraph.ingest.sanitize.passes import TextPass, case_variants, chars, word_anchor
from metisgraph.ingest.sanitize.placeholders import Details, put, word_before

__all__ = [
    "HOSTNAME",
    "HOST_PASSES",
    "LOCAL_NAMES",
    "WORD_CHARS",
    "host_or_ip",
    "is_ip",
    "numbered_host",
    "with_port",
]

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
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


def is_ip(value: str) -> bool:
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


def numbered_host(name: str, *, needs_hyphen: bool) -> bool:
    """``server-01``, ``web3``, ``db-prod-2``: a name with a number that is not a version."""
    lowered = name.lower()
    if not re.search(r"\d", lowered) or (needs_hyphen and "-" not in lowered):
        return False
    prefix = re.match(r"[a-z]+", lowered)
    return prefix is not None and prefix.group(0) not in _NOT_HOST_PREFIXES


def host_or_ip(value: str, details: Details) -> str:
    if value.lower() in LOCAL_NAMES:
        return value
    return details.put("IP" if is_ip(value) else "HOST", value)


def with_port(match: re.Match[str], details: Details, host: str) -> str:
    """Rebuild a match with its ``host`` group (and optional ``port`` group) replaced."""
    whole, base = match.group(0), match.start()
    spans = [(match.span("host"), host)]
    if match.groupdict().get("port"):
        spans.append((match.span("port"), details.put("PORT", match.group("port"))))
    for (start, end), new in sorted(spans, reverse=True):
        whole = whole[: start - base] + new + whole[end - base :]
    return whole


def _plain_host(match: re.Match[str], details: Details) -> str:
    host = match.group("host")
    if host.lower() in LOCAL_NAMES:
        return match.group(0)
    return with_port(match, details, details.put("HOST", host))


_STRONG_HOST_KEYS = frozenset({"host", "hostname", "fqdn", "nodename", "servername"})
_NOT_HOST_VALUES = frozenset(
    {
        "none", "null", "nil", "true", "false", "str", "string", "self", "any", "all",
        "default", "the", "a", "an", "is", "was", "are", "and", "or", "not", "to", "of",
        "in", "on", "for", "with", "this", "that", "it", "be", "by", "from", "as", "at",
    }
)  # fmt: skip


def _keyed_host(match: re.Match[str], details: Details) -> str:
    key = re.split(r"[_-]", match.group("key").lower().lstrip("-"))[-1]
    host = match.group("host")
    labels = host.lower().split(".")
    strong = key in _STRONG_HOST_KEYS and match.group("sep").strip() in {"=", ":"}
    if (
        host.lower() in LOCAL_NAMES | _NOT_HOST_VALUES
        or host.lower() == key
        or labels[0] in _CODE_RECEIVERS
        or labels[-1] in _FILE_EXTENSIONS
    ):
        return match.group(0)
    if len(labels) > 1:
        ok = strong or _is_fqdn(host)
    else:
        ok = strong or numbered_host(host, needs_hyphen=False)
    return with_port(match, details, details.put("HOST", host)) if ok else match.group(0)


def _context_host(match: re.Match[str], details: Details) -> str | None:
    """A numbered name after a host word: ``on server-01``, ``node worker-3``."""
    word = word_before(match)
    if word not in _HOST_WORDS:
        return None
    if not numbered_host(match.group("host"), needs_hyphen=word == "on"):
        return None
    return _plain_host(match, details)


def _bare_fqdn(match: re.Match[str], details: Details) -> str:
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


def _target_token(token: str, details: Details, *, remote_path: bool) -> str:
    found = _HOST_TOKEN.fullmatch(token)
    if found is None or (remote_path and not found.group("rest")):
        return token
    host = found.group("host")
    if host.lower() in LOCAL_NAMES or host.replace(".", "").isdigit():
        return token
    if remote_path and len(host) == 1:
        return token  # C:\path, not a host
    plain_word = "." not in host and not found.group("user")
    if plain_word and not numbered_host(host, needs_hyphen=False):
        return token  # "ssh into the box": prose after a command word
    new_host = details.put("IP" if is_ip(host) else "HOST", host)
    return (found.group("user") or "") + new_host + (found.group("rest") or "")


def _command_targets(match: re.Match[str], details: Details) -> str:
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


def _uname_host(match: re.Match[str], details: Details) -> str | None:
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
WORD_CHARS = chars(r"A-Za-z0-9_-")
HOSTNAME = r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?"

_UNAME: TextPass[Details] = TextPass(
    re.compile(
        r"(?:Linux|Darwin|FreeBSD|OpenBSD|NetBSD|SunOS)[ \t]+"
        r"(?P<host>[A-Za-z0-9][\w.-]*)(?=[ \t]+\d+\.\d+)"
    ),
    _uname_host,
    ("Linux", "Darwin", "BSD", "SunOS"),
    anchor=re.compile(word_anchor("Linux", "Darwin", "FreeBSD", "OpenBSD", "NetBSD", "SunOS")),
    needs_digit=True,
)
_KEYED: TextPass[Details] = TextPass(
    re.compile(
        r"(?i)(?<![\w.-])(?P<key>(?:--?)?[\w-]*(?:host|hostname|server|servername|nodename"
        r"|fqdn))[\"']?(?P<sep>[ \t]*[=:][ \t]*[\"']?|[ \t]+)(?P<host>" + HOSTNAME + r")"
        r"(?![\w(\[-]|\.\w)(?::(?P<port>\d{1,5})(?!\w))?"
    ),
    _keyed_host,
    ("host", "server", "nodename", "fqdn"),
    fold_case=True,
    anchor=re.compile(
        "(?:" + case_variants("host", "server", "nodename", "fqdn") + r")[\w-]*[\"']?"
        r"(?:[ \t]*[=:][ \t]*[\"']?|[ \t]+)[A-Za-z0-9]"
    ),
    widen=WORD_CHARS,
)
_COMMAND_TARGETS: TextPass[Details] = TextPass(
    re.compile(
        r"[\n;&|(`$][ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?"
        r"(?P<cmd>" + "|".join(_NETWORK_COMMANDS) + r")[ \t]+(?P<args>[^\n|;&<>()]*)"
    ),
    _command_targets,
    _NETWORK_COMMANDS,
    # Rare characters first: a line start or a shell operator, then the command word.
    anchor=re.compile(
        r"[\n;&|(`$][ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+)*)?(?:" + "|".join(_NETWORK_COMMANDS) + r")"
        r"[ \t]"
    ),
)
_CLOUD_NAME: TextPass[Details] = TextPass(
    re.compile(r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9-]+)*\b"),
    put("HOST"),
    ("ip-",),
    anchor=re.compile("ip-"),
    needs_digit=True,
)
_AFTER_HOST_WORD: TextPass[Details] = TextPass(
    # Found from the name (a space, then a token with a digit), the host word checked
    # after: scanning for fifteen words in three cases would cost more than all the rest.
    # Host names are lower case; "on ORA-04031" names an error, not a machine.
    re.compile(r"[ \t]+(?P<host>[a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w.-]|\.\w)"),
    _context_host,
    anchor=re.compile(r"[ \t](?=[a-z][a-z0-9-]*\d)"),
    needs_digit=True,
)
_BARE_FQDN: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![\w.@/\\:$-])(?P<host>(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,13})"
        r"(?![\w-]|\.\w|\()(?::(?P<port>\d{1,5})(?![\w.]))?"
    ),
    _bare_fqdn,
    anchor=re.compile(r"\.(?:" + "|".join(sorted(_BARE_TLDS)) + r")(?![a-z0-9-])"),
    widen=chars("a-z0-9.-"),
)

# In this order: a name in a uname line, after a host key, after a network command, an
# EC2 name, after a host word, then a bare fully qualified name.
HOST_PASSES = (_UNAME, _KEYED, _COMMAND_TARGETS, _CLOUD_NAME, _AFTER_HOST_WORD, _BARE_FQDN)
