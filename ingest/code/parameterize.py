"""Turn code into a template: hard-coded credentials, places and tables become named parameters.

The template keeps the code's shape (`password="{{db_password}}"`), so it still reads as code
and two snippets that differ only in a host or a path give the same template.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from metisgraph.ingest.code.credentials import credential_lifts
from metisgraph.ingest.code.lexical import import_spans
from metisgraph.ingest.code.lifting import Lift, Source
from metisgraph.ingest.code.locations import host_lifts, path_lifts, url_lifts
from metisgraph.ingest.code.model import TemplateParameter
from metisgraph.ingest.code.tables import table_lifts
from metisgraph.ingest.sanitize.redaction import redact

__all__ = [
    "Template",
    "fill_template",
    "parameterize",
    "placeholder",
    "redact_template",
    "resolved_values",
    "without_secrets",
]

_DEFAULT_NAMES = {
    "credential": "secret",
    "url": "base_url",
    "host": "host",
    "path": "path",
    "table": "table",
    "user": "user",
    "email": "email",
}


_PLACEHOLDER = re.compile(r"\{\{[a-z_][a-z0-9_]*\}\}")


def placeholder(name: str) -> str:
    """How a parameter appears in a template."""
    return "{{" + name + "}}"


def fill_template(text: str, values: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """`text` with each placeholder given a value replaced by it; the names left without one."""
    missing = [h[2:-2] for h in _PLACEHOLDER.findall(text) if h[2:-2] not in values]
    filled = _PLACEHOLDER.sub(lambda m: values.get(m.group()[2:-2], m.group()), text)
    return filled, tuple(dict.fromkeys(missing))


def resolved_values(
    parameters: Sequence[Mapping[str, object]], given: Mapping[str, str]
) -> dict[str, str]:
    """Each parameter's value for a run: the caller's, else its example, else its default;
    a default written with other parameters (``{{home}}/reports``) filled with theirs."""
    values: dict[str, str] = {}
    for p in parameters:
        name = str(p["name"])
        for candidate in (given.get(name), p.get("example"), p.get("default")):
            if candidate is not None:
                values[name] = str(candidate)
                break
    values |= dict(given)
    return {k: fill_template(v, values)[0] if "{{" in v else v for k, v in values.items()}


@dataclass(frozen=True)
class Template:
    """Parameterised code. `_secrets` exists only to scrub other text and is never stored."""

    text: str
    parameters: tuple[TemplateParameter, ...]
    _secrets: tuple[tuple[str, str], ...] = ()

    def scrub(self, text: str) -> str:
        """Replace every lifted secret value in `text` by its placeholder."""
        for value, name in self._secrets:
            text = text.replace(value, placeholder(name))
        return text


def parameterize(code: str, language: str) -> Template:
    """Lift hard-coded values out of `code`; credentials come first so no secret survives."""
    source = Source.of(code, language)
    detectors = (credential_lifts, url_lifts, host_lifts, path_lifts, table_lifts)
    found = itertools.chain.from_iterable(d(source) for d in detectors)
    lifts = _without_overlaps(found, import_spans(code, language))
    names = _name_lifts(lifts)
    return _build(code, lifts, names)


def _without_overlaps(lifts: Iterable[Lift], protected: list[tuple[int, int]]) -> list[Lift]:
    """Keep lifts in priority order, dropping any that overlaps one already kept.

    Credentials are never dropped for a protected span (an import); other values are.
    """
    kept = _Spans()
    guarded = _Spans()
    for start, end in protected:
        guarded.add(start, end)
    chosen: list[Lift] = []
    for lift in lifts:
        if lift.end <= lift.start or kept.overlaps(lift.start, lift.end):
            continue
        if lift.kind != "credential" and guarded.overlaps(lift.start, lift.end):
            continue
        kept.add(lift.start, lift.end)
        chosen.append(lift)
    return sorted(chosen, key=lambda lift: lift.start)


class _Spans:
    """Disjoint character spans, sorted, for overlap tests in logarithmic time."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        index = bisect.bisect_left(self.starts, end)  # spans that start before `end`
        return index > 0 and self.ends[index - 1] > start

    def add(self, start: int, end: int) -> None:
        index = bisect.bisect_left(self.starts, start)
        self.starts.insert(index, start)
        self.ends.insert(index, end)


def _identity(lift: Lift) -> tuple[str, str]:
    value = lift.value.lower() if lift.kind in {"table", "host"} else lift.value
    return (lift.kind, value)


def _name_lifts(lifts: list[Lift]) -> dict[tuple[str, str], str]:
    """One name per distinct value, from its hint or its kind, numbered when names clash."""
    names: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    for lift in lifts:
        identity = _identity(lift)
        if identity in names:
            continue
        base = lift.hint or _DEFAULT_NAMES.get(lift.kind, lift.kind)
        name = base
        for number in itertools.count(2):
            if name not in taken:
                break
            name = f"{base}_{number}"
        names[identity] = name
        taken.add(name)
    return names


def _build(code: str, lifts: list[Lift], names: dict[tuple[str, str], str]) -> Template:
    pieces, cursor = [], 0
    parameters: dict[str, TemplateParameter] = {}
    secrets: dict[str, str] = {}
    for lift in lifts:
        name = names[_identity(lift)]
        pieces += [code[cursor : lift.start], placeholder(name)]
        cursor = lift.end
        secret = lift.kind == "credential"
        if secret:
            secrets[lift.value] = name
        parameters.setdefault(
            name, TemplateParameter(name, lift.kind, None if secret else lift.value)
        )
    pieces.append(code[cursor:])
    # Longest first, so a secret that contains another is replaced whole.
    ordered = tuple(sorted(secrets.items(), key=lambda item: -len(item[0])))
    return Template("".join(pieces), tuple(parameters.values()), ordered)


def without_secrets(code: str, language: str) -> str:
    """`code` as written, except that hard-coded credentials become placeholders."""
    return redact_template(parameterize(code, language).scrub(code))


def redact_template(text: str) -> str:
    """The shared redactor as a safety net over a template, keeping our placeholders.

    Should the redactor take a placeholder for a secret (`Bearer {{token}}`), the text between
    placeholders is redacted piece by piece instead.
    """
    whole = redact(text).text
    if _PLACEHOLDER.findall(whole) == _PLACEHOLDER.findall(text):
        return whole
    pieces = _PLACEHOLDER.split(text)
    holders = _PLACEHOLDER.findall(text)
    redacted = [redact(piece).text for piece in pieces]
    return "".join(itertools.chain.from_iterable(zip(redacted, [*holders, ""], strict=True)))
