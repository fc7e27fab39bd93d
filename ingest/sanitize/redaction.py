"""Redaction: every secret in a text becomes ``[REDACTED:<kind>]`` before anything is stored.

Two families of rules run in a fixed order. Token rules know a credential by its
own shape (``AKIA…`` access key ids, ``ghp_…`` tokens, JWTs, PEM blocks); they
replace the whole token wherever it stands, even glued to other text. Context
rules know a secret by where it stands: a password in a URL, an ``Authorization``
header, a value assigned to a name such as ``DB_PASSWORD``, ``api_key`` or
``--token``. Token rules run first, so a GitHub token assigned to ``GITHUB_TOKEN``
is reported as ``github_token`` and the assignment rule then leaves the marker
alone. A value that only refers to a secret (``$DB_PASSWORD``, ``os.environ[...]``,
``{{ secrets.TOKEN }}``, ``None``, a type annotation) is not a secret and stays.

Every pattern is compiled once, starts with a literal or a character class (or is
found through a fast anchor, see ``TextPass``) and has no nested quantifiers, so
redaction stays linear in the size of the text.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from metisgraph.ingest.sanitize.passes import PassChain, PassGroup, TextPass, chars, word_anchor
from metisgraph.ingest.sanitize.secrets import (
    is_reference,
    is_secret_value,
    is_template,
    looks_generated,
    looks_random,
    names_no_secret,
    secret_kind_for_name,
)

__all__ = ["Redacted", "is_redacted", "marker", "redact", "redact_id", "redact_value"]


@dataclass(frozen=True)
class Redacted:
    """A text with every secret replaced, and how many secrets of each kind were found."""

    text: str
    kinds: dict[str, int]


def marker(kind: str) -> str:
    """The text a secret of ``kind`` is replaced by."""
    return f"[REDACTED:{kind}]"


def is_redacted(value: str) -> bool:
    """Whether ``value`` is (or starts with) a redaction marker."""
    return value.startswith("[REDACTED:")


# --- redaction rules ------------------------------------------------------------------------

# A value: double-quoted (with escapes), single-quoted, backticked, or bare up to a delimiter.
_VALUE = r"""(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|`[^`\n]*`|[^\s'"`,;&]+)"""
_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "credential", "authorization")
# Every case a keyword is written in, as literals: far faster than IGNORECASE to scan for.
_KEYWORD_ALTERNATION = "|".join(v for w in _KEYWORDS for v in (w, w.upper(), w.capitalize()))
_NAME_CHARS = chars(r"A-Za-z0-9_.-")
_SECRET_NAME = r"(?P<name>[A-Za-z0-9_.-]*(?:" + "|".join(_KEYWORDS) + r")[A-Za-z0-9_.-]*)"
# One pass for both ways of giving a secret a name: "DB_PASSWORD=…", "password: …",
# '"token": "…"' and, after a dash, also "--token …" (a space separates flag and value).
_ASSIGNMENT_ANCHOR = re.compile(
    "(?:" + _KEYWORD_ALTERNATION + r")[A-Za-z0-9_.-]*(?:[\"']?[ \t]*[:=]|[ \t]+[^\s-])"
)
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])(?P<dash>--?)?" + _SECRET_NAME + r"[\"']?"
    r"(?:[ \t]*(?::=|=>|=(?!=)|:(?![:/]))[ \t]*|(?(dash)[ \t]+(?!-)|(?!)))" + _VALUE,
    re.IGNORECASE,
)
_AWS_SECRET_NAME = re.compile(r"aws_?secret|secret_?access_?key", re.IGNORECASE)
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")

Decide = Callable[[re.Match[str]], str | None]


@dataclass(frozen=True)
class _Secret:
    """Where the secret of a match lies, and whether it was written in quotes."""

    value: str
    start: int
    quoted: bool


def _secret(match: re.Match[str]) -> _Secret:
    """A ``value`` group is loosely bounded; a ``secret`` group exactly; else the whole match."""
    groups = match.re.groupindex
    if "value" in groups:
        raw, start = match.group("value"), match.start("value")
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'`":
            return _Secret(raw[1:-1], start + 1, quoted=True)
        # A bare value ends at the code or prose around it: "f(password=x)", "token=None):".
        return _Secret(raw.rstrip(")]}>:."), start, quoted=False)
    if "secret" in groups:
        return _Secret(match.group("secret"), match.start("secret"), quoted=False)
    return _Secret(match.group(0), match.start(), quoted=False)


def _replacement(match: re.Match[str], kind: str) -> str:
    """The match with its secret replaced by the marker."""
    secret = _secret(match)
    start, end = secret.start - match.start(), secret.start + len(secret.value) - match.start()
    whole = match.group(0)
    return whole[:start] + marker(kind) + whole[end:]


def _redactor(decide: Decide | str) -> Callable[[re.Match[str], Counter[str]], str | None]:
    def rewrite(match: re.Match[str], kinds: Counter[str]) -> str | None:
        kind = decide if isinstance(decide, str) else decide(match)
        if kind is None:
            return None
        kinds[kind] += 1
        return _replacement(match, kind)

    return rewrite


def _by_name(match: re.Match[str]) -> str | None:
    """The kind announced by the ``name`` group, if the value is a secret and not a reference."""
    name = match.group("name")
    category = secret_kind_for_name(name)
    if category is None:
        return None
    secret = _secret(match)
    if _AWS_SECRET_NAME.search(name) and _AWS_SECRET_VALUE.fullmatch(secret.value):
        return "aws_secret_key"
    return category if is_secret_value(category, secret.value, secret.quoted) else None


def _fixed(kind: str, check: Callable[[str], bool] | None = None) -> Decide:
    """Always ``kind``, unless the value is already redacted, a reference, or fails ``check``."""

    def decide(match: re.Match[str]) -> str | None:
        value = _secret(match).value
        if is_redacted(value) or (check is not None and not check(value)):
            return None
        # Values after -p, -u user:, in a URL or a .netrc are literal: only templates stay.
        return None if is_template(value) else kind

    return decide


def _openai_like(value: str) -> bool:
    return bool(re.search(r"\d", value) and re.search(r"[A-Z]", value))


def _aws_secret_shape(value: str) -> bool:
    """Forty random base64 characters: every class well represented, not a path or a name.

    A random key has about 6 digits, 16 upper and 16 lower case letters; a Java test
    name or a path of the same length has one or two digits and few capitals.
    """
    digits = sum(c.isdigit() for c in value)
    upper = sum(c.isupper() for c in value)
    lower = sum(c.islower() for c in value)
    return (
        digits >= 3
        and upper >= 5
        and lower >= 5
        and value.count("/") <= 3
        and "//" not in value
        and not value.startswith("/")
    )


_NAME_BEFORE = re.compile(r"([A-Za-z0-9_.-]+)[\"'`]?[ \t]*$")


def _generic(match: re.Match[str]) -> str | None:
    """A generated-looking value assigned to any name, unless the name says it is an id or
    a digest (``X=9fJ2kLq8…`` is redacted; ``request_id=…``, ``sha256=…`` stay)."""
    value, text, at = match.group("secret"), match.string, match.start()
    if value.startswith("/") or text[at - 1 : at + 2].count(":") > 1:  # a URL, a Java::name
        return None
    if is_template(value) or not looks_generated(value):
        return None
    name = _NAME_BEFORE.search(match.string, max(0, match.start() - 64), match.start())
    return None if name and names_no_secret(name.group(1)) else "high_entropy"


def _auth_kind(match: re.Match[str]) -> str | None:
    if is_redacted(match.group("secret")):
        return None
    return "basic_auth" if match.group("scheme").lower() == "basic" else "bearer_token"


def _token(kind: str, pattern: str) -> TextPass[Counter[str]]:
    """A credential known by its own shape (a literal prefix); replaced wherever it stands."""
    return TextPass(re.compile(pattern), _redactor(kind))


def _glued(kind: str, prefix: str, body: str) -> TextPass[Counter[str]]:
    """A credential whose short prefix is also the end of words (``TASK``, ``DISK``): found
    by its prefix, kept only where the prefix starts a word."""
    pattern = re.compile(f"(?<![A-Za-z0-9]){prefix}{body}")
    return TextPass(pattern, _redactor(kind), anchor=re.compile(prefix))


_SCHEME_CHARS = chars(r"A-Za-z0-9+.-")
_URL_ANCHOR = re.compile("://")

_STEPS: tuple[TextPass[Counter[str]] | PassGroup[Counter[str]], ...] = (
    TextPass(
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[\s\w+/=:,\\-]*)",
            re.DOTALL,
        ),
        _redactor("private_key"),
        ("PRIVATE KEY",),
    ),
    PassGroup(
        # Every token format starts with one of these literals: one scan rules them all out.
        re.compile(
            r"A3T|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent)-"
            r"|xox|xapp-|hooks\.slack|_live_|_test_|whsec_|AIza|npm_|hf_|SG\.|sk-|eyJ|SK|shp|dapi"
        ),
        (
            _token("aws_access_key", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
            _token(
                "github_token", r"gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255}"
            ),
            _token("gitlab_token", r"gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}"),
            _token("slack_token", r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"),
            _token("slack_webhook", r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]+"),
            TextPass(
                re.compile(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
                _redactor("stripe_key"),
                ("_live_", "_test_"),
                anchor=re.compile("_live_|_test_"),
                back=2,
            ),
            _token("stripe_key", r"whsec_[A-Za-z0-9]{24,}"),
            _token("google_api_key", r"AIza[0-9A-Za-z_-]{35}"),
            _token("npm_token", r"npm_[A-Za-z0-9]{36}"),
            _token("huggingface_token", r"hf_[A-Za-z0-9]{34,}"),
            _token("sendgrid_key", r"SG\.[\w-]{22}\.[\w-]{43}"),
            TextPass(
                re.compile(
                    r"sk-(?<![\w-]sk-)(?:proj-|svcacct-|admin-|ant-[a-z]+\d\d-)?[A-Za-z0-9_-]{20,}"
                ),
                _redactor(_fixed("openai_key", _openai_like)),
                ("sk-",),
            ),
            _token("jwt", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
            _glued("twilio_key", "SK", r"[0-9a-fA-F]{32}(?![0-9a-fA-F])"),
            _token("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
            _glued("databricks_token", "dapi", r"[a-f0-9]{32}(?:-\d)?"),
        ),
    ),
    TextPass(
        # The password runs to the last "@" before the host: unencoded "@" in passwords is common.
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\[\]<>\"']*:"
            r"(?P<secret>[^\s/]+)@(?=[^\s@/]*(?:[/\s?#'\"]|$))"
        ),
        _redactor(_fixed("password_in_url")),
        ("://",),
        anchor=_URL_ANCHOR,
        widen=_SCHEME_CHARS,
    ),
    TextPass(
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://(?P<secret>[^\s:/@<>\"']{20,})(?=@)"
        ),
        _redactor(_fixed("token_in_url", looks_random)),
        ("://",),
        anchor=_URL_ANCHOR,
        widen=_SCHEME_CHARS,
    ),
    TextPass(
        re.compile(
            r"\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?"
            r"(?P<scheme>bearer|basic|token|apikey|key)[ \t]+(?P<secret>[A-Za-z0-9._~+/=:-]+)",
            re.IGNORECASE,
        ),
        _redactor(_auth_kind),
        ("authorization",),
        fold_case=True,
        anchor=re.compile(word_anchor("authorization", cases=True)),
    ),
    TextPass(
        re.compile(r"\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)", re.IGNORECASE),
        _redactor(_fixed("bearer_token")),
        ("bearer",),
        fold_case=True,
        anchor=re.compile(word_anchor("bearer", cases=True)),
    ),
    TextPass(
        re.compile(
            r"(?<!\S)(?:-u|--user|--proxy-user)[ =]+[\"']?[^\s:\"'@]+:(?P<secret>[^\s\"']+)"
        ),
        _redactor(_fixed("password")),
        ("-u", "--user", "--proxy-user"),
        anchor=re.compile(r"-u[ =]|--user[ =]|--proxy-user[ =]"),
    ),
    TextPass(
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?[ \t]-p(?P<secret>[^\s'\"]+)"
        ),
        _redactor(_fixed("password")),
        ("mysql", "mariadb"),
        anchor=re.compile(word_anchor("mysql", "mysqldump", "mysqladmin", "mariadb")),
    ),
    TextPass(
        re.compile(r"\b(?:machine|login)\s+\S+\s+(?:login\s+\S+\s+)?password\s+(?P<secret>\S+)"),
        _redactor(_fixed("password")),
        ("password",),
        anchor=re.compile(word_anchor("machine", "login")),
    ),
    TextPass(
        re.compile(
            r"<(?P<name>[\w:.-]*(?:pass|pwd|secret|token|key|credential)[\w:.-]*)>"
            r"(?P<secret>[^<\n]+)</(?P=name)>",
            re.IGNORECASE,
        ),
        _redactor(_by_name),
        ("</",),
    ),
    TextPass(
        # Kubernetes and compose env lists: "- name: DB_PASSWORD" then "value: hunter2".
        re.compile(
            r"\bname:[ \t]*[\"']?"
            + _SECRET_NAME
            + r"[\"']?[ \t]*\r?\n[ \t]*-?[ \t]*value:[ \t]*"
            + _VALUE,
            re.IGNORECASE,
        ),
        _redactor(_by_name),
        ("value:",),
        anchor=re.compile(word_anchor("name", cases=True) + "(?=:)"),
    ),
    TextPass(
        _ASSIGNMENT,
        _redactor(_by_name),
        _KEYWORDS,
        fold_case=True,
        anchor=_ASSIGNMENT_ANCHOR,
        widen=_NAME_CHARS,
    ),
    TextPass(
        # Any name given a generated-looking value: the names we know are done by now.
        re.compile(r"[=:][ \t]*[\"'`]?(?P<secret>[A-Za-z0-9+/_-]{20,}={0,2})(?![A-Za-z0-9+/=_-])"),
        _redactor(_generic),
        ("=", ":"),
        needs_digit=True,
    ),
    TextPass(
        # A bare 40-character key; the leading delimiter is part of the match, not the secret.
        re.compile(r"[^A-Za-z0-9/+=](?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        _redactor(_fixed("aws_secret_key", _aws_secret_shape)),
    ),
)


_CHAIN = PassChain(_STEPS)


def redact(text: str) -> Redacted:
    """Replace every secret in ``text`` by ``[REDACTED:<kind>]`` and count them by kind."""
    kinds: Counter[str] = Counter()
    # The leading newline gives patterns that need a delimiter before a token one at the start.
    text = _CHAIN.run("\n" + text, kinds)[1:]
    return Redacted(text=text, kinds=dict(kinds))


def redact_id(value: str) -> str:
    """A caller's id as stored: a secret in it redacted, and then a digest of the whole id,
    so that two ids holding two secrets stay two memories (and the same id, the same one)."""
    redacted = redact(value)
    if not redacted.kinds:
        return value
    return f"{redacted.text}~{hashlib.sha256(value.encode()).hexdigest()[:12]}"


def _redact_named(name: str, value: object) -> object:
    """A value stored under a secret-sounding key is a secret whatever it looks like."""
    category = secret_kind_for_name(name)
    if category is None or value is None or isinstance(value, bool):
        return redact_value(value)
    if isinstance(value, str):
        return value if is_reference(value, quoted=True) else marker(category)
    if isinstance(value, int | float):
        return marker(category)
    return redact_value(value)


def redact_value(value: object) -> object:
    """Redact every string inside a JSON-like value, keys too; keys like ``password`` redact
    their value."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, Mapping):
        redacted: dict[str, object] = {}
        for key, item in value.items():
            redacted[_free_key(redact(str(key)).text, redacted)] = _redact_named(str(key), item)
        return redacted
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_value(item) for item in value)
    return value


def _free_key(key: str, taken: Mapping[str, object]) -> str:
    """Two keys redacted alike stay two keys (``[REDACTED:…]``, ``[REDACTED:…]#2``)."""
    if key not in taken:
        return key
    n = 2
    while f"{key}#{n}" in taken:
        n += 1
    return f"{key}#{n}"
