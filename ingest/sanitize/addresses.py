"""Network addresses known by their shape: URLs, e-mail, ``user@host``, IPv4 and IPv6, MAC
addresses and ports.
"""

from __future__ import annotations

import re

from metisgraph.ingest.sanitize.hosts import (
    HOSTNAME,
    LOCAL_NAMES,
    WORD_CHARS,
    host_or_ip,
    is_ip,
    numbered_host,
    with_port,
)
from metisgraph.ingest.sanitize.passes import PassGroup, TextPass, case_variants, chars
from metisgraph.ingest.sanitize.placeholders import Details, put, word_before

__all__ = ["EMAIL", "IPV4_ADDRESS", "IPV6_ADDRESS", "MAC", "PORTS", "URL", "USER_AT_HOST"]

_IPV4 = r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"


def _url(match: re.Match[str], details: Details) -> str:
    return with_port(match, details, host_or_ip(match.group("host"), details))


def _email(match: re.Match[str], details: Details) -> str:
    return details.put("EMAIL", match.group(0))


def _user_at_host(match: re.Match[str], details: Details) -> str:
    host = match.group("host")
    prompt_or_path = match.string.startswith(":", match.end())
    if host.lower() in LOCAL_NAMES:
        return match.group(0)
    if "." not in host and not prompt_or_path and not numbered_host(host, needs_hyphen=False):
        return match.group(0)  # "pkg@latest", "me@laptop": a tag or a word, not a machine
    return with_port(match, details, details.put("HOST", host))


def _ipv4(match: re.Match[str], details: Details) -> str:
    if word_before(match) in {"version", "release", "ver", "v"}:
        return match.group(0)  # "version 1.2.3.4" is a four-part version
    return with_port(match, details, details.put("IP", match.group("host")))


def _ipv6(match: re.Match[str], details: Details) -> str:
    address = match.group("ip")
    if not any(c.isdigit() for c in address):
        return match.group(0)  # "a::b" is C++ or Haskell, not an address
    if ("::" not in address and address.count(":") != 7) or not is_ip(address):
        return match.group(0)
    return details.put("IP", match.group(0))


URL: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://(?:[^\s/?#@<>\"']*@)?"
        r"(?P<host>\[[0-9A-Fa-f:.]+\]|" + HOSTNAME + r")(?::(?P<port>\d{1,5})(?!\w))?"
    ),
    _url,
    ("://",),
    anchor=re.compile("://"),
    widen=chars(r"A-Za-z0-9+.-"),
)
EMAIL: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![\w.%+/-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,24}"
        r"(?![\w-]|\.\w|:[\w/~])"
    ),
    _email,
    ("@",),
    anchor=re.compile("@"),
    widen=chars(r"A-Za-z0-9._%+-"),
)
USER_AT_HOST: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![\w.%+/-])[A-Za-z0-9._-]+@(?P<host>[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*)"
        r"(?![\w-]|\.\w)"
    ),
    _user_at_host,
    ("@",),
    anchor=re.compile("@"),
    widen=chars(r"A-Za-z0-9._-"),
)
MAC: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![0-9A-Fa-f:-])[0-9A-Fa-f]{2}(?P<s>[:-])(?:[0-9A-Fa-f]{2}(?P=s)){4}[0-9A-Fa-f]{2}"
        r"(?![\w:-])"
    ),
    put("MAC"),
    anchor=re.compile(r":[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}:|-[0-9A-Fa-f]{2}-[0-9A-Fa-f]{2}-"),
    widen=chars("0-9A-Fa-f"),
)
IPV4_ADDRESS: TextPass[Details] = TextPass(
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
)
IPV6_ADDRESS: TextPass[Details] = TextPass(
    re.compile(
        r"(?<![\w:.])(?P<ip>[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})(?:%[\w.]+)?(?![\w:])"
    ),
    _ipv6,
    (":",),
    anchor=re.compile(r"::|:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:"),
    widen=chars("0-9A-Fa-f:"),
)
PORTS: PassGroup[Details] = PassGroup(
    re.compile(case_variants("port", "listen") + "|localhost:"),
    (
        TextPass(
            re.compile(
                r"(?i)(?<![\w.-])(?:--?port|port|[\w-]*_port|listen)"
                r"(?:[\"']?[ \t]*[=:][ \t]*[\"']?|[ \t]+)(?P<port>\d{2,5})(?![\w.])"
            ),
            put("PORT", "port"),
            ("port", "listen"),
            fold_case=True,
            anchor=re.compile(
                "(?:"
                + case_variants("port", "listen")
                + r")[\"']?(?:[ \t]*[=:][ \t]*[\"']?|[ \t]+)\d"
            ),
            widen=WORD_CHARS,
        ),
        TextPass(
            re.compile(r"\blocalhost:(?P<port>\d{2,5})(?!\w)"),
            put("PORT", "port"),
            ("localhost:",),
            anchor=re.compile("localhost:"),
        ),
    ),
    needs_digit=True,
)
