"""Which step of a task dealt with each error it hit, and on what evidence.

A step **fixed** an error when what it did addresses what the error says, and the error does
not come back in the task after it (so only steps after its last sighting are candidates):

* ``module`` — it installs the missing module or package, or creates it (a folder or file
  of that name);
* ``frame`` — it edits the file of the error's innermost own frame, or a source file the
  message names;
* ``path`` — it creates or writes the path the message names;
* ``setting`` — it sets the variable or option the message names (for an encoding error:
  the encoding);
* ``name`` — it edits code and mentions an identifier the message quotes;
* ``retry`` — the call that failed is made again with the same tool on the same target,
  changed, and no longer fails;
* ``rerun`` — the command that printed the error is run again and no longer prints it: the
  re-run itself when it changed (a variable, an option), else the last step before it that
  changed something (wrote a file, installed a package).

A step **worked round** an error (``workaround``, rule ``other-means``) when no fix is found
and, after the last sighting, a different tool succeeded on the very target the failing call
was about (an editor refusing a replacement, then ``sed`` on that file).

An **attempt** is a step between the error's first and last sighting, or a failing step
after it, that acted on what the error says (the same evidence, but the error came back or
the step failed): it tried, it did not end the error. Steps that merely came after are none
of these.

Each link keeps its rule, a ``why`` naming the module, file, path, setting or command, and a
confidence: the rules' own standing, not a fitted number.
"""

from __future__ import annotations

from dataclasses import dataclass

from metisgraph.graph.lineage.evidence import (
    ErrorSays,
    StepDid,
    package_matches,
    stem,
)

__all__ = ["CONFIDENCE", "Link", "StepFacts", "attribute"]

CONFIDENCE = {
    "module": 0.9,
    "frame": 0.8,
    "path": 0.8,
    "setting": 0.75,
    "rerun": 0.7,
    "retry": 0.7,
    "name": 0.65,
    "other-means": 0.6,
}


@dataclass(frozen=True)
class StepFacts:
    """One step of a task, in chain order, with what it did and the errors it hit."""

    id: str
    outcome: str | None
    did: StepDid
    hits: frozenset[str]  # error keys


@dataclass(frozen=True)
class Link:
    episode: str
    error: str
    kind: str  # fixed | workaround | attempt
    rule: str
    why: str
    confidence: float


def _direct(says: ErrorSays, did: StepDid, failed: bool) -> tuple[str, str] | None:
    """The rule and why a step addresses what the error says, from what it did alone. An
    install that failed installed nothing, nor did an editor call that failed (the tool
    refused or reverted it); a shell edit is made even when what ran after it fails."""
    if failed and did.editor:
        return None
    for module in sorted(says.modules):
        for spec in sorted(did.installs) if not failed else ():
            if package_matches(module, spec):
                return "module", f"installs {spec} for {module}"
        for path in sorted(did.writes):
            parts = {p.lower() for p in path.replace(".py", "").split("/") if p}
            if module.split(".")[0] in parts:
                return "module", f"creates {path} for {module}"
    for path in sorted(did.writes):
        if stem(path) in says.files:
            return "frame", f"edits {path}" + (f" ({says.frame})" if says.frame else "")
        if any(_same_path(path, p) for p in says.paths):
            return "path", f"writes {path}, the path the message names"
    for setting in sorted(says.settings):
        if setting in did.sets or (setting == "encoding" and "encoding=" in did.text):
            return "setting", f"sets {setting}"
    if did.edits:
        for name in sorted(says.names):
            if name in did.text:
                return "name", f"edits code naming {name}"
    return None


def _same_path(written: str, named: str) -> bool:
    a, b = written.strip("'\"").rstrip("/"), named.strip("'\"").rstrip("/")
    return a == b or a.endswith("/" + b) or (b.endswith("/" + a) and len(a) > 3)


def _runs_again(hit: StepDid, later: StepDid) -> tuple[str, bool] | None:
    """The failing step's run found in a later step: (the command, whether it changed)."""
    if not hit.runs:
        return None
    failing = hit.runs[-1]
    key = _run_key(failing)
    for run in later.runs:
        if _run_key(run) == key:
            changed = _arguments(run) != _arguments(failing) or bool(later.sets - hit.sets)
            return run, changed
    return None


def _run_key(run: str) -> str:
    """What is run: the program (and its ``-m`` module) and its last argument, the script or
    file it runs on — ``python -m pytest -q tests/x.py`` → ``python -m pytest tests/x.py``,
    ``javac -cp lib Main.java`` → ``javac Main.java``."""
    words = run.split()
    head = words[:3] if len(words) > 2 and words[1] == "-m" else words[:1]
    rest = [w for w in words[len(head) :] if not w.startswith("-")]
    return " ".join(head + rest[-1:])


