"""Whether a name announces a secret (``DB_PASSWORD``, ``api_key``) and whether a value given
to it is one, or only refers to one (``$DB_PASSWORD``, ``os.environ[...]``, ``None``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

__all__ = [
    "is_reference",
    "is_secret_value",
    "is_template",
    "looks_generated",
    "looks_random",
    "names_no_secret",
    "secret_kind_for_name",
]

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


# What a random-looking value under these names is: an identifier or a digest, not a key.
_NOT_SECRET_HOLDERS = frozenset(
    {
        "id", "ids", "uuid", "guid", "hash", "digest", "checksum", "integrity", "sha", "sha1",
        "sha256", "sha512", "md5", "etag", "commit", "rev", "revision", "version", "name",
        "path", "file", "dir", "url", "uri", "class", "type", "region", "bucket",
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


def is_template(value: str) -> bool:
    """A stand-in for a secret: a variable, a template, a mask, or an earlier marker."""
    if not value or "[REDACTED:" in value or _MASKED.fullmatch(value):
        return True
    return value.startswith(("${", "$(", "{{", "%(", "<")) or bool(_VARIABLE.fullmatch(value))


def is_reference(value: str, quoted: bool) -> bool:
    """A value assigned to a secret name that is not a secret: a template, a type, a path, code."""
    if is_template(value) or value.lower() in _PLACEHOLDER_WORDS:
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


def names_no_secret(name: str) -> bool:
    """A name whose value is an identifier or a digest (``request_id``, ``sha256``, ``etag``)."""
    segments = _segments(name)
    return bool(segments) and segments[-1] in _NOT_SECRET_HOLDERS


_WORDISH = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_GENERATED_MIN = 20
_SEPARATORS = re.compile(r"[_.-]")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{8,}|(?<=[0-9a-fA-F])-(?=[0-9a-fA-F])")


def _made_of_parts(value: str) -> bool:
    """Words and numbers joined (``test_HTTP_200_OK_HEAD``): each part letters or digits."""
    parts = _SEPARATORS.split(value)
    return len(parts) >= 3 and all(p.isalpha() or p.isdigit() for p in parts if p)


def looks_generated(value: str) -> bool:
    """A machine-made key with no name to announce it: long, every character class mixed in,
    high entropy, and not made of words (``getUserById2Value`` is code, ``9fJ2kLq8…`` is not).

    Hex alone (digests, commit ids) is left to the abstraction's placeholders.
    """
    # Hex runs (UUIDs, digests) are random but no key; what is left must still look made.
    core = _HEX_RUN.sub("", value.rstrip("="))
    if len(core) < _GENERATED_MIN:
        return False
    classes = (sum(c.isdigit() for c in core), sum(c.isupper() for c in core),
               sum(c.islower() for c in core))  # fmt: skip
    if min(classes) < 2 or _made_of_parts(core):
        return False
    wordy = sum(len(w) for w in _WORDISH.findall(core) if len(w) >= 4 and _VOWEL.search(w))
    return wordy / len(core) < 0.5 and _entropy(core) >= 3.5


def looks_random(value: str) -> bool:
    """High-entropy enough to be a generated key rather than a word or a setting."""
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^A-Za-z0-9]"))
    return len(value) >= 12 and classes >= 2 and _entropy(value) >= 3.0


def is_secret_value(category: str, value: str, quoted: bool) -> bool:
    """Whether a value given to a name of ``category`` (password, secret, api_key) is one."""
    if is_reference(value, quoted):
        return False
    if category == "password":
        return True  # passphrases may hold spaces; tokens and keys never do
    if any(c.isspace() for c in value):
        return False
    if category == "secret":
        return len(value) >= 6
    return looks_random(value)
