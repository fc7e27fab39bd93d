"""Which template rules earn their place, and how signatures fare on systems never seen.

A hand-written rule counts only if taking it away lowers grouping accuracy on at least
two systems besides those it was written from (its provenance), and helps on balance
there. A published convention (numbers, paths, addresses: what annotators of many log
systems agree are values) stays unless it hurts on two systems and on balance: the same
bar, the other way round. ``RuleBench.select`` keeps such rules: it drops the weakest
failing rule and asks again until every rule left passes, because rules lean on each
other (two rules that catch the same values each look useless while the other is there).

Leave one system out: for each system, the rules are chosen without it — a rule
written from that system is not a candidate, and the others are tested on the
remaining systems only — then the system is scored with them. That figure says how
signatures fare on a system nobody looked at; the plain figure cannot.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from metisgraph.api.eval.signatures import SignatureLine, grouping_accuracy
from metisgraph.ingest.errors import ALL_RULES, RULES, line_signature, rule_applies

__all__ = ["MIN_HELPED", "Fold", "RuleBench", "RuleEffect", "RuleReport"]

MIN_HELPED = 2  # systems, besides a rule's own, on which it must help


@dataclass(frozen=True)
class RuleEffect:
    """What one rule does: accuracy with it minus without it, per system."""

    rule: str
    provenance: tuple[str, ...]
    deltas: dict[str, float]
    counted: tuple[str, ...]  # the systems that judge it: neither its own nor held out

    @property
    def helps(self) -> tuple[str, ...]:
        return tuple(s for s in self.counted if self.deltas[s] > 0)

    @property
    def hurts(self) -> tuple[str, ...]:
        return tuple(s for s in self.counted if self.deltas[s] < 0)

    @property
    def gain(self) -> float:
        return sum(self.deltas[s] for s in self.counted)

    @property
    def passes(self) -> bool:
        """A hand-written rule must help on two systems besides its own, and on balance; a
        convention goes only when it hurts on two systems, and on balance."""
        if self.provenance:
            return len(self.helps) >= MIN_HELPED and self.gain > 0
        return len(self.hurts) < MIN_HELPED or self.gain >= 0

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "summary": RULES[self.rule].summary,
            "provenance": list(self.provenance),
            "source": RULES[self.rule].source,
            "deltas": {s: round(d, 4) for s, d in self.deltas.items()},
            "helps": list(self.helps),
            "hurts": list(self.hurts),
            "passes": self.passes,
        }


@dataclass(frozen=True)
class Fold:
    """One system scored with the rules chosen without it."""

    system: str
    rules: frozenset[str]
    accuracy: float


@dataclass(frozen=True)
class RuleReport:
    """The rules chosen on every system, what each does beside them, and each system
    scored with the rules chosen without it."""

    selected: frozenset[str]
    effects: list[RuleEffect]
    folds: list[Fold]

    @property
    def mean_leave_one_out(self) -> float:
        return sum(f.accuracy for f in self.folds) / len(self.folds) if self.folds else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "mean_leave_one_out": round(self.mean_leave_one_out, 4),
            "leave_one_out": {f.system: round(f.accuracy, 4) for f in self.folds},
            "leave_one_out_without": {f.system: sorted(ALL_RULES - f.rules) for f in self.folds},
            "selected_rules": sorted(self.selected),
            "rules": [e.as_json() | {"kept": e.rule in self.selected} for e in self.effects],
        }


class RuleBench:
    """Grouping accuracy of every system under any set of rules, computed incrementally.

    A rule that does not apply to a line cannot change its template, so a line's signature
    is cached under the rules that apply to it: sets of rules that differ elsewhere share it.
    """

    def __init__(self, lines: Iterable[SignatureLine]) -> None:
        by_system: dict[str, list[SignatureLine]] = defaultdict(list)
        for line in lines:
            by_system[line.system].append(line)
        self.systems = tuple(sorted(by_system))
        self._contents = {s: [r.content for r in by_system[s]] for s in self.systems}
        self._truth = {s: [r.group for r in by_system[s]] for s in self.systems}
        distinct = {c for contents in self._contents.values() for c in contents}
        self._applicable = {
            c: frozenset(r for r in ALL_RULES if rule_applies(r, c)) for c in distinct
        }
        self._signatures: dict[tuple[str, frozenset[str]], str] = {}
        self._memo: dict[frozenset[str], dict[str, float]] = {}

    def _signature(self, content: str, rules: frozenset[str]) -> str:
        key = (content, rules & self._applicable[content])
        if key not in self._signatures:
            self._signatures[key] = line_signature(content, key[1])
        return self._signatures[key]

    def signatures(self, system: str, rules: frozenset[str]) -> list[str]:
        """The signature of each line of ``system`` under ``rules``, in file order."""
        return [self._signature(c, rules) for c in self._contents[system]]

    def truth(self, system: str) -> list[str]:
        """The true group of each line of ``system``, in file order."""
        return self._truth[system]

    def accuracy(self, rules: frozenset[str]) -> dict[str, float]:
        """Grouping accuracy per system when lines are signed with ``rules``."""
        if rules not in self._memo:
            self._memo[rules] = {
                s: grouping_accuracy(self.signatures(s, rules), self._truth[s])
                for s in self.systems
            }
        return self._memo[rules]

    def effects(self, rules: frozenset[str], held_out: str | None = None) -> list[RuleEffect]:
        """Each rule of ``rules`` taken away in turn; judged without ``held_out``."""
        with_all = self.accuracy(rules)
        found = []
        for rule in sorted(rules):
            without = self.accuracy(rules - {rule})
            provenance = RULES[rule].provenance
            counted = tuple(s for s in self.systems if s != held_out and s not in provenance)
            deltas = {s: with_all[s] - without[s] for s in self.systems}
            found.append(RuleEffect(rule, provenance, deltas, counted))
        return found

    def select(
        self, candidates: frozenset[str] = ALL_RULES, held_out: str | None = None
    ) -> tuple[frozenset[str], list[RuleEffect]]:
        """The rules that pass, chosen without ``held_out``, and the last ablation."""
        kept = frozenset(r for r in candidates if held_out not in RULES[r].provenance)
        while True:
            effects = self.effects(kept, held_out)
            failing = [e for e in effects if not e.passes]
            if not failing:
                return kept, effects
            worst = min(failing, key=lambda e: (e.gain, len(e.helps), e.rule))
            kept -= {worst.rule}

    def leave_one_out(self, candidates: frozenset[str] = ALL_RULES) -> list[Fold]:
        """Each system scored with rules chosen on the others."""
        folds = []
        for system in self.systems:
            rules, _ = self.select(candidates, held_out=system)
            folds.append(Fold(system, rules, self.accuracy(rules)[system]))
        return folds

    def contributions(self, rules: frozenset[str]) -> list[RuleEffect]:
        """What every rule adds beside ``rules``: taken away if in it, added back if not."""
        with_set = self.accuracy(rules)
        found = []
        for rule in sorted(ALL_RULES):
            if rule in rules:
                other = self.accuracy(rules - {rule})
                deltas = {s: with_set[s] - other[s] for s in self.systems}
            else:
                other = self.accuracy(rules | {rule})
                deltas = {s: other[s] - with_set[s] for s in self.systems}
            provenance = RULES[rule].provenance
            counted = tuple(s for s in self.systems if s not in provenance)
            found.append(RuleEffect(rule, provenance, deltas, counted))
        return found

    def report(self, candidates: frozenset[str] = ALL_RULES) -> RuleReport:
        """Selection on every system, its ablation, and leave one system out."""
        selected, _ = self.select(candidates)
        return RuleReport(selected, self.contributions(selected), self.leave_one_out(candidates))
