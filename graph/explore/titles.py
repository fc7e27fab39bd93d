"""How a node reads to a person (its title) and which of its properties are shown."""

from __future__ import annotations

from typing import Any

from metisgraph.graph.rows import plain_value

__all__ = ["HIDDEN_PROPERTIES", "VECTOR_PROPERTIES", "shown_properties", "title_of"]

VECTOR_PROPERTIES = frozenset({"embedding", "title_embedding", "context_embedding"})
# Internal bookkeeping: index tokens, hashes and search helpers, never data for a reader.
HIDDEN_PROPERTIES = VECTOR_PROPERTIES | {
    "scope",
    "keywords",
    "content_hash",
    "symbol_weights",
    "frames_text",
    "context_text",
    "recallable",
    "details",  # the originals behind placeholders: node() adds them for an admin only
    "outcome_lock",
}
_TITLE_CHARS = 160


def _short(text: Any) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "…"


def title_of(kind: str, props: dict[str, Any]) -> str:
    """One line naming the node: an episode's title or summary, a task's goal, an error's kind
    and template, a snippet's name, an environment's system and runtime, else its name."""
    if kind == "Episode":
        return _short(props.get("title") or props.get("summary") or props.get("id") or "")
    if kind == "Task":
        return _short(props.get("goal") or props.get("id") or "")
    if kind == "Error":
        return _short(f"{props.get('kind') or 'error'}: {props.get('template') or ''}".strip())
    if kind == "Snippet":
        return _short(props.get("name") or props.get("kind") or props.get("id") or "")
    if kind == "Environment":
        parts = [props.get("os"), props.get("os_version"), props.get("runtime")]
        parts.append(props.get("runtime_version"))
        return _short(" ".join(str(p) for p in parts if p) or props.get("key") or "")
    if kind == "Pattern":
        return _short(props.get("summary") or props.get("id") or "")
    return _short(props.get("name") or props.get("path") or props.get("key") or "")


def shown_properties(props: dict[str, Any]) -> dict[str, Any]:
    """The node's properties without vectors and internal bookkeeping; times as ISO text."""
    return {
        k: plain_value(v)[0]
        for k, v in props.items()
        if k not in HIDDEN_PROPERTIES and v is not None
    }
