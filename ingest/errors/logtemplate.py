"""Log templates: one line with its variable parts replaced by typed placeholders.

The rules are stateless on purpose: a line's template depends on that line only,
never on what was seen before, so templates can serve as database keys.
Every rule is about the shape of a value (a number, an address, a path, a
fully qualified name), none about a particular log source.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache

__all__ = [
    "ALL_RULES",
    "DEFAULT_RULES",
    "PLACEHOLDER",
    "RULES",
    "TemplateRule",
    "log_template",
    "rule_applies",
    "template_key",
]

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
# (placeholder kind, pattern, the rule it belongs to)
_SHAPES: list[tuple[str, str, str]] = [
    ("CODE", r"\b(?:ORA|TNS|PLS|SP2)-\d{4,5}\b", "error-code"),
    ("URL", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]*[^\s\"'<>.,:;)\]]", "url"),
    ("EMAIL", rf"{_START}[\w.+-]+@[\w-]+(?:\.[\w-]+)+{_END}", "email"),
    (
        "UUID",
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        "uuid",
    ),
    ("MAC", r"\b(?:[0-9a-fA-F]{1,2}[:-]){5}[0-9a-fA-F]{1,2}\b", "mac"),
    (
        "TS",
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?",
        "timestamp",
    ),
    (
        "TS",
        rf"\b{_DAY},?\s+{_MONTH}\s+\d{{1,2}},?\s+\d{{2}}:\d{{2}}:\d{{2}}(?:\s+[A-Z]{{3,4}})?(?:\s+\d{{4}})?",
        "timestamp",
    ),
    (
        "TS",
        rf"\b\d{{1,2}}/{_MONTH}/\d{{4}}:\d{{2}}:\d{{2}}:\d{{2}}(?:\s+[+-]\d{{4}})?",
        "timestamp",
    ),
    ("TS", r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "timestamp"),
    ("TS", r"\b\d{4}-\d{2}-\d{2}\b|\b\d{4}/\d{2}/\d{2}\b", "timestamp"),
    (
        "HOST",
        r"(?<![\w:.])(?=[0-9a-fA-F:]*\d)(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{1,4}(?![\w:])",
        "ipv6",
    ),
    ("HOST", rf"{_START}(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?::\d{{1,5}})?{_END}", "ipv4"),
    ("HOST", rf"{_START}[A-Za-z0-9][\w-]*(?:\.[\w-]+)*\.{_GENERIC_TLD}{_END}", "hostname"),
    ("HOST", rf"{_START}[A-Za-z0-9][\w-]*(?:\.[\w-]+){{2,}}\.[a-z]{{2}}{_END}", "hostname"),
    ("PATH", r"(?<![\w/.\\])[A-Za-z]:\\[^\s\"'<>|:*?]*", "path"),
    ("PATH", r"(?<![\w/.])(?:~|\.{1,2})?/[\w.@%+~-]+(?:/[\w.@%+~-]*)*", "path"),
    # A quantity with its unit is one value: "16.0 B" and "2.4 GB", "35 ms" and "2 s".
    ("SIZE", rf"{_START}\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|B|[KMG]b|bytes?)\b", "size"),
    (
        "DURATION",
        rf"{_START}\d+(?:\.\d+)?\s?(?:[nuµm]?s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?)\b",
        "duration",
    ),
    ("HEX", rf"{_START}0[xX][0-9a-fA-F]+{_END}", "hex"),
    (
        "HEX",
        rf"{_START}(?:(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{{6,}}|[0-9a-f]{{8,}}){_END}",
        "hex-digest",
    ),
    ("FILE", rf"{_START}[\w$-]+(?:\.[\w$-]+)*\.{_FILE_EXT}{_END}", "file-name"),
    ("NAME", rf"{_START}\.?[A-Za-z_][\w$-]*(?:\.[A-Za-z_][\w$-]*){{2,}}{_END}", "dotted-name"),
    ("TOKEN", r"(?<![\w$.+-])\+?[\w.$-]*\d[\w.$-]*", "number"),
    ("BOOL", r"\b(?:true|false|True|False|TRUE|FALSE)\b", "bool"),
    ("USER", r"(?<![\w$.-])(?:root|admin|null)(?![\w$]|[.-][\w$])", "user-strings"),
]
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


@dataclass(frozen=True)
class TemplateRule:
    """One rule of the template: what it treats as a value, and where it was learnt.

    A convention comes from published work on many log systems (``source`` cites it); a
    hand-written rule from the lines of particular development systems (``provenance``).
    A rule never names a system in what it matches.
    """

    name: str
    summary: str
    provenance: tuple[str, ...] = ()
    source: str = ""

    @property
    def hand_written(self) -> bool:
        return bool(self.provenance)


# Published conventions: what the Loghub annotation guidelines count as variables (Khan et al.,
# ICSE 2022: digits, paths, booleans, default user strings) and the general preprocessing
# shapes of Drain (He et al., ICWS 2017) and Qin et al. (2024).
_KHAN = "Khan et al. 2022, Loghub annotation guidelines"
_QIN = "Qin et al. 2024, general log preprocessing"
_DRAIN = "He et al. 2017, Drain preprocessing"
_IDENTITY = "error identity: a code or a class names the error"
RULES: dict[str, TemplateRule] = {
    rule.name: rule
    for rule in (
        TemplateRule(
            "error-code", "database error codes (ORA-04031) are identity, kept", source=_IDENTITY
        ),
        TemplateRule(
            "error-class", "a dotted name ending in Error/Exception is kept", source=_IDENTITY
        ),
        TemplateRule("url", "URLs", source=_QIN),
        TemplateRule("email", "e-mail addresses", source=_QIN),
        TemplateRule("uuid", "UUIDs", source=_QIN),
        TemplateRule("mac", "MAC addresses", source=_QIN),
        TemplateRule("timestamp", "dates and times in the common notations", source=_QIN),
        TemplateRule("ipv6", "IPv6 addresses", source=_QIN),
        TemplateRule("ipv4", "IPv4 addresses with an optional port", source=_DRAIN),
        TemplateRule("hostname", "host names under a known top-level domain", source=_QIN),
        TemplateRule("path", "absolute and relative file paths, Windows paths", source=_KHAN),
        TemplateRule("size", "a size with its unit (16.0 B, 2.4 GB)", source=_QIN),
        TemplateRule("duration", "a duration with its unit (35 ms, 2 s)", source=_QIN),
        TemplateRule("hex", "0x-prefixed hexadecimal numbers", source=_QIN),
        TemplateRule("hex-digest", "long hexadecimal runs (digests, ids)", source=_QIN),
        TemplateRule("dotted-name", "names of three or more dotted parts", source=_QIN),
        TemplateRule("number", "every token holding a digit", source=_KHAN),
        TemplateRule("bool", "true and false", source=_KHAN),
        TemplateRule("user-strings", "root, admin and null stand for a value", source=_KHAN),
        TemplateRule("file-name", "file names with a known extension", ("Mac",)),
        TemplateRule(
            "name-digit", "a single digit after letters names a thing (en0)", ("Mac", "OpenSSH")
        ),
        TemplateRule(
            "user", "the account after 'for user', 'invalid user', 'user='", ("OpenSSH", "Linux")
        ),
        TemplateRule("empty", "an empty bracket pair standing alone", ("Linux",)),
        TemplateRule("dot-leader", "dot leaders (depth.....0) as one ' ... '", ("BGL",)),
        TemplateRule("rule-line", "rules of ==== or ____ shortened", ("Mac",)),
    )
}
ALL_RULES = frozenset(RULES)
# The rules the product signs with: what ``RuleBench.select`` keeps on the development
# systems (``metisgraph eval signatures --ablation`` shows why; a shared test checks it).
# The others stay defined so the evaluation can show what they would do.
DEFAULT_RULES = ALL_RULES - {"dot-leader", "empty", "file-name", "name-digit", "rule-line", "user"}


def _replace_with(rules: frozenset[str]) -> Callable[[re.Match[str]], str]:
    keep_names = "name-digit" in rules
    keep_errors = "error-class" in rules

    def classify(token: str) -> str:
        """A word holding digits: a number, an identifier, or a name like ``en0`` kept as is."""
        if _NUMBER.fullmatch(token.strip(".-+")):
            return "<NUM>"
        for run in _DIGITS.finditer(token):
            if not (keep_names and _NAME_DIGIT.fullmatch(token, run.start(), run.end())):
                return "<ID>"
        return token

    def replace(match: re.Match[str]) -> str:
        kind = (match.lastgroup or "").rstrip("0123456789")
        text = match.group()
        if kind == "TOKEN":
            return classify(text)
        if kind == "CODE" or (kind == "NAME" and keep_errors and _ERROR_NAME.search(text)):
            return text  # an error's own code or class name is its identity, not a value
        return f"<{kind}>"

    return replace


@lru_cache(maxsize=64)
def _compiled(rules: frozenset[str]) -> tuple[re.Pattern[str], Callable[[re.Match[str]], str]]:
    unknown = rules - ALL_RULES
    if unknown:
        raise ValueError(f"unknown template rules: {', '.join(sorted(unknown))}")
    shapes = [(kind, rx) for kind, rx, rule in _SHAPES if rule in rules]
    alternatives = "|".join(f"(?P<{kind}{i}>{rx})" for i, (kind, rx) in enumerate(shapes))
    scan = re.compile(alternatives or "(?!)")  # no shapes: a pattern that never matches
    return scan, _replace_with(rules)


# The product's rule set is compiled once and never evicted, however many other sets an
# evaluation compiles through ``_compiled``'s bounded cache.
_pinned = cache(_compiled.__wrapped__)


_WITHOUT_SHAPES = {
    "name-digit": re.compile(r"[A-Za-z]\d(?!\d)"),
    "error-class": re.compile(
        r"Exception|Error|Throwable|Fault|Failure|Violation|Warning|Panic|Exit"
        r"|Interrupt"
    ),
    "user": _USER,
    "empty": _EMPTY,
    "dot-leader": _LEADER,
    "rule-line": _RULE,
}


@lru_cache(maxsize=1)
def _triggers() -> dict[str, re.Pattern[str]]:
    shaped: dict[str, list[str]] = {}
    for _, rx, rule in _SHAPES:
        shaped.setdefault(rule, []).append(f"(?:{rx})")
    found = {rule: re.compile("|".join(rxs)) for rule, rxs in shaped.items()}
    return found | _WITHOUT_SHAPES


def rule_applies(rule: str, line: str) -> bool:
    """Whether ``rule`` can change the template of ``line``; when not, the line's template is
    the same with the rule and without it (the evaluation recomputes only where it applies)."""
    trigger = _triggers()[rule]
    shortened = _RULE.sub(r"\1\1\1", _LEADER.sub(" ... ", line))
    return bool(trigger.search(line) or trigger.search(shortened))


def log_template(line: str, rules: frozenset[str] | None = None) -> str:
    """The line with its variable parts replaced by typed placeholders such as ``<NUM>``.

    ``rules`` names the rules to apply (default: those the product ships, ``DEFAULT_RULES``).
    """
    rules = DEFAULT_RULES if rules is None else rules
    scan, replace = _pinned(rules) if rules is DEFAULT_RULES else _compiled(rules)
    text = line
    if "dot-leader" in rules:
        text = _LEADER.sub(" ... ", text)
    if "rule-line" in rules:
        text = _RULE.sub(r"\1\1\1", text)
    text = scan.sub(replace, text)
    if "user" in rules:
        text = _USER.sub(lambda m: f"{m.group(1)}{m.group(2)}<USER>{m.group(2)}", text)
    if "empty" in rules:
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
