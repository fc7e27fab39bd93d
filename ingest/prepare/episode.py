"""Turn a validated record into what is stored: sanitized text, extracted links, embed text.

Nothing raw leaves this module: every text is redacted (secrets) and abstracted
(instance details) before it is stored or embedded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from metisgraph.graph import CONFIDENCE, project_scope
from metisgraph.ingest.code.safety import scan
from metisgraph.ingest.environment.extract import EnvironmentFingerprint, extract_environment
from metisgraph.ingest.errors.signatures import ErrorSignature, extract_errors
from metisgraph.ingest.prepare.keywords import identifier_keywords
from metisgraph.ingest.prepare.symbols import symbol_weights
from metisgraph.ingest.records import MAX_NAME_CHARS, EpisodeRecord, Source, TaskRecord
from metisgraph.ingest.sanitize.abstraction import sanitize
from metisgraph.ingest.sanitize.redaction import redact, redact_value
from metisgraph.ingest.tools import ToolUse, tools_of_action

__all__ = [
    "DEFAULT_CONFIDENCE",
    "MAX_TEXT_CHARS",
    "PIPELINE_VERSION",
    "PreparedEpisode",
    "PreparedTask",
    "clean_tags",
    "clean_tool",
    "embed_text",
    "prepare_episode",
    "prepare_task",
    "sanitize_value",
]

# Part of every content hash: a release that prepares episodes differently re-processes them.
PIPELINE_VERSION = "3"

# The prior confidence of each source (graph/confidence.py says why each is what it is).
DEFAULT_CONFIDENCE = {source: CONFIDENCE.prior(source.value).mean for source in Source}
# Long observations are kept (sanitized) for reading, but only their head is embedded.
_EMBED_OBSERVATION_CHARS = 600
_EMBED_CHARS = 2000
# How much of a text field is stored. A build log or a dumped table can run to megabytes:
# its head (what was run) and tail (how it ended: the error) are kept, the middle is cut
# with a marker saying how much, and the episode records what was cut (`cut`).
MAX_TEXT_CHARS = {
    "goal": 100_000,
    "title": 2_000,
    "summary": 100_000,
    "reasoning": 100_000,
    "action_command": 100_000,
    "observation": 100_000,
    "error_text": 100_000,
}
_HEAD_SHARE = 2 / 3
_LINE_SLACK = 2_000  # how far a cut may move to fall between lines


def _digest(*parts: object) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def _clean(text: str | None, details: dict[str, set[str]]) -> str | None:
    if text is None:
        return None
    result = sanitize(text)
    for kind, values in result.details.items():
        details.setdefault(kind, set()).update(values)
    return result.text


def _clean_within(
    name: str, text: str | None, details: dict[str, set[str]], cut: dict[str, int]
) -> str | None:
    """``_clean`` for a field with a ceiling: a longer text keeps its head and tail."""
    limit = MAX_TEXT_CHARS[name]
    if text is None or len(text) <= limit:
        return _clean(text, details)
    # Secrets are redacted in the whole text first: a key block or a URL that straddles
    # the cut is then gone from both sides, not half kept. The cut falls between lines.
    whole = redact(text).text
    if len(whole) <= limit:
        return _clean(whole, details)
    head, tail = _head_and_tail(whole, limit)
    cut[name] = len(text)
    marker = f"[… {len(whole) - len(head) - len(tail):,} characters cut …]"
    return "\n".join(k for k in (_clean(head, details), marker, _clean(tail, details)) if k)


def _head_and_tail(text: str, limit: int) -> tuple[str, str]:
    """At most ``limit`` characters: the first two thirds and the last third, whole lines."""
    head_end = int(limit * _HEAD_SHARE)
    tail_start = len(text) - (limit - head_end)
    newline = text.rfind("\n", head_end - _LINE_SLACK, head_end)
    head_end = newline if newline > 0 else head_end
    newline = text.find("\n", tail_start, tail_start + _LINE_SLACK)
    tail_start = newline + 1 if newline >= 0 else tail_start
    return text[:head_end], text[tail_start:]


def sanitize_value(value: Any, details: dict[str, set[str]]) -> Any:
    """Sanitize every string inside a JSON-like value (facts, action parameters).

    Values under secret-sounding keys (``db_password``, ``token``) are redacted first,
    whatever they look like.
    """
    return _sanitize_leaves(redact_value(value), details)


def _sanitize_leaves(value: Any, details: dict[str, set[str]]) -> Any:
    if isinstance(value, str):
        return _clean(value, details)
    if isinstance(value, dict):
        return {str(k): _sanitize_leaves(v, details) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_sanitize_leaves(v, details) for v in value]
    return value


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


@dataclass
class PreparedTask:
    project: str
    id: str
    props: dict[str, Any]

    def row(self) -> dict[str, Any]:
        return {"project": self.project, "id": self.id, "props": self.props}


def prepare_task(record: TaskRecord) -> PreparedTask:
    details: dict[str, set[str]] = {}
    cut: dict[str, int] = {}
    goal = _clean_within("goal", record.goal, details, cut) or ""
    constraints = [c for c in (_clean(c, details) for c in record.constraints) if c]
    task_id = record.id or "task-" + _digest(record.project, goal, record.started_at)[:16]
    props = {
        "goal": goal,
        "constraints": constraints,
        "status": record.status.value,
        "outcome": record.outcome.value,
        "started_at": _utc(record.started_at),
        "ended_at": _utc(record.ended_at),
        "tags": clean_tags(record.tags),
        "agent": _clean(record.agent, details),
        "run": redact(record.run).text if record.run else None,
        "instance": redact(record.instance).text if record.instance else None,
        "claimed_outcome": record.claimed_outcome.value if record.claimed_outcome else None,
    }
    if cut:
        props["cut"] = json.dumps(cut)
    return PreparedTask(record.project, task_id, props)


@dataclass
class PreparedEpisode:
    """An episode ready to embed and write, with what was extracted from it."""

    project: str
    id: str
    task_id: str | None
    props: dict[str, Any]
    text_for_embedding: str
    content_hash: str
    review_status: str
    created_at: datetime | None
    title_text: str | None = None
    errors: list[ErrorSignature] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    environment: EnvironmentFingerprint | None = None
    tools: list[ToolUse] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    record: EpisodeRecord | None = None
    cut: dict[str, int] = field(default_factory=dict)  # field -> its length before the cut
    # The originals behind <HOST>, <IP>, <EMAIL>, <HOME> … as JSON {kind: [values]}: the
    # abstraction is the point, so they are written only when asked (keep_details).
    details: str | None = None

    def notes(self) -> list[str]:
        """What the caller should know about how the episode was stored."""
        return [
            f"{name}: {length:,} characters, over the {MAX_TEXT_CHARS[name]:,} stored; "
            "its first and last lines are kept"
            for name, length in sorted(self.cut.items())
        ]

    def row(
        self,
        embedding: list[float] | None,
        title_embedding: list[float] | None = None,
        *,
        keep_details: bool = False,
    ) -> dict[str, Any]:
        return {
            "project": self.project,
            "id": self.id,
            "task_id": self.task_id,
            "review_status": self.review_status,
            "created_at": self.created_at,
            "props": self.props,
            "embedding": embedding,
            "title_embedding": title_embedding,
            "details": self.details if keep_details else None,
        }


def embed_text(props: dict[str, Any], errors: list[ErrorSignature]) -> str:
    """What the vector of an episode stands for: title, summary, action, error, observation head."""
    parts = [props.get("title"), props.get("summary")]
    if props.get("action_command"):
        parts.append(str(props["action_command"])[:300])
    parts.extend(f"{e.kind}: {e.template}" for e in errors[:2])
    if props.get("observation"):
        parts.append(str(props["observation"])[:_EMBED_OBSERVATION_CHARS])
    text = "\n".join(p for p in parts if p)
    return text[:_EMBED_CHARS]


def _episode_id(record: EpisodeRecord, props: dict[str, Any]) -> str:
    if record.id:
        return record.id
    basis = (
        record.project,
        record.task_id,
        record.step,
        props["summary"],
        props.get("action_command"),
        props.get("observation"),
        record.created_at,
    )
    return "ep-" + _digest(*basis)[:20]


def clean_tags(tags: Iterable[str]) -> list[str]:
    """Tags once each, sanitized as every other text is: secrets redacted (``token:ghp_…`` ->
    ``token:[REDACTED:github_token]``), then instance details abstracted (``host:10.2.3.4``
    -> ``host:<IP>``, ``owner:alice@example.com`` -> ``owner:<EMAIL>``).

    Questions' tags go through the same function, so a tag still matches itself.
    """
    return list(dict.fromkeys(sanitize(tag).text for tag in tags))


def clean_tool(name: str) -> str:
    """A declared tool's name as stored (and as a question's tool is matched against it)."""
    return redact(name.strip().lower()).text


_CRITICAL = ("high", "critical")


def critical_operations(command: str | None, snippets: Iterable[str] = ()) -> list[str]:
    """The safety scan's high and critical rules an episode's command or code trips (rm -rf,
    DROP TABLE, kubectl delete …): such a memory starts pending review."""
    found: set[str] = set()
    for code, language in [(command, "bash"), *((s, None) for s in snippets)]:
        if code:
            shell = language or ("diff" if code.lstrip().startswith("diff --git") else "bash")
            found |= {f.rule for f in scan(code, shell) if f.severity in _CRITICAL}
    return sorted(found)


def prepare_episode(record: EpisodeRecord, model_name: str = "") -> PreparedEpisode:
    """Sanitize, extract errors / environment / tools, and compute the content hash."""
    details: dict[str, set[str]] = {}
    cut: dict[str, int] = {}
    action = record.action

    def clean(name: str, text: str | None) -> str | None:
        return _clean_within(name, text, details, cut)

    props: dict[str, Any] = {
        "task_id": record.task_id,
        "step": record.step,
        "kind": redact(record.kind).text if record.kind else "episode",
        "title": clean("title", record.title),
        "summary": clean("summary", record.summary),
        "reasoning": clean("reasoning", record.reasoning),
        "action_type": redact(action.type).text if action else None,
        "action_command": clean("action_command", action.command) if action else None,
        "action_parameters": json.dumps(sanitize_value(action.parameters, details))
        if action and action.parameters
        else None,
        "observation": clean("observation", record.observation),
        "error_text": clean("error_text", record.error),
        "facts": json.dumps(sanitize_value(record.facts, details)) if record.facts else None,
        "outcome": record.outcome.value,
        "tags": clean_tags(record.tags),
        "source": record.source.value,
        # The prior: outcome reports move the stored `confidence` away from it.
        "prior_confidence": record.confidence
        if record.confidence is not None
        else DEFAULT_CONFIDENCE[record.source],
        "prior_strength": CONFIDENCE.prior(record.source.value).strength,
        # Its time is not its own: none was given (dated at ingest), or an adapter estimated
        # it from the run (facts.time_estimated says from what).
        "time_estimated": record.created_at is None or bool(record.facts.get("time_estimated")),
    }
    error_text = "\n".join(t for t in (props["error_text"], props["observation"]) if t)
    errors = extract_errors(error_text) if error_text else []
    environment = extract_environment(
        [t for t in (props["observation"], props["action_command"]) if t], record.environment
    )
    tools = tools_of_action(
        props["action_type"],
        props["action_command"],
        json.loads(props["action_parameters"]) if props["action_parameters"] else None,
    )
    tools += [ToolUse(name=clean_tool(t), kind="declared") for t in record.tools if t.strip()]
    tools = [t for t in tools if len(t.name) <= MAX_NAME_CHARS]  # a 40k "program" is no tool
    searchable = " ".join(
        str(props[k]) for k in ("title", "summary", "error_text", "action_command") if props[k]
    )
    props["keywords"] = identifier_keywords(searchable + " " + (props["observation"] or "")[:4000])
    props["scope"] = project_scope(record.project)
    patches = [s.code for s in record.snippets]
    weights = symbol_weights(
        [props["title"], props["summary"], props["action_command"]],
        errors,
        [redact(p).text for p in patches],
        [props["error_text"]],
    )
    symbols = list(weights)
    props["symbols"] = symbols
    # Parallel to `symbols`: how much each says about this memory (ingest/prepare/symbols.py).
    props["symbol_weights"] = [round(weights[s], 4) for s in symbols]
    props["details"] = (
        json.dumps({k: sorted(v) for k, v in sorted(details.items())}) if details else None
    )
    if cut:  # only then, so the content hash of everything else stays as it was
        props["cut"] = json.dumps(cut, sort_keys=True)
    if record.cites:  # likewise: the memories it relied on (cypher/write.cypher count_cited)
        props["cites"] = list(dict.fromkeys(record.cites))
    critical = critical_operations(props["action_command"], (s.code for s in record.snippets))
    if critical:  # likewise: only risky episodes carry it
        props["review_reason"] = "critical operation: " + ", ".join(critical)
    episode_id = _episode_id(record, props)
    text = embed_text(props, errors)
    created_at = _utc(record.created_at)
    content_hash = _digest(props, created_at, model_name, PIPELINE_VERSION)
    props["content_hash"] = content_hash
    # The originals behind the placeholders count in the content hash (as they always did)
    # but are never a stored property of their own: the ingestor keeps them only when the
    # operator opted in (PreparedEpisode.row).
    kept_details = props.pop("details")
    return PreparedEpisode(
        project=record.project,
        id=episode_id,
        task_id=record.task_id,
        props=props,
        text_for_embedding=text,
        content_hash=content_hash,
        review_status="pending" if critical else "unreviewed",
        created_at=created_at,
        title_text=props["title"] or None,
        errors=errors,
        symbols=symbols,
        environment=environment,
        tools=_dedupe_tools(tools),
        tags=props["tags"],
        record=record,
        cut=cut,
        details=kept_details,
    )


def _dedupe_tools(tools: list[ToolUse]) -> list[ToolUse]:
    seen: dict[str, ToolUse] = {}
    for tool in tools:
        seen.setdefault(tool.name, tool)
    return list(seen.values())
