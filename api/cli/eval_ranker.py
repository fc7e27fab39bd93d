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


@app.command("train-ranker")
def train_ranker(
    labelled: Annotated[
        Path | None,
        typer.Argument(help="The project's labelled questions: queries.jsonl or a set folder."),
    ] = None,
    feedback: Annotated[
        Path | None, typer.Option(help="A feedback log of recorded use (JSON lines).")
    ] = None,
    project: Annotated[
        str | None, typer.Option(help="The project (default: the one the questions name).")
    ] = None,
    namespace: Annotated[
        str, typer.Option(help="Prefix put before each question's project (eval --keep).")
    ] = "",
    folds: Annotated[int, typer.Option(min=2, help="Held-out folds of the questions.")] = 5,
    method: Annotated[str, typer.Option(help="pointwise or pairwise.")] = "pointwise",
    l2: Annotated[float, typer.Option(help="L2 penalty on the standardised weights.")] = 30.0,
    install: Annotated[
        bool, typer.Option(help="Install the ranker on the project when it is better.")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Train the project's own ranker on its labelled questions and its recorded use, judge
    it on held-out folds against the shipped ranker and the hand-set fusion, and install
    it (recall's `learned` ranker reads it) only when it beats the shipped one."""
    import asyncio

    from metisgraph.api.eval.ranker_fit import Method
    from metisgraph.api.eval.retrieval import RetrievalSetError, load_queries
    from metisgraph.api.eval.train_ranker import read_feedback, train_project_ranker
    from metisgraph.api.services import open_services

    if method not in ("pairwise", "pointwise"):
        raise typer.BadParameter("choose pairwise or pointwise", param_hint="--method")
    if labelled is None and feedback is None:
        raise typer.BadParameter("give labelled questions, --feedback, or both")
    try:
        path = labelled / "queries.jsonl" if labelled and labelled.is_dir() else labelled
        asked = load_queries(path) if path else []
        log = read_feedback(feedback) if feedback else None
    except (RetrievalSetError, OSError, UnicodeDecodeError) as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    for line in log.refused if log else []:
        err.print(f"[yellow]refused {line}", highlight=False)
    used = log.questions if log else []
    named = {namespace + q.project for q in [*asked, *used]}
    target = project or (named.pop() if len(named) == 1 else None)
    if target is None:
        shown = ", ".join(sorted(named)) or "none"
        raise typer.BadParameter(
            f"the questions name projects {shown}: choose one", param_hint="--project"
        )
    asked = [q for q in asked if namespace + q.project == target]
    used = [q for q in used if namespace + q.project == target]

    chosen: Method = "pairwise" if method == "pairwise" else "pointwise"

    async def run() -> dict[str, object]:
        async with open_services() as services:
            report = await train_project_ranker(
                services, target, asked, used, folds=folds, method=chosen, l2=l2, install=install
            )
            return report.as_json()

    result = asyncio.run(run())
    if log is not None:
        result["feedback"] = {"failed_uses": log.failed_uses, "refused": len(log.refused)}
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    table = Table(title=f"{target}: {result['questions']} questions, {result['folds']} folds")
    for column in ("ranked by", *(c for _, c in _COLUMNS)):
        table.add_column(column, justify="left" if column == "ranked by" else "right")
    for label in ("hand", "shipped", "held_out"):
        values: dict[str, float] = result[label]  # type: ignore[assignment]
        table.add_row(label.replace("_", " "), *(f"{values[k]:.4f}" for k, _ in _COLUMNS))
    Console().print(table)
    verdict = "installed" if result["installed"] else "better, not installed" if result[
        "better"] else "not better than the shipped ranker: not installed"  # fmt: skip
    Console().print(f"{verdict} ({result['version']})", highlight=False)
