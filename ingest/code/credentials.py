"""Find hard-coded credentials: keyed secrets, Authorization headers, flags and known token shapes.

Each finding becomes a `credential` parameter whose value is never stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from metisgraph.ingest.code.lifting import Lift, Source, is_placeholder, snake_name

__all__ = ["credential_lifts"]

# Names that announce a secret (the pattern itself holds none).
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|pwd|secret|secret[_-]?key|token|api[_-]?key|apikey|"  # noqa: S105
    r"access[_-]?key(?:[_-]?id)?|private[_-]?key|client[_-]?secret|credentials?)"
)
_ANY_SECRET_WORD = re.compile(_SECRET_WORD, re.I)
_VALUE = (
    r"""(?:(?P<q>["'`])(?P<quoted>(?:\\.|(?!(?P=q))[^\\\n])*)(?P=q)|(?P<bare>[^\s"'`,;)}\]#&|]+))"""
)
_KEYED = re.compile(
    rf"""(?<!\w)(?P<key>(?:[A-Za-z_][\w.-]{{0,40}}?)?{_SECRET_WORD})["'`]?\s*"""
    rf"""(?::\s*[A-Za-z_][\w\[\]., |]*?\s*=(?!=)|:=|=>|=(?!=)|:(?!:))\s*{_VALUE}""",
    re.I,
)
_FLAG = re.compile(
    rf"""(?<![\w-])--(?P<key>(?:[\w-]{{0,40}}?){_SECRET_WORD})\s+{_VALUE}""",
    re.I,
)
_SCHEMES = r"(?:Bearer|Basic|Token|Digest|Bot|Negotiate)"
_HEADER = re.compile(
    rf"""(?P<key>(?:Proxy-)?Authorization)["'`]?\s*[:=]\s*(?:[fFrRbB]?["'`])?\s*"""
    rf"""(?:{_SCHEMES}\s+)?(?!{_SCHEMES}\b)(?P<bare>[^\s"'`,}}]{{3,}})""",
    re.I,
)
_URL_PASSWORD = re.compile(
    r"""(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/@"'`<>]+:(?P<bare>[^\s@/"'`<>]+)@"""
)
_MYSQL = re.compile(r"""\bmysql(?:dump|admin|import)?\b[^\n|;&]*?\s-p(?P<bare>[^\s'"-][^\s'"]*)""")
_SHAPES = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----.*?-----END (?:[A-Z]+ )*PRIVATE KEY-----",
            re.S,
        ),
    ),
    ("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b|\bgithub_pat_\w{30,}")),
    ("token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("api_key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("token", re.compile(r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}")),
)
_NOT_SECRETS = frozenset({"pwd", "oldpwd", "token_type", "tokens"})


def credential_lifts(source: Source) -> Iterator[Lift]:
    """Every hard-coded secret in the source, most specific shapes first."""
    yield from _shape_lifts(source)
    yield from _header_lifts(source)
    yield from _url_password_lifts(source)
    if _ANY_SECRET_WORD.search(source.code):  # most code names no secret: skip the slow scans
        for pattern in (_KEYED, _FLAG):
            yield from _keyed_lifts(source, pattern)
    yield from _keyed_lifts(source, _MYSQL)


def _shape_lifts(source: Source) -> Iterator[Lift]:
    for name, pattern in _SHAPES:
        for match in pattern.finditer(source.code):
            yield Lift(match.start(), match.end(), "credential", match.group(), name)


def _header_lifts(source: Source) -> Iterator[Lift]:
    for match in _HEADER.finditer(source.code):
        start, end = match.span("bare")
        value = match["bare"]
        if is_placeholder(value) or "{" in value or not source.allows(start, end):
            continue
        yield Lift(start, end, "credential", value, "auth_token")


def _url_password_lifts(source: Source) -> Iterator[Lift]:
    for match in _URL_PASSWORD.finditer(source.code):
        start, end = match.span("bare")
        if not is_placeholder(match["bare"]) and source.allows(start, end):
            yield Lift(start, end, "credential", match["bare"], "password")


def _keyed_lifts(source: Source, pattern: re.Pattern[str]) -> Iterator[Lift]:
    for match in pattern.finditer(source.code):
        key = match.groupdict().get("key")
        if key and key.lower().strip("-_") in _NOT_SECRETS:
            continue
        group = "quoted" if match.groupdict().get("quoted") is not None else "bare"
        start, end = match.span(group)
        value = match[group]
        if value is None or is_placeholder(value) or _is_reference(source, group, start, end):
            continue
        if group == "bare" and value.isdigit():
            continue  # max_tokens: 512 is a limit, not a secret
        yield Lift(start, end, "credential", value, snake_name(key) if key else "password")


def _is_reference(source: Source, group: str, start: int, end: int) -> bool:
    """In a programming language an unquoted value is a variable, not a secret."""
    if group == "bare":
        return source.literal_only and source.string_at(start, end) is None
    return not source.allows(start, end)
