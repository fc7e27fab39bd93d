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

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = [
    "PassChain",
    "PassGroup",
    "Redacted",
    "TextPass",
    "chars",
    "is_redacted",
    "marker",
    "redact",
    "redact_value",
    "secret_kind_for_name",
    "word_anchor",
]


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


# --- names that announce a secret -------------------------------------------------------

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_SEGMENT_SPLIT = re.compile(r"[^a-z0-9]+")
_PASSWORD_SEGMENTS = frozenset({"password", "passwd", "passphrase", "pwd"})
# "pass" alone is also a compiler pass or a test verdict; it is a password in DB_PASS,
# MYSQL_PASS, --ftp-pass: after one of these, or in an upper-case (environment) name.
_PASS_CONTEXTS = frozenset(
    {
        "db", "user", "admin", "root", "mysql", "redis", "smtp", "ftp", "ldap", "proxy",
        "mail", "app", "api", "bind", "master", "sa", "sql", "pg", "key", "store", "login",
    }
)  # fmt: skip
_SECRET_SEGMENTS = frozenset({"credential", "credentials", "authorization", "apitoken"})
_KEY_WORDS = frozenset({"apikey", "accesskey", "secretkey", "privatekey", "authkey", "appkey"})
# A bare "key" is a secret only after one of these ("api_key", "x-api-key", "AccountKey").
_KEY_QUALIFIERS = frozenset(
    {
        "api", "access", "private", "auth", "session", "signing", "encryption", "master",
        "license", "client", "app", "account", "service", "subscription", "consumer",
        "secret", "webhook", "shared", "storage", "sas",
    }
)  # fmt: skip
# Names ending like this describe a secret without holding one: PASSWORD_FILE, token_url.
_NOT_SECRET_TAILS = frozenset(
    {
        "file", "files", "path", "dir", "directory", "env", "var", "length", "len", "min",
        "max", "policy", "prompt", "type", "field", "reset", "url", "uri", "endpoint",
        "name", "header", "expiry", "expires", "expiration", "ttl", "timeout", "count",
        "limit", "format", "regex", "pattern", "strength", "hint", "label", "param", "id",
        "ids", "required", "enabled", "rotation", "algorithm", "size", "index", "prefix",
        "mode", "store", "manager", "provider", "source", "command", "cmd", "location",
        # "Password.java:57" in a stack trace names a file, not a secret
        "java", "py", "js", "ts", "go", "rb", "kt", "scala", "c", "cpp", "h", "cs", "php",
        "yml", "yaml", "json", "xml", "properties", "conf", "cfg", "ini", "txt", "log", "md",
        "html", "class", "jar", "pem", "crt", "pub",
        # class and log names: AuthorizationException, DelegationTokenAuthenticator
        "exception", "exceptions", "error", "errors", "authenticator", "factory", "handler",
        "impl", "test", "tests", "filter", "interceptor", "helper", "validator", "generator",
        "builder", "parser", "loader", "reader", "writer", "method", "mechanism", "scheme",
        "interface", "event", "listener", "request", "response", "service", "client",
    }
)  # fmt: skip


def _segments(name: str) -> list[str]:
    return [s for s in _SEGMENT_SPLIT.split(_CAMEL.sub(r"\1_\2", name).lower()) if s]


def _is_code_name(name: str) -> bool:
    """A qualified name through a class (``ITestAuthorization.testSetOwner``) is code."""
    parts = name.split(".")
    return len(parts) > 1 and any(p[:1].isupper() and not p.isupper() for p in parts)


def secret_kind_for_name(name: str) -> str | None:
    """The kind of secret a value assigned to ``name`` holds: password, secret, api_key or None."""
    segments = _segments(name)
    if not segments or segments[-1] in _NOT_SECRET_TAILS or _is_code_name(name):
        return None
    if any(s in _PASSWORD_SEGMENTS or s.endswith(("password", "passwd")) for s in segments):
        return "password"
    shouted = name.isupper() and len(segments) > 1
    if any(
        seg == "pass" and (shouted or before in _PASS_CONTEXTS)
        for before, seg in itertools.pairwise(segments)
    ):
        return "password"
    if any(
        "secret" in s or s in _SECRET_SEGMENTS or (s.endswith("token") and s != "tokens")
        for s in segments
    ):
        return "secret"
    if any(s in _KEY_WORDS for s in segments):
        return "api_key"
    for before, seg in itertools.pairwise(segments):
        if seg in {"key", "keys"} and before in _KEY_QUALIFIERS:
            return "api_key"
    return None


