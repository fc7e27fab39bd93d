"""`metisgraph eval …`: measure signature grouping, recall quality and lineage attribution on
labelled sets."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from metisgraph.api.eval.families import FamilyBench, FamilyReport
from metisgraph.api.eval.rules import RuleBench, RuleReport
from metisgraph.api.eval.signatures import (
    METHODS,
    GroupingReport,
    SignatureSetError,
    evaluate,
    line_groups,
    load_set,
)

# Errors name a file and line: never wrapped, so they can be searched and copied whole.
err = Console(stderr=True, soft_wrap=True)

app = typer.Typer(help="Measure metisgraph on labelled evaluation sets.", no_args_is_help=True)


@app.command()
def signatures(
    directory: Annotated[Path, typer.Argument(help="A signature set: a folder with lines.jsonl.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    method: Annotated[
        str, typer.Option(help=f"How lines are grouped: {', '.join(METHODS)}.")
    ] = "rules",
    shuffle: Annotated[
        int | None,
        typer.Option(help="Read each system's lines in an order shuffled with this seed."),
    ] = None,
    groups: Annotated[
        Path | None,
        typer.Option(
            help="Also write the group each line gets to this file: JSON lines "
            "{system, line_id, group}, to compare two versions line by line."
        ),
    ] = None,
    ablation: Annotated[
        bool, typer.Option(help="Also show, per template rule, on which systems it helps.")
    ] = False,
) -> None:
    """Grouping accuracy of line signatures per system: plain, and leave one system out.

    Leave one system out: each system is scored with the template rules (and, for families,
    the family settings) chosen without it. Drain chooses nothing from the data, so its
    two figures are one.
    """
    if method not in METHODS:
        raise typer.BadParameter(f"choose from {', '.join(METHODS)}", param_hint="--method")
    try:
        lines = load_set(directory)
    except SignatureSetError as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    report = evaluate(lines, method, name=directory.name, shuffle_seed=shuffle)
    bench = RuleBench(lines) if method in ("rules", "families") else None
    rules = bench.report() if bench is not None and method == "rules" else None
    families = FamilyBench(bench).report() if bench is not None and method == "families" else None
    held_out = _held_out(rules, families)
    if groups is not None:
        with groups.open("w", encoding="utf-8") as out:
            for line, group in line_groups(lines, method, shuffle_seed=shuffle):
                row = {"system": line.system, "line_id": line.line_id, "group": group}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    if as_json:
        data = report.as_json()
        if rules is not None:
            data |= rules.as_json()
            if not ablation:
                del data["rules"]
        if families is not None:
            data |= families.as_json()
        sys.stdout.write(json.dumps(data) + "\n")
        return
    Console().print(_table(report, held_out))
    if ablation and rules is not None:
        Console().print(_ablation_table(rules))


def _held_out(rules: RuleReport | None, families: FamilyReport | None) -> dict[str, float]:
    """Each system's leave-one-out figure, for the methods that choose anything."""
    if rules is not None:
        return {f.system: f.accuracy for f in rules.folds}
    if families is not None:
        return {f.system: f.accuracy for f in families.folds}
    return {}


