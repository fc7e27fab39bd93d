"""Log templates: one line with its variable parts replaced by typed placeholders.

The rules are stateless on purpose: a line's template depends on that line only,
never on what was seen before, so templates can serve as database keys.
Every rule is about the shape of a value (a number, an address, a path, a
fully qualified name), none about a particular log source.
"""

from __future__ import annotations

import re

__all__ = ["PLACEHOLDER", "log_template", "template_key"]

PLACEHOLDER = "<*>"

# Top-level domains that end host names; two-letter country codes are handled
# separately (they need three labels, so file names like ``a.py`` stay intact).
_GENERIC_TLD = r"(?:com|net|org|edu|gov|mil|int|info|biz|io|local|lan|internal|arpa)"
# Extensions that make a dotted word a file name (chrome.exe, app.log), an instance detail.
_FILE_EXT = (
    r"(?:exe|dll|sys|so|dylib|jar|war|class|py|pyc|js|mjs|cjs|ts|tsx|jsx|java|kt|go|rs|rb|php"
    r"|c|cc|cpp|cxx|h|hpp|cs|swift|sh|bat|ps1|txt|log|csv|tsv|json|xml|yaml|yml|toml|ini|cfg"
    r"|conf|properties|html?|css|md|pdf|png|jpe?g|gif|svg|zip|gz|tgz|tar|bz2|xz|7z|rar|iso|img"
    r"|bin|dat|db|sqlite|sql|bak|tmp|pid|lock|sock|pem|crt|cer|p12|deb|rpm|dmg|pkg|msi|apk|whl"
    r"|mp3|mp4|wav|avi|mov|docx?|xlsx?|pptx?|plist|pcap|pcapng)"
)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
# A dotted name whose last part names an error type is the error's identity, not a value.
_ERROR_NAME = re.compile(
    r"(?:Exception|Error|Throwable|Fault|Failure|Violation|Warning|Panic|Exit|Interrupt)\$?\w*$"
)

