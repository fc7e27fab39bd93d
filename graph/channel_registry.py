"""Recall's candidate channels, each declared once: the one table channels, fusion, recall, the
index schema and docs/architecture.md read.

A channel is a named query (``channel_<name>`` in cypher/recall.cypher) that returns
``[project, id, score]`` candidates, and one entry here: its kind, the index it searches,
the question's vector it needs, its weight in the default preset, whether a candidate only
it found may be returned, and how its parameters are made from the question. Adding a
channel is one entry and one query.

Kinds: ``vector`` (the episodes' vectors, each kind of them an ``of`` in the one index
``episode_vectors``, searched once for every vector channel: ranked by cosine, z-scored in
fusion), ``fulltext`` (a Lucene index: ranked, z-scored), ``graph`` (sparse evidence reached
through the graph — shared errors, symbols, tags, tools, environments, patterns: each adds
weight x score / best score).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from metisgraph.graph.recall_request import QuestionVectors, RecallRequest
from metisgraph.graph.recall_settings import PRESETS, RecallSettings

__all__ = ["CHANNELS", "Channel", "ChannelKind", "channel", "weight"]

ChannelKind = Literal["vector", "fulltext", "graph"]
QuestionVector = Literal["text", "title", "error"]
Params = dict[str, Any]
# A channel's own parameters for a question (its query reads them as $<name>_<key>), or
# None when the question gives it nothing to ask. ``vectors`` is None for a channel that
# needs none: those are asked while the question is being embedded.
Asks = Callable[[RecallRequest, QuestionVectors | None], Params | None]


@dataclass(frozen=True)
class Channel:
    name: str
    kind: ChannelKind
    index: str | None  # the index its query searches (None: the graph by name)
    weight: float  # in the default preset ("balanced"); 0 turns it off
    alone: bool  # a candidate only this channel found may be returned
    asks: Asks  # its parameters for a question
    about: str  # what it finds (docs/architecture.md shows it)
    vector: QuestionVector | None = None  # the question's vector it searches with
    # The kind of EpisodeVector it searches (`of`): channels over episode_vectors are asked
    # in one search together (search_episode_vectors), each keeping the vectors of its kind.
    of: str | None = None
    # It reaches episodes through a node they share (an error, a symbol, a tag, a tool, an
    # environment): it reads at most the settings' `fanout` episodes a node ($<name>_fanout).
    fans_out: bool = False
    # Its parameters when the question names nothing for it: asked anyway (its query then
    # matches nothing), so that a question sends the same query text whatever it names.
    # Each combination of channels was a query of its own for Neo4j to plan (~0.2-0.5 s on
    # its first use, the warm-up asking them all); None: left out when it has nothing.
    nothing: Params | None = None

    @property
    def query(self) -> str:
        """Its named query in cypher/recall.cypher."""
        return f"channel_{self.name}"


def _vector(of: QuestionVector) -> Asks:
    def asks(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
        if vectors is None:
            return None
        chosen = {"text": vectors.text, "title": vectors.title, "error": vectors.error}[of]
        return {"vector": chosen or vectors.text}

    return asks


def _fulltext(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
    return {"text": req.lexical or req.text}


def _errors(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
    if vectors is None or not (req.error_keys or vectors.error):
        return None
    return {
        "keys": list(req.error_keys),
        "vector": vectors.error or vectors.text,
        "min_similarity": req.settings.error_similarity if vectors.error else 2.0,
    }


def _symbols(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
    weights = req.symbol_weights or (1.0,) * len(req.symbols)
    pairs = zip(req.symbols, weights, strict=True)
    return {"symbols": [{"name": n, "weight": w} for n, w in pairs]} if req.symbols else None


def _tags(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
    return {"tags": list(req.tags), "words": list(req.words)} if req.tags or req.words else None


def _tools(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
    return {"tools": list(req.tools)} if req.tools else None


def _environment(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
    return req.environment.params() if req.environment else None


def _patterns(req: RecallRequest, vectors: QuestionVectors | None) -> Params | None:
    if vectors is None or not req.filters.wants("pattern"):
        return None
    return {"vector": vectors.text, "min_support": req.settings.pattern_min_support}


CHANNELS: tuple[Channel, ...] = (
    Channel(
        name="vector",
        kind="vector",
        index="episode_vectors",
        of="text",
        vector="text",
        weight=1.0,
        alone=True,
        asks=_vector("text"),
        about="the episode's own text, by meaning",
    ),
    Channel(
        name="title",
        kind="vector",
        index="episode_vectors",
        of="title",
        vector="title",
        weight=0.5,
        alone=True,
        asks=_vector("title"),
        about="its title alone, against the question's first line",
    ),
    Channel(
        name="context",
        kind="vector",
        index="episode_vectors",
        of="context",
        vector="text",
        weight=1.0,
        alone=True,
        asks=_vector("text"),
        about="the episode with its neighbouring steps, by meaning",
    ),
    Channel(
        name="fulltext",
        kind="fulltext",
        index="episode_text",
        weight=1.0,
        alone=True,
        asks=_fulltext,
        about="Lucene over the episode's text and code identifiers",
    ),
    Channel(
        name="context_text",
        kind="fulltext",
        index="episode_context",
        weight=2.0,
        alone=True,
        asks=_fulltext,
        about="Lucene over the episode with its neighbouring steps",
    ),
    Channel(
        name="errors",
        kind="graph",
        index="error_embedding",
        vector="error",
        weight=1.0,
        alone=True,
        asks=_errors,
        about="episodes that hit or resolved the same or a similar error signature",
        fans_out=True,
    ),
    Channel(
        name="symbols",
        kind="graph",
        index=None,
        weight=5.0,
        alone=True,
        asks=_symbols,
        about="the same classes, modules, files (weighted by where they occur)",
        fans_out=True,
        nothing={"symbols": []},
    ),
    Channel(
        name="tags",
        kind="graph",
        index=None,
        weight=0.3,
        alone=False,
        asks=_tags,
        about="tags asked for, or named in the question",
        fans_out=True,
        nothing={"tags": [], "words": []},
    ),
    Channel(
        name="tools",
        kind="graph",
        index=None,
        weight=0.3,
        alone=False,
        asks=_tools,
        about="tools asked for",
        fans_out=True,
        nothing={"tools": []},
    ),
    Channel(
        name="environment",
        kind="graph",
        index=None,
        weight=0.2,
        alone=False,
        asks=_environment,
        about="the caller's OS, architecture, runtime and package versions",
        fans_out=True,
    ),
    Channel(
        name="patterns",
        kind="graph",
        index="pattern_embedding",
        vector="text",
        weight=0.5,
        alone=False,
        asks=_patterns,
        about="members of patterns close to the question (docs/consolidation.md)",
    ),
)

_BY_NAME = {c.name: c for c in CHANNELS}


def channel(name: str) -> Channel:
    """The registered channel of this name (KeyError names the known ones)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no recall channel {name!r}; known: {', '.join(_BY_NAME)}") from None


def weight(settings: RecallSettings, name: str) -> float:
    """The channel's weight under these settings: the preset's own, else the channel's."""
    given = settings.weights.given(name)
    return channel(name).weight if given is None else given


def _check_presets() -> None:
    for preset_name, settings in PRESETS.items():
        unknown = set(settings.weights.names()) - _BY_NAME.keys()
        if unknown:
            raise ValueError(f"preset {preset_name!r} weighs unknown channels {sorted(unknown)}")


_check_presets()
