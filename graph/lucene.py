"""Full-text search terms: free text as safe Lucene terms, kept to the projects' scope tokens."""

from __future__ import annotations

import hashlib
import re

__all__ = ["lucene_query", "lucene_terms", "project_scope", "scoped"]

_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_WORD = re.compile(r"[\w.$#@-]+", re.UNICODE)


def project_scope(project: str) -> str:
    """One Lucene token standing for the project, so full-text search filters inside the index."""
    return "p" + hashlib.sha256(project.encode()).hexdigest()[:24]


def lucene_terms(text: str, max_terms: int = 64) -> str:
    """Free text as safe Lucene terms: escaped, OR-ed, each once; no user syntax gets through."""
    terms: dict[str, None] = {}
    # Lower case: the analysers fold case anyway, and AND / OR / NOT would be operators.
    # Each term once: a repeated word would spend the budget and count twice.
    for word in _WORD.findall(text.lower()):
        word = word.strip(".-")
        if len(word) >= 2:
            terms.setdefault(_LUCENE_SPECIAL.sub(r"\\\1", word))
        if len(terms) >= max_terms:
            break
    return " OR ".join(terms)


def lucene_query(text: str, scopes: tuple[str, ...], max_terms: int = 64) -> str | None:
    """``lucene_terms`` restricted to the projects' scope tokens, inside the index."""
    terms = lucene_terms(text, max_terms)
    if not terms:
        return None
    return scoped(terms, scopes)


def scoped(terms: str, scopes: tuple[str, ...]) -> str:
    """Terms (``lucene_terms``) that must match within one of the projects' scope tokens.
    Every episode of a project carries its token: where the projects asked hold most of the
    index, Lucene visits each of their episodes to check it (recall asks the terms alone
    first: cypher/recall.cypher channel_fulltext)."""
    return f"+scope:({' OR '.join(scopes)}) +({terms})"
