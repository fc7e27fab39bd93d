"""How much a recalled memory can be trusted: its confidence, its review, how idle it is.

Each factor is 1 when neutral, below 1 lowers the hit, above raises it; recall adds
beta * ln(their product) to the relevance. `evidence` is what the factors were made from,
for `why`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from metisgraph.graph.confidence import posterior
from metisgraph.graph.decay import decay_factor, idle_days
from metisgraph.graph.recall_settings import TrustSettings

__all__ = ["evidence", "trust_adjustment", "trust_factors"]


def trust_factors(
    memory: Mapping[str, Any], settings: TrustSettings, clock: Any = None
) -> dict[str, float]:
    """confidence (the cautious chance that reusing it works, against a coin flip: 1 at
    0.5, 2 at certainty), review and decay (idle time up to the project's `clock`).

    The confidence factor is a probability, not a nudge: ln of it is on the scale that
    separates two memories equally relevant to the question, so three failures of the top
    hit put a confirmed alternative above it, and one failure of a well-confirmed memory
    does not."""
    belief = posterior(memory, settings.confidence)
    idle = idle_days(memory.get("active_at"), clock)
    return {
        "confidence": 2.0 * belief.cautious(settings.confidence.caution),
        "review": settings.review.get(str(memory.get("review_status")), 1.0),
        "decay": decay_factor(idle, settings.decay),
    }


def evidence(
    memory: Mapping[str, Any], settings: TrustSettings, clock: Any = None
) -> dict[str, Any]:
    """The numbers behind the factors: the prior, the reports, the posterior, idle time."""
    belief = posterior(memory, settings.confidence)
    prior = settings.confidence.prior(memory.get("source"))
    return {
        "source": memory.get("source"),
        "prior": float(memory.get("prior_confidence") or prior.mean),
        "prior_strength": float(memory.get("prior_strength") or prior.strength),
        "successes": int(memory.get("successes") or 0),
        "failures": int(memory.get("failures") or 0),
        "weighted_successes": float(memory.get("evidence_for") or 0.0),
        "weighted_failures": float(memory.get("evidence_against") or 0.0),
        "independent_confirmations": int(memory.get("contexts") or 0),
        "posterior_mean": belief.mean,
        "posterior_sd": belief.sd,
        "idle_days": idle_days(memory.get("active_at"), clock),
    }


def trust_adjustment(factors: Mapping[str, float], settings: TrustSettings) -> float:
    """beta * ln(product of the factors): added to the fused relevance."""
    product = math.prod(factors.values())
    return settings.beta * math.log(max(product, 1e-6))