# --- values that are references, not secrets ---------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    {
        "none", "null", "nil", "true", "false", "undefined", "str", "string", "bytes", "int",
        "secretstr", "password", "secret", "token", "redacted", "...", "''", '""', "required",
        "optional", "any", "object", "char", "text", "varchar", "bearer", "basic", "digest",
        "negotiate",
        # prose around a flag: "pass the --password option", "--token is required"
        "option", "options", "flag", "argument", "parameter", "is", "are", "was", "to", "and",
        "or", "the", "a", "an", "with", "for", "of", "in", "on", "not", "if", "when", "field",
    }
)  # fmt: skip
_VARIABLE = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_][A-Za-z0-9_]*%|\{[A-Za-z_][A-Za-z0-9_]*\}"
)
_CALL_OR_INDEX = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# Objects that hold configuration in code: ``settings.DB``, ``os.environ``, ``args.token``.
_RECEIVERS = frozenset(
    {
        "self", "this", "cls", "os", "env", "process", "config", "settings", "cfg", "conf",
        "args", "opts", "options", "params", "request", "req", "ctx", "context", "kwargs",
        "app", "secrets", "vars", "inputs", "props", "credentials", "creds", "flags",
    }
)  # fmt: skip
_MASKED = re.compile(r"[*xX•.#-]{3,}")
_PATH = re.compile(r"(?:/|~/|\./|\.\./|[A-Za-z]:\\)[\w./\\-]*")


def _is_template(value: str) -> bool:
    """A stand-in for a secret: a variable, a template, a mask, or an earlier marker."""
    if not value or "[REDACTED:" in value or _MASKED.fullmatch(value):
        return True
    return value.startswith(("${", "$(", "{{", "%(", "<")) or bool(_VARIABLE.fullmatch(value))


def _is_reference(value: str, quoted: bool) -> bool:
    """A value assigned to a secret name that is not a secret: a template, a type, a path, code."""
    if _is_template(value) or value.lower() in _PLACEHOLDER_WORDS:
        return True
    if value.startswith("(") or _PATH.fullmatch(value):
        return True
    return not quoted and _is_code_reference(value)


def _is_code_reference(value: str) -> bool:
    """Unquoted code: ``getpass()``, ``os.environ["X"]``, ``settings.DB_PASSWORD``, ``db_pass``."""
    if _CALL_OR_INDEX.match(value):
        return True
    if _DOTTED.fullmatch(value):
        head, *rest = value.split(".")
        constant = any(part[0].isupper() for part in rest)  # JsDocToken.EOC, Mode.SECRET
        return head in _RECEIVERS or constant or any(secret_kind_for_name(p) for p in rest)
    # A variable named like a secret (db_password), not a password with a digit in it.
    plain_name = _IDENTIFIER.fullmatch(value) and not any(c.isdigit() for c in value)
    return bool(plain_name and secret_kind_for_name(value))


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _looks_random(value: str) -> bool:
    """High-entropy enough to be a generated key rather than a word or a setting."""
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
    return len(value) >= 12 and classes >= 2 and _entropy(value) >= 3.0


def _accepts(category: str, value: str, quoted: bool) -> bool:
    if _is_reference(value, quoted):
        return False
    if category == "password":
        return True  # passphrases may hold spaces; tokens and keys never do
    if any(c.isspace() for c in value):
        return False
    if category == "secret":
        return len(value) >= 6
    return _looks_random(value)


# --- the pass engine ------------------------------------------------------------------------

State = TypeVar("State")


@dataclass(frozen=True)
class TextPass(Generic[State]):
    """One rewriting pass over a text: where to look cheaply, what to match, what to write.

    Python's regex engine scans fast only for patterns that start with a literal or a
    character class. A pattern that needs context first (a word boundary, a name of
    any length before ``password``) is given an ``anchor``: a fast pattern whose hits
    are the candidates. A candidate is widened to the left over ``widen`` characters
    (at most ``reach``) and the precise ``pattern`` is matched there; lookbehinds in it still
    see the text before. ``rewrite`` returns the replacement, or None to keep the match.
    ``triggers`` are substrings without which the pass cannot match; it is skipped then.
    """

    pattern: re.Pattern[str]
    rewrite: Callable[[re.Match[str], State], str | None]
    triggers: tuple[str, ...] = ()
    fold_case: bool = False
    anchor: re.Pattern[str] | None = None
    widen: frozenset[str] = frozenset()
    back: int = 0  # or step this many characters back from each anchor hit
    reach: int = 64  # how far a candidate may be widened
    needs_digit: bool = False  # cannot match a text without a digit (half of all texts)
    gate: re.Pattern[str] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        # One compiled alternation is much cheaper per call than a loop of substring tests.
        if self.triggers:
            gate = re.compile("|".join(map(re.escape, self.triggers)))
            object.__setattr__(self, "gate", gate)

    def worth_running(self, text: str, folded: str) -> bool:
        return self.gate is None or self.gate.search(folded if self.fold_case else text) is not None

    def apply(self, text: str, state: State) -> str:
        if self.anchor is None:
            return self.pattern.sub(lambda m: _kept(self.rewrite(m, state), m), text)
        pieces: list[str] = []
        done, tried = 0, -1
        for hit in self.anchor.finditer(text):
            start = max(hit.start() - self.back, 0) if self.back else hit.start()
            start = self._widened(text, start, done)
            if start < done or start == tried:
                continue
            tried = start
            match = self.pattern.match(text, start)
            new = None if match is None else self.rewrite(match, state)
            if match is not None and new is not None:
                pieces += (text[done : match.start()], new)
                done = match.end()
        return "".join([*pieces, text[done:]]) if pieces else text

    def _widened(self, text: str, start: int, floor: int) -> int:
        if not self.widen:
            return start
        limit = max(floor, start - self.reach)
        while start > limit and text[start - 1] in self.widen:
            start -= 1
        return start


