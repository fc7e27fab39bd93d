"""The learned ranker: a linear model over the candidates' features, plain numpy at recall.

Its weights are a small versioned JSON file (``ranker.json`` beside this module, written by
``metisgraph eval ranker --write``): the feature names it was trained on, their means and
scales, a weight each and an intercept. A feature recall does not (or no longer) compute is
read as its mean (it adds nothing); a feature the file does not know is ignored. The score
of a candidate is sum(weight x (value - mean) / scale) + intercept; each term is that
feature's contribution, shown in `why`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from metisgraph.graph.rank_features import FEATURES, Matrix

__all__ = ["RANKER_FILE", "LinearRanker", "RankerFileError", "load_ranker", "shipped_ranker"]

RANKER_FILE = "ranker.json"
FORMAT = 1  # the layout of the file; `version` names the training run


class RankerFileError(ValueError):
    """The weights file is not a ranker this version reads (names the file and field)."""


@dataclass(frozen=True)
class LinearRanker:
    version: str
    features: tuple[str, ...]
    mean: Matrix
    scale: Matrix
    weights: Matrix
    intercept: float
    trained_on: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: Any, where: str = RANKER_FILE) -> LinearRanker:
        def field(name: str) -> Any:
            if not isinstance(data, dict) or name not in data:
                raise RankerFileError(f"{where}: field {name!r}: missing")
            return data[name]

        if field("format") != FORMAT:
            raise RankerFileError(f"{where}: field 'format': {data['format']!r}, reads {FORMAT}")
        names = field("features")
        columns = {k: field(k) for k in ("mean", "scale", "weights")}
        for key, values in columns.items():
            if not isinstance(values, list) or len(values) != len(names):
                raise RankerFileError(f"{where}: field {key!r}: one number per feature")
        return cls(
            version=str(field("version")),
            features=tuple(map(str, names)),
            mean=np.asarray(columns["mean"], dtype=np.float64),
            scale=np.asarray([s or 1.0 for s in columns["scale"]], dtype=np.float64),
            weights=np.asarray(columns["weights"], dtype=np.float64),
            intercept=float(field("intercept")),
            trained_on=tuple(map(str, data.get("trained_on") or ())),
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "trained_on": list(self.trained_on),
            "features": list(self.features),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "weights": [round(float(v), 6) for v in self.weights],
            "intercept": round(self.intercept, 6),
        }

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.as_json(), indent=1) + "\n", encoding="utf-8")

    def _columns(self, names: tuple[str, ...]) -> tuple[np.ndarray[Any, Any], Matrix, Matrix]:
        """Where each of the ranker's features is among ``names`` (-1: not computed)."""
        at = {n: i for i, n in enumerate(names)}
        index = np.asarray([at.get(f, -1) for f in self.features], dtype=np.int64)
        known = index >= 0
        return index[known], self.weights[known] / self.scale[known], self.mean[known]

    def contributions(self, matrix: Matrix, names: Sequence[str] = FEATURES) -> Matrix:
        """Each candidate's terms (rows) per feature of the ranker it has (columns)."""
        index, slope, mean = self._columns(tuple(names))
        return (matrix[:, index] - mean) * slope

    def score(self, matrix: Matrix, names: Sequence[str] = FEATURES) -> Matrix:
        """One score per row of ``matrix`` (its columns named by ``names``)."""
        index, slope, mean = self._columns(tuple(names))
        return (matrix[:, index] - mean) @ slope + self.intercept

    def named(self, names: Sequence[str] = FEATURES) -> list[str]:
        """The ranker's features recall computes, in the order of ``contributions``."""
        index, _, _ = self._columns(tuple(names))
        return [names[i] for i in index]


def load_ranker(path: Path) -> LinearRanker:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RankerFileError(f"{path}: {exc}") from None
    return LinearRanker.from_json(data, str(path))


@cache
def shipped_ranker() -> LinearRanker:
    """The ranker shipped in the package (trained on the development sets)."""
    text = resources.files("metisgraph.graph").joinpath(RANKER_FILE).read_text("utf-8")
    return LinearRanker.from_json(json.loads(text))
