"""Which family settings hold on systems never seen: each system scored leave-one-out.

Error families (``ingest.errors.families``) join signatures by what the store has seen, under
three settings: how many distinct values make a slot, the share of constant words a slot
needs around it, and whether a token that another covers as a pattern joins it. ``GRID``
runs from cautious to bold; ``FamilyBench.select`` takes the settings with the best mean
accuracy on the systems it may look at, the first of the grid on a tie.

Leave one system out: for each system, the template rules are chosen on the other systems
(``RuleBench``), then the family settings on the same others; the system is scored with
both. The plain figure scores every system with what the product ships.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from metisgraph.api.eval.rules import RuleBench
from metisgraph.api.eval.signatures import family_labels, grouping_accuracy
from metisgraph.ingest.errors import (
    ALL_RULES,
    DEFAULT_RULES,
    FAMILY_SETTINGS,
    FamilyIndex,
    FamilySettings,
)

__all__ = ["GRID", "FamilyBench", "FamilyFold", "FamilyReport"]


def _grid() -> Iterator[FamilySettings]:
    for instances in (False, True):
        yield FamilySettings(None, FAMILY_SETTINGS.similarity, instances)
        for values in (8, 6, 5, 4, 3, 2):
            for similarity in (0.8, 0.7, 0.6, 0.5, 0.4, 0.3):
                yield FamilySettings(values, similarity, instances)


GRID: tuple[FamilySettings, ...] = tuple(_grid())


@dataclass(frozen=True)
class FamilyFold:
    """One system scored with the rules and family settings chosen without it."""

    system: str
    rules: frozenset[str]
    settings: FamilySettings
    accuracy: float


@dataclass(frozen=True)
class FamilyReport:
    """Families as shipped per system, the settings every system chooses, and each system
    scored with what the others choose."""

    accuracy: dict[str, float]
    selected: FamilySettings
    folds: list[FamilyFold]

    @property
    def mean_leave_one_out(self) -> float:
        return sum(f.accuracy for f in self.folds) / len(self.folds) if self.folds else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "family_settings": FAMILY_SETTINGS.name,
            "selected_family_settings": self.selected.name,
            "mean_leave_one_out": round(self.mean_leave_one_out, 4),
            "leave_one_out": {f.system: round(f.accuracy, 4) for f in self.folds},
            "leave_one_out_settings": {f.system: f.settings.name for f in self.folds},
            "leave_one_out_without": {f.system: sorted(ALL_RULES - f.rules) for f in self.folds},
        }


class FamilyBench:
    """Grouping accuracy by family per system under any rules and settings, memoised."""

    def __init__(self, rules: RuleBench) -> None:
        self.rules = rules
        self.systems = rules.systems
        self._memo: dict[tuple[frozenset[str], FamilySettings], dict[str, float]] = {}

    def accuracy(self, rules: frozenset[str], settings: FamilySettings) -> dict[str, float]:
        """Per system: lines signed with ``rules``, grouped by family under ``settings``."""
        if (rules, settings) not in self._memo:
            self._memo[rules, settings] = {
                s: grouping_accuracy(
                    family_labels(self.rules.signatures(s, rules), FamilyIndex(settings)).labels,
                    self.rules.truth(s),
                )
                for s in self.systems
            }
        return self._memo[rules, settings]

    def select(self, rules: frozenset[str], held_out: str | None = None) -> FamilySettings:
        """The settings of ``GRID`` with the best mean accuracy without ``held_out``."""
        counted = [s for s in self.systems if s != held_out]

        def mean(settings: FamilySettings) -> float:
            found = self.accuracy(rules, settings)
            return sum(found[s] for s in counted) / len(counted)

        return max(GRID, key=mean)  # max keeps the first of equals: the more cautious

    def leave_one_out(self) -> list[FamilyFold]:
        """Each system scored with rules and settings chosen on the others."""
        folds = []
        for system in self.systems:
            rules, _ = self.rules.select(held_out=system)
            settings = self.select(rules, held_out=system)
            accuracy = self.accuracy(rules, settings)[system]
            folds.append(FamilyFold(system, rules, settings, accuracy))
        return folds

    def report(self) -> FamilyReport:
        return FamilyReport(
            self.accuracy(DEFAULT_RULES, FAMILY_SETTINGS),
            self.select(DEFAULT_RULES),
            self.leave_one_out(),
        )
