"""Does a recalled memory apply to the caller? Its conditions checked against the caller's
environment: ``yes``, ``no`` or ``unknown``, with the reasons.

A memory's conditions are those it happened under: the environment it ran in (OS and its
version, architecture, runtime and package versions) and the errors it hit or resolved; a
snippet's are the environments it worked in and the package ranges it requires. Every
condition both sides state is compared: one that does not hold makes the memory not apply,
all that were compared holding make it apply, nothing comparable leaves it unknown. It is
judged only when the caller states an environment: without one nothing says what "me" is.

Versions hold on the same release line: a package's first two numbers (numpy 1.26.4 and
1.26.0 agree; 1.26 and 2.1, or pandas 2.1 and 2.2, do not: fixes land in minor releases);
a runtime's as it numbers them (Python, Go, Ruby, Rust by their minor; Node and Java by
their major); a version with no number is compared whole. A package is a condition of an
episode only when the episode names it (its text, command, error or tools): an environment
lists every installed package, and a failure is not about the hundred it never touched.
An error holds when the memory hit the caller's own (the same signature); the same kind
with another message is not judged; another kind does not hold.

``Applicability`` is one value per candidate, made from what recall expands anyway, so a
ranker can read it as a feature; recall turns it into the trust factor ``applies``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "APPLIES",
    "NOT_STATED",
    "Applicability",
    "CallerConditions",
    "combined",
    "environment_applies",
    "episode_applies",
    "episode_text",
    "release_line",
    "snippet_applies",
]

Status = Literal["yes", "no", "unknown"]
APPLIES: tuple[Status, ...] = ("yes", "no", "unknown")
_DECIDING: tuple[Status, ...] = ("no", "yes", "unknown")  # the first found decides
_VERDICTS: dict[str, Status] = {"compatible": "yes", "incompatible": "no"}  # requirements'
_SHOWN = 4  # reasons of one kind kept: the first few say it
_NUMBERS = re.compile(r"\d+")
_ARCHES = {"amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64"}
_RUNTIME_LINES = {"node": 1, "java": 1}  # numbers of a release line, where not two
_NAMING = ("title", "summary", "error_text", "observation", "action_command")


@dataclass(frozen=True)
class Applicability:
    """Whether a memory's conditions hold in the caller's environment, and why."""

    status: Status
    reasons: tuple[str, ...]

    @property
    def judged(self) -> bool:
        """False when there was nothing to judge against (the caller stated no environment)."""
        return self != NOT_STATED

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reasons": list(self.reasons)}


NOT_STATED = Applicability("unknown", ("the caller stated no environment",))


@dataclass(frozen=True)
class CallerConditions:
    """The caller's side: the environment stated (names settled as ingest settles them) and
    the signatures and kinds of the errors in the question."""

    os: str | None = None
    os_version: str | None = None
    arch: str | None = None
    runtime: str | None = None
    runtime_version: str | None = None
    packages: tuple[tuple[str, str], ...] = ()
    error_keys: tuple[str, ...] = ()
    error_kinds: tuple[str, ...] = ()

    def stated(self) -> bool:
        fields = (self.os, self.os_version, self.arch, self.runtime, self.runtime_version)
        return any(fields) or bool(self.packages)


def release_line(version: str, parts: int = 2) -> tuple[int, ...] | str:
    """A version's first ``parts`` numbers; the text itself when it has none."""
    numbers = _NUMBERS.findall(version)
    return tuple(int(n) for n in numbers[:parts]) if numbers else version.strip().lower()


def _named(package: str, text: str) -> bool:
    """Whether a memory's text (lower case) names the package."""
    return any(
        re.search(rf"(?<![\w.-]){re.escape(form)}(?![\w-])", text)
        for form in {package, package.replace("-", "_")}
    )


