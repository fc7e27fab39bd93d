"""Find hard-coded places: URLs, connection strings, hosts, e-mail addresses and file paths."""

from __future__ import annotations

import re
from collections.abc import Iterator

from metisgraph.ingest.code.lifting import Lift, Source, context_hint, is_placeholder, snake_name

__all__ = ["host_lifts", "path_lifts", "url_lifts"]

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]"})  # noqa: S104
# Top-level domains that mark a dotted word as a host; file extensions (py, sh, md, rs) and
# words common in dotted module names (local, info, name) are left out on purpose.
_TLDS = frozenset(
    {
        "com", "net", "org", "io", "dev", "ai", "app", "cloud", "co", "edu", "gov", "mil",
        "int", "internal", "lan", "corp", "intranet", "localdomain", "example", "test", "us",
        "uk", "de", "fr", "nl", "jp", "cn", "ru", "eu", "ca", "au", "ch", "se", "es", "br",
        "kr", "biz", "xyz", "tech", "site", "online", "me", "tv", "cc", "ly", "gg", "svc",
        "cluster"
    }
)  # fmt: skip
_URL = re.compile(
    r"""(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,30})://"""
    r"""(?:(?P<user>[^\s:/@"'`<>]+)(?::(?P<password>[^\s@/"'`<>]*))?@)?"""
    r"""(?P<host>\[[0-9a-fA-F:]+\]|[^\s:/"'`<>?#@]+)(?::(?P<port>\d{1,5}))?"""
)
_IPV4 = re.compile(
    r"(?<![\w.=<>~^-])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}"
    r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.]|\.\d)"
)
_FQDN = re.compile(
    r"(?<![\w.@/$-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"(?P<tld>[A-Za-z]{2,24})(?![\w-]|\.\w)"
)
_USER_AT_HOST = re.compile(r"(?<![\w.+-])(?P<user>[A-Za-z_][\w.-]*)@(?P<host>[A-Za-z0-9][\w.-]*\w)")
_EMAIL_TLD = re.compile(r"\.[A-Za-z]{2,24}$")
_KEYED_HOST = re.compile(
    r"""(?<!\w)(?P<key>(?:[A-Za-z_][\w.-]{0,40}?)?(?:host|hostname|server|endpoint|address|addr))["'`]?\s*"""
    r"""(?:=(?!=)|:=|:(?!:))\s*(?P<q>["'`]?)(?P<value>[A-Za-z0-9][\w.-]*[A-Za-z0-9])(?P=q)(?![\w.])""",
    re.I,
)
_ANY_HOST_WORD = re.compile(r"host|server|endpoint|addr", re.I)
_HOST_FLAG = re.compile(r"(?<![\w-])(?:-h|--host(?:name)?)(?:=|\s+)(?P<value>[A-Za-z0-9][\w.-]*\w)")
_UNIX_PATH = re.compile(r"(?<![\w./~$\\}@])/(?P<root>[\w.@+-]+)(?:/[\w.@+,=-]+)+/?")
_WINDOWS_PATH = re.compile(r"(?<![\w\\])[A-Za-z]:\\(?:[^\\\s\"'`<>|:*?]+\\)*[^\\\s\"'`<>|:*?]*")
# Roots under which a path belongs to one machine, one user or one project, not to the OS.
# Container conventions (/app, /code) are the same everywhere, so they stay in the template.
_INSTANCE_ROOTS = frozenset(
    {
        "home", "Users", "root", "var", "opt", "srv", "mnt", "media", "data", "tmp",
        "workspace", "workspaces", "work", "testbed", "scratch", "nfs", "shared", "storage",
        "Volumes", "project", "projects", "builds", "export", "gpfs", "lustre", "backup",
        "backups", "logs"
    }
)  # fmt: skip


def url_lifts(source: Source) -> Iterator[Lift]:
    """A URL's origin (scheme, host, port) becomes `base_url`; userinfo is lifted on its own."""
    for match in _URL.finditer(source.code):
        if not source.allows(*match.span()) or match["scheme"].lower() == "file":
            continue
        host = match["host"]
        if is_placeholder(host) or any(c in host for c in "{$<%") or host in _LOOPBACK:
            continue
        if match["user"] is not None:
            yield from _userinfo_lifts(match)
            continue
        start, end = match.span()
        hint = context_hint(source.code, start) if _fills_literal(source, end) else None
        yield Lift(start, end, "url", match.group(), hint or "base_url")


