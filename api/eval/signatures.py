"""How well line signatures group log lines: grouping accuracy on a labelled set.

The set is a ``lines.jsonl`` file, one ``{"system", "line_id", "content", "group"}``
object a line. Grouping accuracy (Zhu et al., ICSE 2019) counts a line as right
when the lines that received its signature are exactly the lines of its true group.

Three ways to group are measured side by side:

* ``rules`` — ``line_signature``: stateless, so a line's group never depends on
  other lines (what the product stores as keys);
* ``drain3`` — the Drain online miner over the raw lines, in file order;
* ``drain3+rules`` — Drain over our templates instead of the raw lines;
* ``families`` — the error families above the signatures (``FamilyIndex``): signatures
  that differ only where many values were seen join one family (what lineage groups by).

Each also reports its key drift: the share of lines whose key (template)
changed after the line was first given one.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from drain3 import TemplateMiner
from drain3.template_miner_config import TemplateMinerConfig

from metisgraph.ingest.errors import FamilyIndex, FamilyShape, line_signature, log_template

__all__ = [
    "METHODS",
    "Grouping",
    "GroupingReport",
    "SignatureLine",
    "SignatureSetError",
    "SystemScore",
    "evaluate",
    "evaluate_dir",
    "family_labels",
    "group_lines",
    "grouping_accuracy",
    "line_groups",
    "load_lines",
    "load_set",
    "mine",
]

LINES_FILE = "lines.jsonl"


class SignatureSetError(ValueError):
    """A signature set that cannot be read; the message names the file, line and field."""


@dataclass(frozen=True)
class SignatureLine:
    system: str
    line_id: str
    content: str
    group: str


def _field(row: dict[str, Any], name: str, where: str, kinds: tuple[type, ...] = (str,)) -> Any:
    if name not in row:
        raise SignatureSetError(f"{where}: missing field {name!r}")
    value = row[name]
    if not isinstance(value, kinds) or isinstance(value, bool):
        expected = " or ".join(k.__name__ for k in kinds)
        raise SignatureSetError(f"{where}: field {name!r} must be {expected}, got {value!r:.60}")
    return value


def _parse(text: str, where: str) -> SignatureLine:
    try:
        row = json.loads(text)
    except json.JSONDecodeError as err:
        raise SignatureSetError(f"{where}: not JSON ({err.msg})") from err
    if not isinstance(row, dict):
        raise SignatureSetError(f"{where}: expected an object, got {type(row).__name__}")
    return SignatureLine(
        system=_field(row, "system", where),
        line_id=str(_field(row, "line_id", where, (str, int))),
        content=_field(row, "content", where),
        group=str(_field(row, "group", where, (str, int))),
    )


def load_lines(path: Path) -> list[SignatureLine]:
    """Read ``lines.jsonl``; blank lines are skipped, bad ones raise ``SignatureSetError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SignatureSetError(f"{path}: cannot read ({err.strerror})") from err
    rows = [
        _parse(raw, f"{path}:{number}")
        for number, raw in enumerate(text.splitlines(), start=1)
        if raw.strip()
    ]
    if not rows:
        raise SignatureSetError(f"{path}: no lines")
    return rows


