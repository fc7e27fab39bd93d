"""verify_snippet: the gate between code memory and "verified".

A snippet is run only when review allows it (high or critical risk waits for approval), as
files in a throw-away sandbox; its exit code decides. A pass writes VERIFIED_IN the
environment with the evidence, a failure counts against the snippet; a refusal writes
nothing. Every text kept (the command, the output tail) is redacted first.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from metisgraph.graph import GraphStore, record_failure, record_pass, snippet_detail
from metisgraph.ingest.environment import (
    EnvironmentFingerprint,
    environment_row,
    fingerprint,
)
from metisgraph.ingest.records import EnvironmentInput
from metisgraph.ingest.sandbox.confine import RunResult
from metisgraph.ingest.sandbox.evidence import EnvironmentMismatch, verified_environment
from metisgraph.ingest.sandbox.runner import Sandbox, SandboxUnavailable
from metisgraph.ingest.sandbox.workspace import Unrunnable, workspace
from metisgraph.ingest.sanitize.redaction import redact

__all__ = ["MAX_COMMAND_CHARS", "SnippetNotFound", "Verification", "verify_snippet"]

MAX_COMMAND_CHARS = 4000
_RISKY = frozenset({"high", "critical"})
# What kills a process of a run when it passes a limit (SIGKILL also ends the CPU limit).
_SIGNALS = {signal.SIGKILL: "the CPU limit or a kill", signal.SIGXFSZ: "the file size limit",
            signal.SIGXCPU: "the CPU limit"}  # fmt: skip


class SnippetNotFound(LookupError):
    """The project holds no snippet with that id."""


@dataclass(frozen=True)
class Verification:
    """The verdict on one run: passed, failed or refused (nothing ran), and the evidence."""

    snippet_id: str
    status: str  # passed | failed | refused
    reason: str | None = None
    command: str | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    timed_out: bool = False
    output_tail: str | None = None
    environment: EnvironmentFingerprint | None = None
    counts: Mapping[str, Any] | None = None  # the snippet's uses, successes, failures after


async def verify_snippet(
    store: GraphStore,
    sandbox: Sandbox,
    *,
    project: str,
    snippet_id: str,
    environment: EnvironmentInput | None = None,
    command: str | None = None,
    parameters: Mapping[str, str] | None = None,
) -> Verification:
    """Run a snippet's tests (or `command`) in the sandbox and record the verdict."""
    if command is not None and len(command) > MAX_COMMAND_CHARS:
        raise ValueError(f"command: at most {MAX_COMMAND_CHARS} characters, got {len(command)}")
    snippet = await snippet_detail(store, project, snippet_id)
    if snippet is None:
        raise SnippetNotFound(f"no snippet {snippet_id!r} in project {project!r}")
    refusal = review_refusal(snippet)
    if refusal:
        return Verification(snippet_id, "refused", refusal)
    language = str(snippet.get("language") or "text")
    try:
        work = workspace(snippet, command.strip() if command else None, parameters or {})
        env = await asyncio.to_thread(verified_environment, language, environment)
        run = await sandbox.run(work.files, work.command)
    except (Unrunnable, EnvironmentMismatch, SandboxUnavailable) as error:
        return Verification(snippet_id, "refused", str(error))
    if not run.started:
        return Verification(snippet_id, "refused", _setup_failed(run))
    return await _record(store, project, snippet_id, work.command, run, env or fingerprint())


def review_refusal(snippet: Mapping[str, Any]) -> str | None:
    """Why review forbids running the snippet, or None when it may run."""
    status = snippet.get("review_status") or "unreviewed"
    if status == "rejected":
        return "a reviewer rejected this snippet: it is never run"
    risk = snippet.get("risk") or "none"
    if risk in _RISKY and status != "approved":
        return (
            f"its safety scan says {risk} risk and it is {status}: it runs only once a "
            "reviewer approves it (reviewMemory status approved)"
        )
    return None


async def _record(
    store: GraphStore,
    project: str,
    snippet_id: str,
    command: str,
    run: RunResult,
    env: EnvironmentFingerprint,
) -> Verification:
    kept_command, tail = redact(command).text, redact(run.output).text
    evidence = {"command": kept_command, "exit_code": run.exit_code,
                "duration_ms": run.duration_ms, "output_tail": tail}  # fmt: skip
    if run.exit_code == 0:
        counts = await record_pass(
            store, project, snippet_id, environment_row(project, env, []), evidence
        )
        reason = None
    else:
        counts = await record_failure(store, project, snippet_id, env.key, evidence)
        reason = _failure_reason(run)
    if counts is None:
        raise SnippetNotFound(f"snippet {snippet_id!r} of project {project!r} was forgotten")
    status = "passed" if run.exit_code == 0 else "failed"
    return Verification(
        snippet_id, status, reason, kept_command, run.exit_code, run.duration_ms,
        run.timed_out, tail, env, counts,
    )  # fmt: skip


def _failure_reason(run: RunResult) -> str:
    if run.timed_out:
        return f"killed at the time limit after {run.duration_ms} ms"
    code = run.exit_code or 0
    # A signal ends the run itself (negative) or a command its shell waited for (128 + n).
    killed = _signal(-code if code < 0 else code - 128)
    if code < 0:
        return f"killed by {killed or -code}"
    return f"the check exited with {code}" + (f" (killed by {killed}?)" if killed else "")


def _signal(number: int) -> str | None:
    try:
        name = signal.Signals(number)
    except ValueError:
        return None
    cause = _SIGNALS.get(name)
    return name.name + (f": {cause}" if cause else "")


def _setup_failed(run: RunResult) -> str:
    lines = [line for line in run.output.strip().splitlines() if line.strip()][-3:]
    detail = " / ".join(redact(line).text for line in lines) or f"exit {run.exit_code}"
    return f"the sandbox could not be set up: {detail}"