def _userinfo_lifts(match: re.Match[str]) -> Iterator[Lift]:
    """`postgres://bob:pw@db:5432/x` → `postgres://{{user}}:{{password}}@{{host}}:5432/x`."""
    if not is_placeholder(match["user"]):
        yield Lift(*match.span("user"), "user", match["user"], "user")
    password = match["password"]
    if password and not is_placeholder(password):
        yield Lift(*match.span("password"), "credential", password, "password")
    yield Lift(*match.span("host"), "host", match["host"], "host")


def _fills_literal(source: Source, end: int) -> bool:
    """True when the URL ends where its string literal (or line) ends: it is the whole value."""
    return end >= len(source.code) or source.code[end] in "\"'`\n"


def host_lifts(source: Source) -> Iterator[Lift]:
    """Hosts named by a key or flag, user@host pairs, IPv4 addresses and domain names."""
    yield from _keyed_host_lifts(source)
    yield from _user_host_lifts(source)
    for match in _IPV4.finditer(source.code):
        value = match.group()
        if source.allows(*match.span()) and not value.startswith(("127.", "0.", "255.")):
            yield Lift(*match.span(), "host", value, context_hint(source.code, match.start()))
    for match in _FQDN.finditer(source.code):
        if match["tld"].lower() in _TLDS and source.allows(*match.span()):
            value = match.group()
            yield Lift(*match.span(), "host", value, context_hint(source.code, match.start()))


def _keyed_host_lifts(source: Source) -> Iterator[Lift]:
    patterns: list[tuple[re.Pattern[str], str | None]] = [(_HOST_FLAG, None)]
    if _ANY_HOST_WORD.search(source.code):  # most code names no host key: skip the slow scan
        patterns.insert(0, (_KEYED_HOST, "key"))
    for pattern, key_group in patterns:
        for match in pattern.finditer(source.code):
            value = match["value"]
            start, end = match.span("value")
            if value.lower() in _LOOPBACK or value.isdigit() or not source.allows(start, end):
                continue
            key = match[key_group] if key_group else "host"
            if not _plausible_host(key, value):
                continue
            yield Lift(start, end, "host", value, snake_name(key))


def _plausible_host(key: str, value: str) -> bool:
    """`host=db01` is a host; `address`, `server` and `-h` need a dotted value to be believed."""
    if key.lower().endswith(("host", "hostname")) and key != "-h":
        return not value.replace(".", "").isdigit() or _IPV4.fullmatch(value) is not None
    if _IPV4.fullmatch(value):
        return True
    last = value.rsplit(".", 1)
    return len(last) == 2 and last[1].lower() in _TLDS


def _user_host_lifts(source: Source) -> Iterator[Lift]:
    """`deploy@web1.example.com` in a command is a login; elsewhere it is an e-mail address."""
    for match in _USER_AT_HOST.finditer(source.code):
        host = match["host"]
        if not source.allows(*match.span()) or host.lower() in _LOOPBACK:
            continue
        is_host = _IPV4.fullmatch(host) or _EMAIL_TLD.search(host)
        if not is_host:
            continue
        if source.language == "bash":
            if match["user"] != "git":
                yield Lift(*match.span("user"), "user", match["user"], "user")
            yield Lift(*match.span("host"), "host", host, "host")
        elif _EMAIL_TLD.search(host) and not _IPV4.fullmatch(host):
            yield Lift(*match.span(), "email", match.group(), "email")


def path_lifts(source: Source) -> Iterator[Lift]:
    """Absolute paths under instance roots (/home, /srv, /data …) and Windows drive paths."""
    for match in _UNIX_PATH.finditer(source.code):
        if match["root"] in _INSTANCE_ROOTS and source.allows(*match.span()):
            yield Lift(
                *match.span(), "path", match.group(), context_hint(source.code, match.start())
            )
    for match in _WINDOWS_PATH.finditer(source.code):
        if len(match.group()) > 3 and source.allows(*match.span()):
            yield Lift(
                *match.span(), "path", match.group(), context_hint(source.code, match.start())
            )