def _arguments(run: str) -> list[str]:
    """Its arguments other than flags (a changed classpath, another input): a change."""
    words = run.split()
    return sorted(w for i, w in enumerate(words) if not w.startswith("-") or "=" in w)


def _changed(did: StepDid) -> bool:
    return bool(did.writes or did.installs or did.sets or did.edits)


def attribute(steps: list[StepFacts], errors: dict[str, ErrorSays]) -> list[Link]:
    """The fixed / workaround / attempt links of one task's errors (steps in chain order)."""
    links: list[Link] = []
    for key, says in sorted(errors.items()):
        seen = [i for i, s in enumerate(steps) if key in s.hits]
        if not seen:
            continue
        first, last = seen[0], seen[-1]
        fix = _fix(steps, key, says, last, {k: e.shape for k, e in errors.items()})
        if fix is not None:
            links.append(fix)
        else:
            worked = _workaround(steps, key, last)
            if worked is not None:
                links.append(worked)
        decided = {link.episode for link in links if link.error == key}
        for i in range(first + 1, len(steps)):
            step = steps[i]
            if step.id in decided or (i > last and step.outcome != "failure"):
                continue
            found = _direct(says, step.did, False)  # a failed install was still an attempt
            if found is None:
                found = _varied(steps, seen, i)
            if found is not None:
                rule, why = found
                links.append(Link(step.id, key, "attempt", rule, why, CONFIDENCE[rule]))
    return links


def _varied(steps: list[StepFacts], seen: list[int], i: int) -> tuple[str, str] | None:
    """A step that ran a failing sighting's command again with something changed (an
    option, a variable): it tried something, whether or not the error came back."""
    earlier = [j for j in seen if j < i]
    if not earlier:
        return None
    hit, step = steps[earlier[-1]].did, steps[i].did
    again = _runs_again(hit, step)
    if again is None:
        return None
    run, _ = again
    if run == hit.runs[-1] and not (step.sets - hit.sets) and not _changed(step):
        return None
    return "rerun", f"ran {run[:80]} again, changed"


def _fix(
    steps: list[StepFacts], key: str, says: ErrorSays, last: int, shapes: dict[str, str | None]
) -> Link | None:
    hit = steps[last].did
    for i in range(last + 1, len(steps)):
        step = steps[i]
        found = _direct(says, step.did, step.outcome == "failure")
        if found is not None:
            rule, why = found
            return Link(step.id, key, "fixed", rule, why, CONFIDENCE[rule])
        # "No longer fails": passing, or failing on another error only (it got further).
        # A tool failing again the same way is no further (its message quotes other text).
        further = step.outcome != "failure" or (
            bool(step.hits)
            and (says.shape is None or all(shapes.get(h) != says.shape for h in step.hits))
        )
        again = _runs_again(hit, step.did) if further else None
        if again is not None:
            run, changed = again
            if changed or _changed(step.did):
                why = f"ran {run[:80]} again, changed; the error did not come back"
                return Link(step.id, key, "fixed", "rerun", why, CONFIDENCE["rerun"])
            if step.outcome == "failure":
                return None  # unchanged and failing still: nothing to credit it to
            for j in range(i - 1, last, -1):
                if _changed(steps[j].did):
                    why = f"changed before {run[:80]} ran again without the error"
                    return Link(steps[j].id, key, "fixed", "rerun", why, CONFIDENCE["rerun"])
            return None  # the same command passing with nothing changed: no step to credit
        if further and _retried(hit, step):
            why = f"{step.did.tool} on {hit.target} again, changed; it no longer fails"
            return Link(step.id, key, "fixed", "retry", why, CONFIDENCE["retry"])
    return None


def _retried(hit: StepDid, step: StepFacts) -> bool:
    """The same tool called again on the same target, changed (and, the caller checks, not
    failing, or failing on another kind of error only: the call was corrected, got further)."""
    return (
        hit.tool is not None
        and step.did.tool == hit.tool
        and hit.target is not None
        and step.did.target == hit.target
        and step.did.text != hit.text
    )


def _workaround(steps: list[StepFacts], key: str, last: int) -> Link | None:
    hit = steps[last].did
    if hit.target is None:
        return None
    for i in range(last + 1, len(steps)):
        step = steps[i]
        if step.outcome == "failure" or step.did.tool == hit.tool or not step.did.edits:
            continue
        if any(_same_path(w, hit.target) for w in step.did.writes):
            why = f"{step.did.tool} on {hit.target} instead of {hit.tool}"
            return Link(step.id, key, "workaround", "other-means", why, CONFIDENCE["other-means"])
    return None