def _same(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


def _arch(value: str) -> str:
    lowered = value.strip().lower()
    return _ARCHES.get(lowered, lowered)


class _Tally:
    """Conditions compared so far: those that held, those that did not, those left open."""

    def __init__(self) -> None:
        self.held: list[str] = []
        self.failed: list[str] = []
        self.open: list[str] = []

    def compare(self, what: str, theirs: Any, mine: Any, *, lines: int = 0) -> None:
        if not theirs or not mine:
            return
        theirs, mine = str(theirs), str(mine)
        if what == "architecture":
            holds = _arch(theirs) == _arch(mine)
        elif lines:
            holds = release_line(theirs, lines) == release_line(mine, lines)
        else:
            holds = _same(theirs, mine)
        if holds:
            self.held.append(f"{what} {mine} as there")
        else:
            self.failed.append(f"{what} {theirs} there, {mine} here")

    def judged(self, nothing: str) -> Applicability:
        if self.failed:
            return Applicability("no", tuple(self.failed[:_SHOWN]))
        if self.held:
            return Applicability("yes", tuple((self.held + self.open)[:_SHOWN]))
        return Applicability("unknown", tuple(self.open[:_SHOWN]) or (nothing,))


def _environment(
    tally: _Tally, env: Mapping[str, Any], caller: CallerConditions, named: str | None
) -> None:
    """Compare what both sides state; packages only those the memory names (``named``, its
    text in lower case; None: every package listed)."""
    tally.compare("OS", env.get("os"), caller.os)
    if caller.os and env.get("os") and _same(str(env["os"]), caller.os):
        tally.compare("OS version", env.get("os_version"), caller.os_version, lines=2)
    tally.compare("architecture", env.get("arch"), caller.arch)
    tally.compare("runtime", env.get("runtime"), caller.runtime)
    if caller.runtime and env.get("runtime") and _same(str(env["runtime"]), caller.runtime):
        parts = _RUNTIME_LINES.get(caller.runtime.lower(), 2)
        tally.compare(
            str(caller.runtime), env.get("runtime_version"), caller.runtime_version, lines=parts
        )
    mine = dict(caller.packages)
    for package in env.get("packages") or ():
        name = package.get("name")
        if name in mine and (named is None or _named(str(name), named)):
            tally.compare(str(name), package.get("version"), mine[name], lines=2)


def environment_applies(
    env: Mapping[str, Any] | None, caller: CallerConditions | None
) -> Applicability:
    """Whether an environment's conditions hold in the caller's."""
    if caller is None or not caller.stated():
        return NOT_STATED
    if not env:
        return Applicability("unknown", ("no environment was recorded with it",))
    tally = _Tally()
    _environment(tally, env, caller, None)
    return tally.judged("it shares no stated condition with the caller's environment")


def _errors(tally: _Tally, errors: Iterable[Mapping[str, Any]], caller: CallerConditions) -> None:
    theirs = [e for e in errors if e and e.get("key")]
    if not theirs or not (caller.error_keys or caller.error_kinds):
        return
    same = next((e for e in theirs if e["key"] in caller.error_keys), None)
    if same is not None:
        tally.held.append(f"the same error: {same.get('kind') or same['key']}")
        return
    kinds = {str(e.get("kind")) for e in theirs if e.get("kind")}
    if kinds & set(caller.error_kinds):
        tally.open.append(f"the same kind of error ({', '.join(sorted(kinds))}), another message")
    elif kinds:
        tally.failed.append(
            f"error {', '.join(sorted(kinds)[:2])} there, {', '.join(caller.error_kinds[:2])} here"
        )


def episode_text(episode: Mapping[str, Any], tools: Iterable[Mapping[str, Any]] = ()) -> str:
    """What an episode names, in lower case: its text, command, error and tools."""
    parts = [str(episode.get(key) or "") for key in _NAMING]
    parts += [str(t.get("name") or "") for t in tools]
    return "\n".join(parts).lower()


def episode_applies(
    env: Mapping[str, Any] | None,
    errors: Sequence[Mapping[str, Any]],
    caller: CallerConditions | None,
    named: str | None = None,
) -> Applicability:
    """Whether an episode's conditions (its environment, its errors) hold for the caller;
    ``named``: its text (``episode_text``), the packages it names are its conditions."""
    if caller is None or not caller.stated():
        return NOT_STATED
    tally = _Tally()
    if env:
        _environment(tally, env, caller, named)
    else:
        tally.open.append("no environment was recorded with it")
    _errors(tally, errors, caller)
    return tally.judged("it shares no stated condition with the caller's environment")


def snippet_applies(
    worked_in: Sequence[Mapping[str, Any]],
    requirements: str | None,
    requirement_reasons: Sequence[str],
    caller: CallerConditions | None,
) -> Applicability:
    """Whether a snippet's conditions hold: any environment it worked in that agrees with the
    caller's (none disagreeing when several did), and its required package ranges (the
    verdict ``compatible | unknown | incompatible`` judged from them, with its reasons)."""
    if caller is None or not caller.stated():
        return NOT_STATED
    judged = [environment_applies(env, caller) for env in worked_in]
    where = next((j for j in judged if j.status == "yes"), None)
    if where is None:
        where = next((j for j in judged if j.status == "unknown"), None)
    if where is None and judged:
        where = Applicability("no", tuple(f"worked only where {r}" for r in judged[0].reasons))
    parts = [where] if where else []
    if requirements is not None:
        status = _VERDICTS.get(requirements, "unknown")
        parts.append(Applicability(status, tuple(requirement_reasons)))
    return combined(parts) if parts else Applicability("unknown", ("no condition recorded",))


def combined(parts: Sequence[Applicability]) -> Applicability:
    """Judgements of several conditions as one: no when any is no, yes when any is yes and
    none is no, else unknown; the reasons of the deciding ones."""
    for status in _DECIDING:
        deciding = [p for p in parts if p.status == status]
        if deciding:
            reasons = [r for p in deciding for r in p.reasons]
            return Applicability(status, tuple(dict.fromkeys(reasons))[:_SHOWN])
    return Applicability("unknown", ("no condition recorded",))
