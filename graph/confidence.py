"""How far a memory can be trusted, from who vouched for it and how its reuse went.

A memory's confidence is a Beta posterior over "reusing it works": the prior comes from
its source (a mean and a strength in pseudo-reports), the evidence from outcome reports.
Reports from the same context (the same project, task and agent) are not independent: the
n-th one of a kind counts ``repeat_weight ** (n - 1)``, so three confirmations from three
tasks weigh 3 and three from one task 1.75.

The stored ``confidence`` is the posterior mean (what a reader expects, and what the
``minConfidence`` filter reads). Recall ranks by a cautious estimate, the mean less
``caution`` standard deviations: a memory is trusted for what it has shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CONFIDENCE", "ConfidenceSettings", "Posterior", "Prior", "posterior"]


@dataclass(frozen=True)
class Prior:
    mean: float  # the chance that reusing such a memory works, before any report
    strength: float  # how many reports it is worth


@dataclass(frozen=True)
class ConfidenceSettings:
    """The prior of each source and how much repeated reports count."""

    priors: Mapping[str, Prior] = field(
        default_factory=lambda: {
            # A person read it and approved it: worth eight consistent reports, so a
            # single failure barely moves it (0.90 -> 0.80).
            "reviewer": Prior(0.9, 8.0),
            # The agent ran it and observed the outcome: likely to work again, but it is one
            # environment's evidence; four reports' worth, so three failures from three
            # tasks bring it to a coin flip (0.80 -> 0.46).
            "executed": Prior(0.8, 4.0),
            # Stated by a user, not observed: two reports settle it either way.
            "user": Prior(0.65, 2.0),
            # Inferred (by an agent, or consolidated from other memories): a guess, which
            # the first report outweighs.
            "inferred": Prior(0.5, 1.0),
        }
    )
    # A source we do not know is treated as the weakest one we do.
    unknown_source: str = "inferred"
    # The n-th report of the same outcome from the same context (project, task, agent)
    # counts repeat_weight ** (n - 1): a repeat mostly re-observes the same environment and
    # problem, so it adds half of what the one before it added, and any number of repeats
    # from one context never adds up to two independent reports.
    repeat_weight: float = 0.5
    # Recall ranks by the posterior mean less this many standard deviations (about its
    # 16th percentile at 1): five successes and a failure outrank an untried memory of the
    # same source, and a lucky single success does not outrank a steady record.
    caution: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.repeat_weight < 1.0:
            raise ValueError(f"repeat_weight must be in (0, 1), got {self.repeat_weight}")
        for source, prior in self.priors.items():
            if not (0.0 < prior.mean < 1.0 and prior.strength > 0.0):
                raise ValueError(f"prior of {source!r}: mean in (0, 1), strength > 0")

    def prior(self, source: str | None) -> Prior:
        return self.priors.get(str(source), self.priors[self.unknown_source])

    def weight(self, reports: int) -> float:
        """What ``reports`` reports of one outcome from one context add up to."""
        return (1.0 - self.repeat_weight**reports) / (1.0 - self.repeat_weight)


CONFIDENCE = ConfidenceSettings()


@dataclass(frozen=True)
class Posterior:
    alpha: float
    beta: float

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    @property
    def sd(self) -> float:
        total = self.alpha + self.beta
        return math.sqrt(self.alpha * self.beta / (total * total * (total + 1.0)))

    def cautious(self, caution: float) -> float:
        """The mean less ``caution`` standard deviations, kept inside (0.01, 1)."""
        return min(1.0, max(0.01, self.mean - caution * self.sd))


def posterior(memory: Mapping[str, Any], settings: ConfidenceSettings = CONFIDENCE) -> Posterior:
    """A stored memory's posterior: its prior (as stored, else its source's) and evidence."""
    fallback = settings.prior(memory.get("source"))
    mean = memory.get("prior_confidence")
    if mean is None:
        mean = memory.get("confidence")  # stored before priors were kept apart
    strength = memory.get("prior_strength") or fallback.strength
    prior_mean = float(mean) if mean is not None else fallback.mean
    prior_mean = min(0.99, max(0.01, prior_mean))
    return Posterior(
        alpha=prior_mean * strength + float(memory.get("evidence_for") or 0.0),
        beta=(1.0 - prior_mean) * strength + float(memory.get("evidence_against") or 0.0),
    )