def grouping_accuracy(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> float:
    """Share of lines whose predicted group holds exactly the lines of their true group."""
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predictions for {len(truth)} lines")
    if not truth:
        return 0.0
    by_prediction: dict[Hashable, set[int]] = defaultdict(set)
    by_truth: dict[Hashable, set[int]] = defaultdict(set)
    for i, (p, t) in enumerate(zip(predicted, truth, strict=True)):
        by_prediction[p].add(i)
        by_truth[t].add(i)
    right = sum(
        1
        for i, (p, t) in enumerate(zip(predicted, truth, strict=True))
        if by_prediction[p] == by_truth[t]
    )
    return right / len(truth)


@dataclass(frozen=True)
class Grouping:
    """A group label per line, and the share of lines whose key moved after they got one.

    A key that moves is no use as a database key: the same line would land on
    another node once more lines were seen.
    """

    labels: list[str]
    key_drift: float


def _share_changed(before: Sequence[str], after: Sequence[str]) -> float:
    return sum(a != b for a, b in zip(before, after, strict=True)) / len(before) if before else 0.0


def _rules(contents: Sequence[str]) -> Grouping:
    keys = [line_signature(c) for c in contents]
    # Asked again once every line was read: a key that depends on nothing else cannot move.
    again = [line_signature(c) for c in contents]
    return Grouping(again, _share_changed(keys, again))


def _drain(texts: Sequence[str]) -> Grouping:
    """Drain's cluster per text, mining in the order given (its clusters depend on that order)."""
    config = TemplateMinerConfig()
    config.profiling_enabled = False
    miner = TemplateMiner(config=config)
    mined = [miner.add_log_message(text) for text in texts]
    final = {cluster.cluster_id: cluster.get_template() for cluster in miner.drain.clusters}
    first = [m["template_mined"] for m in mined]
    last = [final[m["cluster_id"]] for m in mined]
    return Grouping([str(m["cluster_id"]) for m in mined], _share_changed(first, last))


def family_labels(signatures: Sequence[str], index: FamilyIndex) -> Grouping:
    """Each signature's family, added to ``index`` in the order given; a line's label is its
    family at the end, its drift whether that differs from the family it first received."""
    first = []
    for signature in signatures:
        index.add(signature, FamilyShape("", (), tuple(signature.split())))
        first.append(index.family(signature))
    last = [index.family(s) for s in signatures]
    return Grouping(last, _share_changed(first, last))


METHODS: dict[str, Callable[[Sequence[str]], Grouping]] = {
    "rules": _rules,
    "families": lambda contents: family_labels(
        [line_signature(c) for c in contents], FamilyIndex()
    ),
    "drain3": _drain,
    "drain3+rules": lambda contents: _drain([log_template(c) for c in contents]),
}


def mine(contents: Sequence[str], method: str = "rules") -> Grouping:
    """Group lines by one of ``METHODS``."""
    if method not in METHODS:
        raise ValueError(f"unknown grouping method {method!r}; choose from {', '.join(METHODS)}")
    return METHODS[method](contents)


def group_lines(contents: Sequence[str], method: str = "rules") -> list[str]:
    """A group label for each line, by one of ``METHODS``."""
    return mine(contents, method).labels


@dataclass(frozen=True)
class SystemScore:
    system: str
    lines: int
    groups: int
    found_groups: int
    accuracy: float
    key_drift: float


@dataclass(frozen=True)
class GroupingReport:
    name: str
    method: str
    systems: tuple[SystemScore, ...]

    @property
    def mean(self) -> float:
        """Mean of the per-system accuracies (each system counts once, whatever its size)."""
        return sum(s.accuracy for s in self.systems) / len(self.systems) if self.systems else 0.0

    @property
    def mean_key_drift(self) -> float:
        return sum(s.key_drift for s in self.systems) / len(self.systems) if self.systems else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "set": self.name,
            "method": self.method,
            "mean_grouping_accuracy": round(self.mean, 4),
            "systems": {s.system: round(s.accuracy, 4) for s in self.systems},
            "mean_key_drift": round(self.mean_key_drift, 4),
            "key_drift": {s.system: round(s.key_drift, 4) for s in self.systems},
            "lines": sum(s.lines for s in self.systems),
        }


def _predict(rows: list[SignatureLine], method: str, seed: int | None) -> Grouping:
    """The label of each row, in the rows' order, mined in file order or shuffled by ``seed``."""
    order = list(range(len(rows)))
    if seed is not None:
        random.Random(seed).shuffle(order)  # noqa: S311 - an order of mining, not a secret
    grouping = mine([rows[i].content for i in order], method)
    predicted = [""] * len(rows)
    for position, i in enumerate(order):
        predicted[i] = grouping.labels[position]
    return Grouping(predicted, grouping.key_drift)


def _by_system(lines: Sequence[SignatureLine]) -> dict[str, list[SignatureLine]]:
    by_system: dict[str, list[SignatureLine]] = defaultdict(list)
    for line in lines:
        by_system[line.system].append(line)
    return dict(sorted(by_system.items()))


def line_groups(
    lines: Sequence[SignatureLine], method: str = "rules", *, shuffle_seed: int | None = None
) -> list[tuple[SignatureLine, str]]:
    """Each line with the group it received, system by system as ``evaluate`` mines them."""
    group_lines([], method)  # reject an unknown method before any work
    found: list[tuple[SignatureLine, str]] = []
    for rows in _by_system(lines).values():
        found.extend(zip(rows, _predict(rows, method, shuffle_seed).labels, strict=True))
    return found


def _score(system: str, rows: list[SignatureLine], method: str, seed: int | None) -> SystemScore:
    grouping = _predict(rows, method, seed)
    predicted = grouping.labels
    truth = [r.group for r in rows]
    accuracy = grouping_accuracy(predicted, truth)
    found = len(set(predicted))
    return SystemScore(system, len(rows), len(set(truth)), found, accuracy, grouping.key_drift)


def evaluate(
    lines: Sequence[SignatureLine],
    method: str = "rules",
    *,
    name: str = "",
    shuffle_seed: int | None = None,
) -> GroupingReport:
    """Grouping accuracy per system; ``shuffle_seed`` mines the lines in a shuffled order."""
    group_lines([], method)  # reject an unknown method before any work
    scores = tuple(_score(s, rows, method, shuffle_seed) for s, rows in _by_system(lines).items())
    return GroupingReport(name=name, method=method, systems=scores)


def load_set(directory: Path) -> list[SignatureLine]:
    """The lines of a signature set folder (its ``lines.jsonl``)."""
    path = directory / LINES_FILE
    if not path.is_file():
        raise SignatureSetError(f"{directory}: no {LINES_FILE} (a signature set holds one)")
    return load_lines(path)


def evaluate_dir(
    directory: Path, method: str = "rules", *, shuffle_seed: int | None = None
) -> GroupingReport:
    """Evaluate the ``lines.jsonl`` of a signature set folder."""
    return evaluate(load_set(directory), method, name=directory.name, shuffle_seed=shuffle_seed)