def _kept(new: str | None, match: re.Match[str]) -> str:
    return match.group(0) if new is None else new


@dataclass(frozen=True)
class PassGroup(Generic[State]):
    """Passes that share one fast necessary condition, tested once for all of them."""

    gate: re.Pattern[str]
    passes: tuple[TextPass[State], ...]
    needs_digit: bool = False


class PassChain(Generic[State]):
    """Passes and groups of passes applied in order, each skipped when it cannot match."""

    def __init__(self, steps: Sequence[TextPass[State] | PassGroup[State]]) -> None:
        self.steps = tuple(steps)

    def run(self, text: str, state: State) -> str:
        folded = text.lower()
        has_digit = _DIGIT.search(text) is not None
        for step in self.steps:
            if step.needs_digit and not has_digit:
                continue
            if isinstance(step, PassGroup):
                if step.gate.search(text):
                    for text_pass in step.passes:
                        text = _run_one(text_pass, text, folded, state)
            else:
                text = _run_one(step, text, folded, state)
        return text


_DIGIT = re.compile(r"\d")


def _run_one(text_pass: TextPass[State], text: str, folded: str, state: State) -> str:
    gate = text_pass.gate
    if gate is None or gate.search(folded if text_pass.fold_case else text):
        return text_pass.apply(text, state)
    return text


def word_anchor(*words: str, cases: bool = False) -> str:
    """A fast pattern for whole words: literals first, the word-boundary test only on a hit."""
    variants = (v for w in words for v in ((w, w.capitalize(), w.upper()) if cases else (w,)))
    alternatives = (f"{re.escape(v)}(?<![\\w-]{re.escape(v)})" for v in dict.fromkeys(variants))
    return "(?:" + "|".join(alternatives) + ")"


def chars(spec: str) -> frozenset[str]:
    """The set of characters matched by a simple class body like ``A-Za-z0-9_.-``."""
    return frozenset(c for c in map(chr, range(128)) if re.fullmatch(f"[{spec}]", c))


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
    return category if _accepts(category, secret.value, secret.quoted) else None


def _fixed(kind: str, check: Callable[[str], bool] | None = None) -> Decide:
    """Always ``kind``, unless the value is already redacted, a reference, or fails ``check``."""

    def decide(match: re.Match[str]) -> str | None:
        value = _secret(match).value
        if is_redacted(value) or (check is not None and not check(value)):
            return None
        # Values after -p, -u user:, in a URL or a .netrc are literal: only templates stay.
        return None if _is_template(value) else kind

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


def _auth_kind(match: re.Match[str]) -> str | None:
    if is_redacted(match.group("secret")):
        return None
    return "basic_auth" if match.group("scheme").lower() == "basic" else "bearer_token"


def _token(kind: str, pattern: str) -> TextPass[Counter[str]]:
    """A credential known by its own shape (a literal prefix); replaced wherever it stands."""
    return TextPass(re.compile(pattern), _redactor(kind))


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
            r"|xox|xapp-|hooks\.slack|_live_|_test_|whsec_|AIza|npm_|hf_|SG\.|sk-|eyJ"
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
        _redactor(_fixed("token_in_url", _looks_random)),
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


def _redact_named(name: str, value: object) -> object:
    """A value stored under a secret-sounding key is a secret whatever it looks like."""
    category = secret_kind_for_name(name)
    if category is None or value is None or isinstance(value, bool):
        return redact_value(value)
    if isinstance(value, str):
        return value if _is_reference(value, quoted=True) else marker(category)
    if isinstance(value, int | float):
        return marker(category)
    return redact_value(value)


def redact_value(value: object) -> object:
    """Redact every string inside a JSON-like value; keys like ``password`` redact their value."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, Mapping):
        return {key: _redact_named(str(key), item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(redact_value(item) for item in value)
    return value
