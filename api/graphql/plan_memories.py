"""Recalled experience as planning memories: what to follow, what to avoid, lessons seen
across tasks, code to reuse, warnings about the caller's environment, and memories that
disagree — ranked, best first."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from metisgraph.api.graphql.plan_compact import cut_line, decisive, error_line, outline
from metisgraph.api.graphql.plan_prompt import Memory
from metisgraph.graph import Hit, PatternHit, RecallOutcome, SnippetHit
from metisgraph.ingest.code import Verdict

__all__ = ["memories_from"]

_KIND = {"success": "success", "failure": "failure"}  # partial, unknown: experience
_RISKY = ("high", "critical")
_TEMPLATE_LINES = 60  # a longer template is shown by its head; its id fetches it whole
_VALUE_CHARS = 400  # an action's parameters in the prompt; the episode's id fetches them whole


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _first_line(value: Any, chars: int = 200) -> str:
    """A summary (often an agent's whole thought) by its first non-blank line."""
    said = (x.strip() for x in str(value or "").splitlines())
    return cut_line(next((x for x in said if x), ""), chars)


def _environment(row: dict[str, Any] | None) -> str | None:
    if not row:
        return None
    runtime = " ".join(str(v) for v in (row.get("runtime"), row.get("runtime_version")) if v)
    parts = [row.get("os"), row.get("arch"), runtime]
    packages = [f"{p['name']} {p.get('version') or ''}".strip() for p in row.get("packages") or []]
    return ", ".join(str(p) for p in [*parts, *packages[:5]] if p) or None


def _conditions(hit: Hit) -> str | None:
    errors = [e.get("template") or e.get("key") for e in hit.errors if e.get("relation") == "HIT"]
    parts = [f"error {e}" for e in errors[:2] if e]
    where = _environment(hit.environment)
    if where:
        parts.append(f"environment {where}")
    tags = hit.episode.get("tags") or []
    if tags:
        parts.append("tags " + ", ".join(tags[:5]))
    return "; ".join(parts) or None


def _applies(hit: Hit) -> list[str]:
    """Whether its conditions hold in the caller's environment (only when one was stated)."""
    if not hit.applies.judged:
        return []
    return [f"applies to you: {hit.applies.status} ({'; '.join(hit.applies.reasons)})"]


def _why_hit(hit: Hit, rank: int, total: int) -> str:
    channels = sorted(hit.contributions.items(), key=lambda kv: -kv[1])[:3]
    matched = ", ".join(f"{name} {hit.channels.get(name, 0.0):.2f}" for name, _ in channels)
    trust = [f"{k} ×{v:.2f}" for k, v in sorted(hit.trust.items()) if abs(v - 1.0) >= 0.01]
    why = f"recall #{rank} of {total} (score {hit.score:.2f}; matched by {matched or 'graph'})"
    if trust:
        why += "; trust " + ", ".join(trust)
    if hit.flagged:
        why += "; " + ", ".join(hit.flagged)
    return why


def _values(value: Any) -> str | None:
    """A recorded map (action parameters) as `name=value, …`, compact JSON for nested values."""
    if not isinstance(value, dict) or not value:
        return None
    shown = (f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in value.items())
    text = ", ".join(shown)
    return text if len(text) <= _VALUE_CHARS else text[:_VALUE_CHARS] + " …"


def _task_lines(task: dict[str, Any] | None, failure: bool) -> list[str]:
    """The task it belongs to, how it ended, what it had to respect, the tests it failed."""
    if not task or not task.get("goal"):
        return []
    ended = task.get("outcome") or task.get("status") or "open"
    goal = [line.strip() for line in str(task["goal"]).splitlines() if line.strip()]
    more = f" … ({len(goal) - 1} more lines of the task cut)" if len(goal) > 1 else ""
    lines = [f"task: {cut_line(goal[0], 200)}{more} (ended {ended})"]
    constraints = [c for c in task.get("constraints") or [] if _text(c)]
    lines += ["task constraints: " + "; ".join(constraints)] if constraints else []
    failed = task.get("tests_failed") or []
    if failed and (failure or ended != "success"):
        lines.append("tests failed: " + ", ".join(failed[:5]) + (" …" if len(failed) > 5 else ""))
    return lines


def _episode_memory(hit: Hit, rank: int, total: int) -> Memory:
    """An episode compactly: what it did (its decisive lines), the error line it saw rather
    than its whole output, what resolved it; the episode's id fetches it whole."""
    e = hit.episode
    outcome = e.get("outcome") or "unknown"
    kind = _KIND.get(outcome, "experience")
    action = _text(e.get("action_command"))
    lines = [f"did: {decisive(action)}"] if action else []
    parameters = _values(e.get("action_parameters"))
    lines += [f"parameters: {parameters}"] if parameters else []
    if kind == "failure":
        raw = _text(e.get("error_text")) or _text(e.get("observation"))
        cause = error_line(raw) if raw else None
        lines += [f"cause: {cause}"] if cause else []
        conditions = _conditions(hit)
        lines += [f"applies when: {conditions}"] if conditions else []
        fixed = _text(e.get("resolution")) or _text(e.get("resolved_by"))
        lines += [f"later resolved: {outline(fixed)}"] if fixed else []
    else:
        observed = outline(e.get("observation") or "")
        lines += [f"observed: {observed}"] if observed else []
        resolution = _text(e.get("resolution"))
        lines += [f"resolution: {outline(resolution)}"] if resolution else []
        where = _environment(hit.environment)
        lines += [f"environment: {where}"] if where else []
    lines += _applies(hit)
    lines += _task_lines(hit.task, kind == "failure")
    tools = _tools(hit.tools)
    lines += [f"tools: {tools}"] if tools else []
    summary = _first_line(e.get("summary") or e.get("title"))  # its first line: the step
    heading = f"{summary} (outcome {outcome}; id {e['id']})"
    return Memory(
        kind=kind, id=e["id"], heading=heading, lines=tuple(lines),
        why=_why_hit(hit, rank, total), score=hit.score, source=hit,
    )  # fmt: skip


_FIX_KIND = {"fixed": "fix", "resolved": "fix", "workaround": "workaround"}


def _fix_record(fix: dict[str, Any]) -> str:
    runs = int(fix.get("runs") or 0)
    in_runs = f"in {runs} run{'s' if runs != 1 else ''}"
    if fix.get("kind") == "fixed":
        links = int(fix.get("links") or 0)
        return f"{in_runs}; {links} time{'s' if links != 1 else ''} the error did not come back"
    if fix.get("kind") == "workaround":
        return f"{in_runs}; a workaround: it got past the error without removing its cause"
    return f"{in_runs}; its task ended resolved after it (no evidence it removed the cause)"


def _fix_memory(fix: dict[str, Any], hit: Hit, label: int) -> Memory:
    """The step that fixed (or worked round) an error a recalled step hit, to follow."""
    action = _text(fix.get("action")) or ""
    head = next((line.strip() for line in action.splitlines() if line.strip()), "")
    verb = "worked round by" if fix.get("kind") == "workaround" else "fixed by"
    lines = [f"{verb}: `{head}`, {_fix_record(fix)}"]
    if "\n" in action.strip():
        lines.append(f"did: {decisive(action)}")
    parameters = _values(fix.get("parameters"))
    lines += [f"parameters: {parameters}"] if parameters else []
    lines += [f"evidence: {why}"] if (why := _text(fix.get("why"))) else []
    error = _text(fix.get("error"))
    summary = _first_line(fix.get("summary")) or head
    what = "workaround for" if fix.get("kind") == "workaround" else "fix for"
    heading = f"{what} {error or 'the error'} hit in M{label}: {summary} (id {fix['episode']})"
    confidence = fix.get("confidence")
    why = f"the lineage's fix link from the error episode {hit.episode['id']} hit" + (
        f" (confidence {confidence:.2f})" if isinstance(confidence, float) else "")  # fmt: skip
    return Memory(
        kind=_FIX_KIND.get(str(fix.get("kind")), "fix"), id=str(fix["episode"]),
        heading=heading, lines=tuple(lines), why=why, score=hit.score, related=(hit.episode["id"],),
        source=fix,
    )  # fmt: skip


def _fixes(hit: Hit, placed: dict[str, int], after: int) -> tuple[list[Memory], list[Memory]]:
    """The hit's fixes (to show just above it) and workarounds (just below), not yet placed;
    ``after`` memories come before them."""
    rows = [f for f in hit.fixed_by if f.get("episode") and f["episode"] not in placed]
    above = [f for f in rows if f.get("kind") != "workaround"]
    label = after + len(above) + 1  # the hit's own label
    below = [f for f in rows if f.get("kind") == "workaround"]
    return [_fix_memory(f, hit, label) for f in above], [_fix_memory(f, hit, label) for f in below]


def _tools(tools: list[dict[str, Any]]) -> str:
    """The tools an episode used, each with how its uses went in the project."""
    return "; ".join(
        f"{t['name']} ({t.get('uses') or 0} uses, {t.get('successes') or 0} succeeded, "
        f"{t.get('failures') or 0} failed"
        + (f", last {t['last_used_at']:%Y-%m-%d})" if t.get("last_used_at") else ")")
        for t in tools[:5]
    )


def _pattern_memory(found: PatternHit) -> Memory:
    """A lesson maintain drew from several tasks, placed where recall ranked it: just above
    its best member."""
    p = found.pattern
    rate = p.get("success_rate")
    record = f"success rate {rate:.0%}; " if rate is not None else ""
    heading = (f"{p.get('title') or 'lesson'} (pattern of {p.get('support') or 0} tasks, "
               f"{p.get('episodes') or 0} episodes; {record}id {p['id']})")  # fmt: skip
    lines = [f"lesson: {summary}"] if (summary := _text(p.get("summary"))) else []
    tools = p.get("tools") or []
    lines += [f"tools: {', '.join(tools[:5])}"] if tools else []
    lines.append("members: " + ", ".join(found.members[:5]))
    why = (f"recall #{found.rank} (score {found.score:.2f}): a pattern ranks just above its "
           f"best member, episode {found.best_member}")  # fmt: skip
    return Memory(
        kind="pattern", id=p["id"], heading=heading, lines=tuple(lines), why=why,
        score=found.score, related=tuple(found.members), source=found,
    )  # fmt: skip


def _parameters(row: dict[str, Any]) -> str | None:
    def listed(value: Any) -> list[dict[str, Any]]:
        loaded = json.loads(value) if isinstance(value, str) and value else value or []
        return loaded if isinstance(loaded, list) else []

    code = [p["name"] + (f": {p['type']}" if p.get("type") else "") for p in listed(
        row.get("parameters"))]  # fmt: skip
    lifted = [f"{{{p['name']}}} ({p['kind']})" for p in listed(row.get("template_parameters"))]
    return ", ".join(code + lifted) or None


def _snippet_lines(row: dict[str, Any]) -> tuple[str, ...]:
    template = (row.get("template") or "").splitlines()
    head = template[:_TEMPLATE_LINES]
    if len(template) > len(head):
        head.append(f"… ({len(template) - len(head)} more lines: fetch snippet {row['id']})")
    lines = ["template:", *(f"  {line}" for line in head)]
    parameters = _parameters(row)
    return (*lines, f"parameters: {parameters}") if parameters else tuple(lines)


def _snippet_heading(row: dict[str, Any]) -> str:
    name = row.get("signature") or row.get("name") or row["id"]
    rate = row.get("success_rate")
    uses = row.get("uses") or 0
    record = f"success rate {rate:.0%} over {uses} uses" if rate is not None else "not reused yet"
    return f"{name} ({row.get('language')} {row.get('kind')}; {record}; id {row['id']})"


def _snippet_memory(
    row: dict[str, Any], verdict: str, reasons: Sequence[str], why: str, score: float
) -> Memory:
    if verdict == "incompatible" or (row.get("risk") or "none") in _RISKY:
        problem = "; ".join(reasons) if verdict == "incompatible" else f"risk {row.get('risk')}"
        return Memory(
            kind="warning", id=row["id"], heading=f"do not reuse {_snippet_heading(row)} here",
            lines=(f"reason: {problem or 'incompatible'}",), why=why, score=score, source=row,
        )  # fmt: skip
    lines = _snippet_lines(row)
    if reasons:
        lines = (*lines, f"compatibility {verdict}: " + "; ".join(reasons))
    return Memory(kind="snippet", id=row["id"], heading=_snippet_heading(row), lines=lines,
                  why=why, score=score, source=row)  # fmt: skip


def _bridge(
    hit: Hit, label_of: dict[str, int], allowed: set[str] | None, shown: set[str]
) -> list[Memory]:
    found = []
    for row in hit.snippets:
        if allowed is not None and row["id"] not in allowed:
            continue
        if (row.get("template") or "").strip() in shown:  # an episode's "did:" shows it
            continue
        why = (f"{str(row.get('relation', 'USED')).lower()} by episode {hit.episode['id']} "
               f"(M{label_of[hit.episode['id']]})")  # fmt: skip
        verdict = row.get("compatible") or "unknown"
        found.append(_snippet_memory(row, verdict, row.get("reasons") or (), why, hit.score))
    return found


def _conflicts(outcome: RecallOutcome, placed: dict[str, int], done: set[int]) -> list[Memory]:
    """The conflicts whose sides are both placed, or one placed and the other a partner
    recall fetched from outside its hits (shown here by its summary and outcome)."""
    outside = {p.episode["id"]: p.episode for p in outcome.partners}
    found = []
    for n, c in enumerate(outcome.conflicts):
        sides = [s for s in (c.a, c.b) if s in placed]
        other = next((s for s in (c.a, c.b) if s not in placed), None)
        if n in done or not sides or (other is not None and other not in outside):
            continue
        done.add(n)
        labels = [f"M{placed[s]}" if s in placed else f"episode {s} (not recalled)"
                  for s in (c.a, c.b)]  # fmt: skip
        lines = [f"similar situations (similarity {c.similarity:.2f}); weigh both before "
                 "following either"]  # fmt: skip
        if other is not None:
            partner = outside[other]
            lines.append(
                f"episode {other} ({partner.get('outcome') or 'no outcome'}): "
                f"{partner.get('summary') or partner.get('title') or ''}".rstrip(": ")
            )
        heading = f"{labels[0]} and {labels[1]} disagree: {c.reason}"
        found.append(Memory(
            kind="conflict", id=sides[0], heading=heading,
            lines=tuple(lines), why="recall found them side by side", score=0.0,
            related=tuple(s for s in (c.a, c.b) if s != sides[0]), source=c,
        ))  # fmt: skip
    return found


def _pattern_with_code(
    found: PatternHit, placed: dict[str, int], allowed: set[str] | None, shown: set[str]
) -> list[Memory]:
    """The pattern, then the snippet it recommends (unless placed, shown or not allowed)."""
    out = [_pattern_memory(found)]
    row = found.snippet
    if not row or row["id"] in placed or (allowed is not None and row["id"] not in allowed):
        return out
    if (row.get("template") or "").strip() not in shown:
        why = f"recommended by pattern {found.pattern['id']} (its members' best snippet)"
        out.append(_snippet_memory(row, "unknown", (), why, found.score))
    return out


def _fixed_first(hits: list[Hit]) -> list[tuple[int, Hit]]:
    """The hits with their ranks, in the order they are placed: a hit whose error another
    hit fixed moves up to just before the first such fix, so that the fix is shown as its
    fix (just above it, with the runs it fixed) and not as a plain step ranked above the
    error it fixes."""
    at = {hit.episode["id"]: n for n, hit in enumerate(hits)}

    def place(n: int) -> tuple[int, int, int]:
        fixes = [at[f["episode"]] for f in hits[n].fixed_by
                 if f.get("kind") != "workaround" and f.get("episode") in at]  # fmt: skip
        first = min(fixes, default=n)
        return (first, 0, n) if first < n else (n, 1, n)  # before its first fix, else in place

    return [(n + 1, hits[n]) for n in sorted(range(len(hits)), key=place)]


def memories_from(
    outcome: RecallOutcome,
    searched: Iterable[tuple[SnippetHit, Verdict]],
    *,
    verified_only: bool,
) -> list[Memory]:
    """Memories in the order the prompt shows them: each recalled episode (after the patterns
    recall ranked just above it, each with the snippet it recommends), then the code across
    its bridge, then the conflicts among those placed; then the snippets the search found on
    its own. With ``verified_only``, code only from the (verified) search."""
    searched = list(searched)
    allowed = {hit.snippet["id"] for hit, _ in searched} if verified_only else None
    memories: list[Memory] = []
    placed: dict[str, int] = {}  # memory id -> its label number
    settled: set[int] = set()
    hits = [] if outcome.abstained else outcome.hits
    above: dict[str, list[PatternHit]] = {}  # best member's id -> the patterns above it
    for lesson in [] if outcome.abstained else outcome.patterns:
        above.setdefault(lesson.best_member, []).append(lesson)
    shown = {(h.episode.get("action_command") or "").strip() for h in hits} - {""}
    for rank, hit in _fixed_first(hits):
        for lesson in above.pop(hit.episode["id"], []):
            for memory in _pattern_with_code(lesson, placed, allowed, shown):
                if memory.id not in placed:
                    memories.append(memory)
                    placed[memory.id] = len(memories)
        fixes, workarounds = _fixes(hit, placed, len(memories))
        for memory in fixes:  # what fixed the error it hit: to follow, just above it
            memories.append(memory)
            placed[memory.id] = len(memories)
        if hit.episode["id"] not in placed:  # else shown already, as the fix of an earlier hit
            memories.append(_episode_memory(hit, rank, len(hits)))
            placed[hit.episode["id"]] = len(memories)
        for memory in workarounds:
            memories.append(memory)
            placed[memory.id] = len(memories)
        for memory in _bridge(hit, placed, allowed, shown):
            if memory.id not in placed:
                memories.append(memory)
                placed[memory.id] = len(memories)
        memories += _conflicts(outcome, placed, settled)
    for lesson in (p for patterns in above.values() for p in patterns):  # patterns asked alone
        memories.append(_pattern_memory(lesson))
        placed[lesson.pattern["id"]] = len(memories)
    for found, verdict in searched:
        if found.snippet["id"] in placed or (found.snippet.get("template") or "").strip() in shown:
            continue
        channels = ", ".join(f"{k} {v:.2f}" for k, v in sorted(found.channels.items()))
        gate = "verified, " if verified_only else ""
        why = f"snippet search ({gate}score {found.score:.2f}; {channels or 'structure'})"
        memories.append(_snippet_memory(
            found.snippet, verdict.status, verdict.reasons, why, found.score))  # fmt: skip
        placed[found.snippet["id"]] = len(memories)
    return memories
