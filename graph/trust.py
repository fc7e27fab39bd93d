"""How much a memory can be trusted: who vouches for it, how reuse went, age, review."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from metisgraph.graph.recall_settings import TrustSettings

__all__ = ["trust_adjustment", "trust_factors"]


def _as_datetime(value: Any) -> datetime | None:
    if value is None:
        return None
    native = value.to_native() if hasattr(value, "to_native") else value
    if not isinstance(native, datetime):
        return None
    return native if native.tzinfo else native.replace(tzinfo=UTC)


def trust_factors(
    episode: Mapping[str, Any], settings: TrustSettings, now: datetime | None = None
) -> dict[str, float]:
    """Each factor is 1.0 when neutral; below 1 lowers trust, above 1 raises it."""
    now = now or datetime.now(UTC)
    uses = int(episode.get("uses") or 0)
    successes = int(episode.get("successes") or 0)
    prior = settings.reuse_prior
    # Beta(1, 1)-smoothed success rate of reuse, centred so that no evidence is neutral.
    rate = (successes + prior / 2) / (uses + prior) if uses else 0.5
    created = _as_datetime(episode.get("created_at"))
    age_days = max(0.0, (now - created).total_seconds() / 86400) if created else 0.0
    decay = 0.5 ** (age_days / settings.recency_half_life_days)
    confidence = episode.get("confidence")
    return {
        "source": settings.source.get(str(episode.get("source")), 0.8),
        "review": settings.review.get(str(episode.get("review_status")), 1.0),
        "reuse": 0.6 + 0.8 * rate,
        "recency": settings.recency_floor + (1 - settings.recency_floor) * decay,
        "confidence": 0.75 + 0.25 * float(confidence if confidence is not None else 0.5),
    }


def trust_adjustment(factors: Mapping[str, float], settings: TrustSettings) -> float:
    """beta * ln(product of the factors): added to the fused relevance."""
    product = math.prod(factors.values())
    return settings.beta * math.log(max(product, 1e-6))
