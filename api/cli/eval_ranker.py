"""`metisgraph eval ranker`: train the learned ranker on recorded shortlists (`eval retrieval
--features`) and judge it leave-one-set-out beside the hand-set fusion."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from metisgraph.api.cli.eval import app, err

_COLUMNS = (("r1", "R@1"), ("r5", "R@5"), ("r10", "R@10"), ("mrr", "MRR@10"))


@app.command()
def ranker(
    features: Annotated[
        list[Path], typer.Argument(help="Shortlists recorded by eval retrieval --features.")
    ],
    method: Annotated[str, typer.Option(help="pointwise or pairwise.")] = "pointwise",
    l2: Annotated[float, typer.Option(help="L2 penalty on the standardised weights.")] = 1.0,
    write: Annotated[
        Path | None, typer.Option(help="Write the ranker trained on every set here.")
    ] = None,
    version: Annotated[str, typer.Option(help="The version the written ranker carries.")] = "",
    only: Annotated[
        str,
        typer.Option(help="Train on the features whose names start so (comma-separated)."),
    ] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Per set: the hand-set fusion, the ranker trained on every set (plain) and the ranker
    trained without the set (leave-one-set-out), over the same shortlists; and the weights."""
    from metisgraph.api.eval.ranker_data import read_features
    from metisgraph.api.eval.ranker_fit import judge

    if method not in ("pairwise", "pointwise"):
        raise typer.BadParameter("choose pairwise or pointwise", param_hint="--method")
    try:
        sets = [read_features(path) for path in features]
    except (OSError, ValueError, KeyError) as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    prefixes = tuple(p.strip() for p in only.split(",") if p.strip())
    names = [n for n in sets[0].names if n.startswith(prefixes)] if prefixes else None
    if names == []:
        raise typer.BadParameter(f"no feature starts with {only!r}", param_hint="--only")
    trained, figures = judge(sets, method, l2, names)  # type: ignore[arg-type]
    if write is not None:
        named = f"{method}-l2={l2}-only={only or 'all'}-" + "+".join(trained.trained_on)
        from dataclasses import replace

        replace(trained, version=version or named).write(write)
    weights = dict(zip(trained.features, map(float, trained.weights), strict=True))
    if as_json:
        rows = [
            {"set": f.name, "n": f.questions, "hand": f.hand, "plain": f.plain,
             "held_out": f.held_out}
            for f in figures
        ]  # fmt: skip
        sys.stdout.write(json.dumps({"sets": rows, "weights": weights}) + "\n")
        return
    table = Table(title=f"learned ranker ({method}, l2 {l2}) against the hand-set fusion")
    for column in ("set", "ranked by", *(c for _, c in _COLUMNS)):
        table.add_column(column, justify="left" if column in ("set", "ranked by") else "right")
    for f in figures:
        for label, values in (("hand", f.hand), ("learned", f.plain), ("held out", f.held_out)):
            cells = (f"{values[k]:.4f}" for k, _ in _COLUMNS)
            table.add_row(f"{f.name} ({f.questions})" if label == "hand" else "", label, *cells)
        table.add_section()
    Console().print(table)
    ordered = sorted(weights.items(), key=lambda kv: -abs(kv[1]))
    shown = Table(title="weights (standardised features), largest first")
    shown.add_column("feature")
    shown.add_column("weight", justify="right")
    for name, value in ordered:
        shown.add_row(name, f"{value:+.3f}")
    Console().print(shown)