def _table(report: GroupingReport, folds: dict[str, float]) -> Table:
    table = Table(title=f"grouping accuracy — {report.name} ({report.method})")
    columns = ("system", "lines", "true groups", "found groups", "accuracy", "leave-one-out")
    for column in (*columns, "key drift"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for s in report.systems:
        counts = (str(s.lines), str(s.groups), str(s.found_groups))
        held_out = f"{folds[s.system]:.4f}" if s.system in folds else "—"
        table.add_row(s.system, *counts, f"{s.accuracy:.4f}", held_out, f"{s.key_drift:.3f}")
    table.add_section()
    lines = sum(s.lines for s in report.systems)
    mean_held_out = f"{sum(folds.values()) / len(folds):.4f}" if folds else "—"
    table.add_row(
        "mean", str(lines), "", "", f"{report.mean:.4f}", mean_held_out,
        f"{report.mean_key_drift:.3f}",
    )  # fmt: skip
    return table


def _ablation_table(rules: RuleReport) -> Table:
    """Each rule: where it came from, what it adds beside the chosen rules, per system."""
    table = Table(title="template rules — accuracy points with the rule minus without it")
    systems = [f.system for f in rules.folds]
    table.add_column("rule", no_wrap=True)
    table.add_column("from")
    for system in systems:
        table.add_column(system[:7], justify="right")
    table.add_column("kept")
    for effect in rules.effects:
        origin = ", ".join(effect.provenance) or "published"
        deltas = [f"{effect.deltas[s] * 100:+.1f}" if effect.deltas[s] else "·" for s in systems]
        table.add_row(
            effect.rule, origin, *deltas, "yes" if effect.rule in rules.selected else "no"
        )
    return table


def _write_rankings(path: Path, rankings: dict[str, list[str]]) -> None:
    """One line per query, in query order: {"id": ..., "ranked": [...]} (diffable runs)."""
    lines = (json.dumps({"id": q, "ranked": ranked}) for q, ranked in rankings.items())
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


@app.command()
def retrieval(
    directory: Annotated[
        Path, typer.Argument(help="A retrieval set: corpus.jsonl, queries.jsonl.")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    preset: Annotated[str, typer.Option(help="Recall preset (channel weights).")] = "balanced",
    keep: Annotated[bool, typer.Option(help="Keep the ingested namespace afterwards.")] = False,
    namespace: Annotated[
        str | None, typer.Option(help="Project prefix to ingest under (default: a fresh one).")
    ] = None,
    rankings: Annotated[
        Path | None,
        typer.Option(help="Write each query's ranked ids here, one JSON line per query."),
    ] = None,
    maintain: Annotated[
        bool,
        typer.Option(help="Run maintain (METISGRAPH_MAINTAIN_* settings) after the ingest."),
    ] = False,
    patterns: Annotated[
        bool, typer.Option(help="Ask for patterns too (memoryTypes EPISODE and PATTERN).")
    ] = False,
    off_topic: Annotated[
        list[Path] | None,
        typer.Option(
            help="Off-topic questions (JSON lines with text/error, or another set's folder),"
            " asked in this set's projects in turn; their abstention rate is reported."
        ),
    ] = None,
    abstain_below: Annotated[
        float | None,
        typer.Option(help="A fixed abstention threshold (default: each project's measured one)."),
    ] = None,
    baselines: Annotated[
        bool, typer.Option(help="Also score BM25, dense and their RRF on the same corpus.")
    ] = True,
    features: Annotated[
        Path | None,
        typer.Option(help="Record each question's shortlist features here (.npz, eval ranker)."),
    ] = None,
) -> None:
    """R@1/5/10, MRR@10, nDCG@10 and recall latency, through ingest and recall as shipped,
    beside plain BM25, dense and hybrid RRF over the same corpus in the same run;
    abstentions on the answerable questions (and on --off-topic ones).

    A returned pattern counts its members, an episode its merged duplicates, in rank order
    (R@k still reads k corpus ids).
    """
    import asyncio
    from dataclasses import replace

    from metisgraph.api.eval.off_topic import OffTopicError, load_off_topic
    from metisgraph.api.eval.ranker_data import write_features
    from metisgraph.api.eval.retrieval import (
        AskOptions,
        RetrievalSetError,
        check_set,
        evaluate_retrieval,
    )
    from metisgraph.api.services import open_services
    from metisgraph.graph import PRESETS

    try:  # a bad query file is reported before anything is started or ingested
        queries = check_set(directory)
        unrelated = tuple(q for path in off_topic or [] for q in load_off_topic(path))
        if preset not in PRESETS:
            raise RetrievalSetError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    except (RetrievalSetError, OffTopicError, OSError) as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None

    async def run() -> dict[str, object]:
        async with open_services() as services:
            types = ("episode", "pattern") if patterns else ("episode",)
            report = await evaluate_retrieval(
                services,
                directory,
                keep=keep,
                namespace=namespace,
                maintain=services.settings.maintain.consolidation() if maintain else None,
                options=AskOptions(
                    k=10,
                    preset=preset,
                    memory_types=types,
                    abstain_below=abstain_below,
                    off_topic=unrelated,
                    settings=replace(PRESETS[preset], features=True) if features else None,
                ),
                baselines=baselines,
            )
            if rankings is not None:
                _write_rankings(rankings, report.rankings)
            if features is not None:
                write_features(features, directory.name, queries, report.features)
            return report.as_json()

    try:
        result = asyncio.run(run())
    except RetrievalSetError as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    failures = result.get("failures")
    if isinstance(failures, list) and failures:
        err.print(
            f"[yellow]{len(failures)} question(s) failed and count as misses:", highlight=False
        )
        for failure in failures[:20]:
            err.print(f"  {failure['id']}: {failure['error']}", highlight=False)
    ingest = result.get("ingest")
    if isinstance(ingest, dict) and ingest.get("refused"):
        err.print(
            f"[yellow]{ingest['refused']} corpus record(s) refused at ingest; "
            "the figures cover the rest (metisgraph ingest --dead-letter shows why)",
            highlight=False,
        )
    if as_json:
        sys.stdout.write(json.dumps({k: v for k, v in result.items() if k != "ingest"}) + "\n")
        return
    table = Table(title=f"retrieval — {directory.name} ({preset})")
    for key in ("n", "recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10"):
        table.add_column(key, justify="right")
    table.add_column("latency p50 / p95 ms", justify="right")
    latency = result["latency_ms"]
    assert isinstance(latency, dict)
    table.add_column("ranked by")
    columns = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")
    table.add_row(
        str(result["n"]), *(str(result[k]) for k in columns),
        f"{latency['p50']} / {latency['p95']}", f"metisgraph ({preset})",
    )  # fmt: skip
    plain = result.get("baselines")
    for name, figures in plain.items() if isinstance(plain, dict) else ():
        table.add_row("", *(str(figures.get(k, "")) for k in columns), "", name)
    Console().print(table)
    _print_abstention(result.get("abstention"))


def _print_abstention(found: object) -> None:
    """Abstentions: answerable (false abstentions) and off-topic, with the thresholds."""
    if not isinstance(found, dict):
        return
    lines = [f"answerable: {found['answerable']['abstained']} of {found['answerable']['n']}"]
    off = found.get("off_topic")
    if isinstance(off, dict):
        lines.append(f"off-topic: {off['abstained']} of {off['n']} ({off['rate']})")
        lines += [f"  {s}: {v['abstained']} of {v['n']}" for s, v in off["by_source"].items()]
    gates = found.get("thresholds")
    if isinstance(gates, dict):
        lines.append("thresholds:")
        lines += [f"  {p}: {g['threshold']} ({g['source']})" for p, g in gates.items()]
    Console().print("abstained — " + "\n".join(lines), highlight=False)


@app.command()
def lineage(
    labels: Annotated[Path, typer.Argument(help="A lineage label file (bench/labels/README.md).")],
    runs: Annotated[Path, typer.Option(help="The folder the labels' run files are relative to.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    keep: Annotated[bool, typer.Option(help="Keep the ingested namespace afterwards.")] = False,
    namespace: Annotated[
        str | None, typer.Option(help="Project prefix to ingest under (default: a fresh one).")
    ] = None,
) -> None:
    """Fix, workaround and unresolved attributions against labelled runs: precision and
    recall, overall and per source, through ingest and the graph as shipped."""
    import asyncio

    from metisgraph.api.eval.lineage import evaluate_lineage
    from metisgraph.api.eval.lineage_labels import LabelSetError, load_labels
    from metisgraph.api.services import open_services

    try:  # a bad label file is reported before anything is started or ingested
        load_labels(labels)
    except (LabelSetError, OSError) as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None

    async def run() -> dict[str, object]:
        async with open_services() as services:
            report = await evaluate_lineage(services, labels, runs, keep=keep, namespace=namespace)
            return report.as_json()

    try:
        result = asyncio.run(run())
    except LabelSetError as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    _lineage_table(result)


def _lineage_table(result: dict[str, object]) -> None:
    table = Table(title="lineage attribution against the labels")
    for column in (
        "scope",
        "errors",
        "found",
        "fix P",
        "fix R",
        "fix P strict",
        "workaround P",
        "workaround R",
        "unresolved P",
        "unresolved R",
        "failed-task fixes (wrong)",
    ):
        table.add_column(column, justify="right" if column != "scope" else "left")
    sources = result["sources"]
    assert isinstance(sources, dict)
    for name, scores in [("all", result["overall"]), *sources.items()]:
        assert isinstance(scores, dict)
        fix, wa, unres = scores["fixed"], scores["workaround"], scores["unresolved"]
        failed = scores["failed_tasks"]
        table.add_row(
            name, str(scores["errors"]), str(scores["found"]),
            *(str(x) for x in (fix["precision"], fix["recall"], fix["strict_precision"])),
            str(wa["precision"]), str(wa["recall"]),
            str(unres["precision"]), str(unres["recall"]),
            f"{failed['fix_claims']} ({failed['wrong']})",
        )  # fmt: skip
    Console().print(table)


@app.command()
def plan(
    labels: Annotated[Path, typer.Argument(help="A lineage label file (bench/labels/README.md).")],
    runs: Annotated[Path, typer.Option(help="The folder the labels' run files are relative to.")],
    budget: Annotated[int, typer.Option(help="planContext's token budget.")] = 2000,
    k: Annotated[int, typer.Option(help="planContext's k (memories recalled).")] = 8,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    prompts: Annotated[
        Path | None, typer.Option(help="Write each case with its whole prompt here (JSON lines).")
    ] = None,
    keep: Annotated[bool, typer.Option(help="Keep the ingested namespace afterwards.")] = False,
    namespace: Annotated[
        str | None, typer.Option(help="Project prefix to ingest under (default: a fresh one).")
    ] = None,
) -> None:
    """For each error the labels say a run fixed, planContext for "<repository>: <error>":
    does the prompt hold the fixing step's action? Overall and per source, with the prompts'
    tokens and the prompts that say no memory applies while memories were left out."""
    import asyncio

    from metisgraph.api.eval.lineage_labels import LabelSetError, load_labels
    from metisgraph.api.eval.plan import evaluate_plan
    from metisgraph.api.services import open_services

    try:  # a bad label file is reported before anything is started or ingested
        load_labels(labels)
    except (LabelSetError, OSError) as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None

    async def run() -> dict[str, object]:
        async with open_services() as services:
            report = await evaluate_plan(
                services, labels, runs, budget=budget, k=k, keep=keep, namespace=namespace
            )
            if prompts is not None:
                with prompts.open("w", encoding="utf-8") as out:
                    for case in report.cases:
                        out.write(json.dumps(case.as_json(prompt=True)) + "\n")
            return report.as_json()

    try:
        result = asyncio.run(run())
    except LabelSetError as error:
        err.print(f"[red]{error}", highlight=False)
        raise typer.Exit(1) from None
    if as_json:
        sys.stdout.write(json.dumps(result) + "\n")
        return
    _plan_table(result)


def _plan_table(result: dict[str, object]) -> None:
    table = Table(title=f"the fix in the planning prompt (budget {result['budget']})")
    columns = ("scope", "fixed errors", "fix in prompt", "ratio", "fix step named",
               "'no memory applies' while left out", "tokens median / max", "memories median",
               "failed")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right" if column != "scope" else "left")
    sources = result["sources"]
    assert isinstance(sources, dict)
    for name, s in [("all", result["overall"]), *sources.items()]:
        assert isinstance(s, dict)
        table.add_row(
            name, str(s["fixed"]), str(s["holds"]), str(s["holds_ratio"]), str(s["cited"]),
            str(s["claims_none_while_left_out"]), f"{s['tokens_median']} / {s['tokens_max']}",
            str(s["memories_median"]), str(s["failed"]),
        )  # fmt: skip
    Console().print(table)
