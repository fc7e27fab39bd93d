"""Instance values in a snippet's code become parameters with runnable defaults.

What the sanitiser abstracts in text (``<HOME>``, ``<IP>``, ``<HOST>``, ``<EMAIL>``) is not
kept by default (#25 item 1), and code is no exception: a home directory, an internal IP, a
colleague's e-mail written in a template, its tests or its examples become a named
parameter (``{{home}}``, ``{{ip}}`` …) wherever they appear, so the tests read the same
parameter as the code. Each gets a default that runs anywhere (``/work/home``,
``127.0.0.1``, ``localhost``, ``user@example.com``), never the original value, so
``verifySnippet`` runs the template as stored; a caller's value replaces it.

A value the code analysis already lifted out of a string literal (``SERVER = "{{server}}"``)
is that value's parameter when the literal is exactly it; when the literal holds more
(``"/home/alice/reports/q1.csv"``) its default is written with the parameter
(``{{home}}/reports/q1.csv``) and filled when it runs. A lifted credential gets a dummy
default (``dummy-<name>``): a test that only assigns a key runs without one.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from metisgraph.ingest.code import TemplateParameter
from metisgraph.ingest.sanitize.abstraction import abstract, sanitize

__all__ = ["Lifted", "lift_instances"]

# Sanitiser kind -> the parameter's base name (and its kind, in lower case).
KINDS = {"HOME": "home", "EMAIL": "email", "IP": "ip", "HOST": "host"}
_PLACEHOLDER = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")


def stand_in(kind: str, n: int) -> str:
    """A value of ``kind`` that runs anywhere; the n-th distinct one (from 1) differs."""
    if kind == "HOME":
        return "/work/home" if n == 1 else f"/work/home{n}"
    if kind == "EMAIL":
        return "user@example.com" if n == 1 else f"user{n}@example.com"
    if kind == "IP":
        return f"127.0.0.{min(n, 254)}"  # all of 127/8 is this machine
    return "localhost"


@dataclass(frozen=True)
class Lifted:
    template: str
    parameters: tuple[TemplateParameter, ...]
    tests: list[str]
    examples: list[str]


def lift_instances(
    template: str,
    parameters: Sequence[TemplateParameter],
    tests: Sequence[str],
    examples: Sequence[str],
) -> Lifted:
    """The snippet's texts with instance values as parameters, and every parameter's default."""
    lifted = [p.example for p in parameters if p.example]
    found: dict[str, str] = {}  # value -> sanitiser kind, in order of appearance
    for text in (template, *tests, *examples, *lifted):
        for kind, values in abstract(text).details.items():
            for value in values if kind in KINDS else ():
                found.setdefault(value, kind)
    names = {p.example: p.name for p in parameters if p.example in found}
    taken = {p.name for p in parameters} | set(_PLACEHOLDER.findall(template))
    counts: dict[str, int] = {}
    standing: dict[str, str] = {}
    added: list[TemplateParameter] = []
    for value, kind in found.items():
        counts[kind] = counts.get(kind, 0) + 1
        standing[value] = stand_in(kind, counts[kind])
        if value in names:
            continue
        name, n = KINDS[kind], 2
        while name in taken:
            name, n = f"{KINDS[kind]}_{n}", n + 1
        taken.add(name)
        names[value] = name
        added.append(TemplateParameter(name, KINDS[kind], None, standing[value]))
    order = sorted(names, key=len, reverse=True)  # an e-mail before the host inside it

    def swap(text: str) -> str:
        for value in order:
            text = text.replace(value, "{{" + names[value] + "}}")
        return text

    kept = [_with_default(p, names, standing, swap) for p in parameters]
    tests_out, examples_out = [swap(t) for t in tests], [swap(x) for x in examples]
    known = {p.name for p in kept} | {p.name for p in added}
    for text in (*tests_out, *examples_out):  # a credential lifted from a test alone
        for name in _PLACEHOLDER.findall(text):
            if name not in known:
                known.add(name)
                added.append(TemplateParameter(name, "credential", None, f"dummy-{name}"))
    return Lifted(swap(template), (*kept, *added), tests_out, examples_out)


def _with_default(
    parameter: TemplateParameter,
    names: Mapping[str, str],
    standing: Mapping[str, str],
    swap: Callable[[str], str],
) -> TemplateParameter:
    example = parameter.example
    if parameter.kind == "credential":
        return dataclasses.replace(parameter, example=None, default=f"dummy-{parameter.name}")
    if example is None or sanitize(example).text == example:
        return parameter  # nothing private in it: the example runs as it is
    if names.get(example) == parameter.name:
        return dataclasses.replace(parameter, example=None, default=standing[example])
    written = swap(example)
    rest = _PLACEHOLDER.sub("", written)
    default = written if written != example and sanitize(rest).text == rest else None
    return dataclasses.replace(parameter, example=None, default=default)