# Order matters: at each position the first alternative that matches wins, so
# the more specific shapes come first. Every alternative that starts with a
# repeated class is anchored by a look-behind, so a long run of word characters
# is tried from its start only (linear time on hostile input).
# A value starts where no word character, "$", "." or "-" precedes it and ends
# where none follows (a trailing "." or "-" before a space is punctuation).
_START = r"(?<![\w$.-])"
_END = r"(?![\w$]|[.-][\w$])"
_SHAPES: list[tuple[str, str]] = [
    ("CODE", r"\b(?:ORA|TNS|PLS|SP2)-\d{4,5}\b"),
    ("URL", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]*[^\s\"'<>.,:;)\]]"),
    ("EMAIL", rf"{_START}[\w.+-]+@[\w-]+(?:\.[\w-]+)+{_END}"),
    ("UUID", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    ("MAC", r"\b(?:[0-9a-fA-F]{1,2}[:-]){5}[0-9a-fA-F]{1,2}\b"),
    ("TS", r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"),
    (
        "TS",
        rf"\b{_DAY},?\s+{_MONTH}\s+\d{{1,2}},?\s+\d{{2}}:\d{{2}}:\d{{2}}(?:\s+[A-Z]{{3,4}})?(?:\s+\d{{4}})?",
    ),
    ("TS", rf"\b\d{{1,2}}/{_MONTH}/\d{{4}}:\d{{2}}:\d{{2}}:\d{{2}}(?:\s+[+-]\d{{4}})?"),
    ("TS", r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"),
    ("TS", r"\b\d{4}-\d{2}-\d{2}\b|\b\d{4}/\d{2}/\d{2}\b"),
    ("HOST", r"(?<![\w:.])(?=[0-9a-fA-F:]*\d)(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{1,4}(?![\w:])"),
    ("HOST", rf"{_START}(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?::\d{{1,5}})?{_END}"),
    ("HOST", rf"{_START}[A-Za-z0-9][\w-]*(?:\.[\w-]+)*\.{_GENERIC_TLD}{_END}"),
    ("HOST", rf"{_START}[A-Za-z0-9][\w-]*(?:\.[\w-]+){{2,}}\.[a-z]{{2}}{_END}"),
    ("PATH", r"(?<![\w/.\\])[A-Za-z]:\\[^\s\"'<>|:*?]*"),
    ("PATH", r"(?<![\w/.])(?:~|\.{1,2})?/[\w.@%+~-]+(?:/[\w.@%+~-]*)*"),
    # A quantity with its unit is one value: "16.0 B" and "2.4 GB", "35 ms" and "2 s".
    ("SIZE", rf"{_START}\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|B|[KMG]b|bytes?)\b"),
    (
        "DURATION",
        rf"{_START}\d+(?:\.\d+)?\s?(?:[nuµm]?s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?)\b",
    ),
    ("HEX", rf"{_START}0[xX][0-9a-fA-F]+{_END}"),
    ("HEX", rf"{_START}(?:(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{{6,}}|[0-9a-f]{{8,}}){_END}"),
    ("FILE", rf"{_START}[\w$-]+(?:\.[\w$-]+)*\.{_FILE_EXT}{_END}"),
    ("NAME", rf"{_START}\.?[A-Za-z_][\w$-]*(?:\.[A-Za-z_][\w$-]*){{2,}}{_END}"),
    ("TOKEN", r"(?<![\w$.+-])\+?[\w.$-]*\d[\w.$-]*"),
    ("BOOL", r"\b(?:true|false|True|False|TRUE|FALSE)\b"),
]
_SCAN = re.compile("|".join(f"(?P<{kind}{i}>{rx})" for i, (kind, rx) in enumerate(_SHAPES)))
_NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_DIGITS = re.compile(r"\d+")
# A single digit right after letters names a thing (en0, IPv4, ssh2, utf8) rather than counting it.
_NAME_DIGIT = re.compile(r"(?<=[A-Za-z])\d(?!\d)")
# The account in "for user alice", "invalid user bob", "user=carol", "user 'dan'": who it was
# is instance detail. A bare "user created" is not an account name, so it needs those cues.
_USER = re.compile(
    r"\b((?:(?:for|invalid|by|of|to|as) user )|user=|user (?=[\"']))([\"']?)(?!<)[\w.@-]+\2",
    re.IGNORECASE,
)
# An empty bracket pair standing alone is a value that happened to be empty: "from 1.2.3.4 ()".
_EMPTY = re.compile(r"(?<![\w)\]}>])(\(\)|\[\]|\{\})")
# Dot leaders align columns ("depth.......0") and rules of ==== or ____ frame headings;
# their length says nothing.
_LEADER = re.compile(r"\.{3,}")
_RULE = re.compile(r"([=_*#~-])\1{3,}")
_TYPED = re.compile(r"<[A-Z][A-Z_]*>")  # ours, and those of ingest.abstraction (<HOME>, <IP>)
_RUN = re.compile(r"<\*>(?:[^\w\s()\[\]{}<>\"'=]*\s*<\*>)+")
_SPACE = re.compile(r"\s+")


def _classify_token(token: str) -> str:
    """A word holding digits: a number, an identifier, or a name like ``en0`` kept as is."""
    if _NUMBER.fullmatch(token.strip(".-+")):
        return "<NUM>"
    for run in _DIGITS.finditer(token):
        if not _NAME_DIGIT.fullmatch(token, run.start(), run.end()):
            return "<ID>"
    return token


def _replace(match: re.Match[str]) -> str:
    kind = (match.lastgroup or "").rstrip("0123456789")
    text = match.group()
    if kind == "TOKEN":
        return _classify_token(text)
    if kind == "CODE" or (kind == "NAME" and _ERROR_NAME.search(text)):
        return text  # an error's own code or class name is its identity, not a value
    return f"<{kind}>"


def log_template(line: str) -> str:
    """The line with its variable parts replaced by typed placeholders such as ``<NUM>``."""
    text = _RULE.sub(r"\1\1\1", _LEADER.sub(" ... ", line))
    text = _SCAN.sub(_replace, text)
    text = _USER.sub(lambda m: f"{m.group(1)}{m.group(2)}<USER>{m.group(2)}", text)
    text = _EMPTY.sub(lambda m: f"{m.group()[0]}<EMPTY>{m.group()[1]}", text)
    return _SPACE.sub(" ", text).strip()


def template_key(template: str) -> str:
    """The grouping key of a template: untyped placeholders, adjacent ones merged.

    A slot may hold an address in one line and a host name in the next, or a
    list of any length; the key must not tell those apart.
    """
    text = _TYPED.sub(PLACEHOLDER, template)
    text = _RUN.sub(PLACEHOLDER, text)
    return _SPACE.sub(" ", text).strip()
