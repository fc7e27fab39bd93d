"""The printed table of a benchmark run (the JSON in bench/results/ has everything)."""

from __future__ import annotations

from typing import Any

__all__ = ["print_table"]


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print(_row(header, widths))
    print(_row(["-" * w for w in widths], widths))
    for row in rows:
        print(_row(row, widths))


def print_table(results: dict[str, Any]) -> None:
    load = results["machine_before"]["load_average"], results["machine_after"]["load_average"]
    print(f"\nmachine: {results['machine_before']['cpus']} cpus, load {load[0]} -> {load[1]}")
    rows = []
    if "extract" in results:
        e = results["extract"]
        rows.append(
            [
                f"error extraction ({e['megabytes']} MB, {e['errors']} errors)",
                f"{e['megabytes_per_s']:.2f} MB/s",
                "one core, no database (target >= 1 MB/s)",
            ]
        )
    if "ingest" in results:
        i = results["ingest"]
        model = sum(i["model_texts_per_s"]) / len(i["model_texts_per_s"])
        rows.append(
            [
                f"ingest end to end ({i['episodes']} episodes)",
                f"{i['episodes_per_s']:.1f} episodes/s",
                f"model alone {model:.1f} texts/s; ratio {i['ratio']:.0%} (target >= 70%)",
            ]
        )
        rows.append(
            [
                f"  the {i['embedded_texts']} texts it embeds",
                f"model alone {i['model_on_pipeline_texts_s']:.0f} s",
                f"pipeline {i['seconds']:.0f} s: efficiency {i['pipeline_efficiency']:.0%}; "
                f"ratio ceiling {i['ratio_ceiling']:.0%}",
            ]
        )
    if "graph_writes" in results:
        w = results["graph_writes"]
        rows.append(
            [
                f"graph writes, vectors given ({w['episodes']} episodes)",
                f"{w['graph_episodes_per_s']:.0f} episodes/s in Neo4j",
                f"whole pipeline {w['episodes_per_s']:.0f} episodes/s (target >= 5000 in Neo4j)",
            ]
        )
    if rows:
        print()
        _table(["ingest", "rate", "next to"], rows)
    if results.get("recall"):
        print()
        recall_rows = []
        for r in results["recall"]:
            ratios = {
                "metisgraph": (r["latency_ratio_p50"], r["latency_ratio_p95"]),
                "neo4j_vector": (r.get("floor_ratio_p50"), r.get("floor_ratio_p95")),
            }
            if r.get("before"):
                chroma = r["chroma"]
                ratios["before"] = (
                    r["before"]["p50_ms"] / chroma["p50_ms"],
                    r["before"]["p95_ms"] / chroma["p95_ms"],
                )
            systems = ("metisgraph", "before", "chroma", "neo4j_vector", "hybrid", "hybrid_search")
            for name in systems:
                s = r.get(name)
                if not s:  # results from before the floor was measured
                    continue
                p50, p95 = ratios.get(name, (None, None))
                recall_rows.append(
                    [
                        f"{r['size']:,}",
                        name,
                        f"{s['p50_ms']:.1f}",
                        f"{s['p95_ms']:.1f}",
                        f"{s['recall@5']:.3f}",
                        f"{p50:.2f} / {p95:.2f}" if p50 is not None else "",
                    ]
                )
        _table(["episodes", "system", "p50 ms", "p95 ms", "R@5", "ratio p50 / p95"], recall_rows)
        _print_phases(results["recall"])
        throughput_rows = _throughput_rows(results)
        if throughput_rows:
            print()
            _table(["episodes", "clients", "system", "req/s", "p50 ms", "p95 ms", "R@5",
                    "requests", "errors"], throughput_rows)  # fmt: skip
    if results.get("lineage"):
        print()
        _table(["episodes", "call", "p50 ms", "p95 ms", "n", "note"], _lineage_rows(results))
    if results.get("explore"):
        print()
        _table(["episodes", "page", "p50 ms", "p95 ms", "n", "note"], _explore_rows(results))
    if results.get("maintain"):
        print()
        _table(["episodes", "run", "seconds", "episodes read", "compared", "duplicates",
                "patterns", "note"], _maintain_rows(results))  # fmt: skip
    if results.get("plan"):
        print()
        _table(["episodes", "call", "p50 ms", "p95 ms", "n", "note"], _plan_rows(results))


def _ms(s: dict[str, Any]) -> str:
    return f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f}"


def _print_phases(recalls: list[dict[str, Any]]) -> None:
    """Each metisgraph's latency over the floor's; the long questions; the cold start."""
    rows = []
    for r in recalls:
        size, floor, long = f"{r['size']:,}", r.get("neo4j_vector"), r.get("long_questions") or {}
        for name in ("metisgraph", "before", "hybrid", "hybrid_search"):
            s = r.get(name)
            if not s or not floor:
                continue
            ratio = f"{s['p50_ms'] / floor['p50_ms']:.2f} / {s['p95_ms'] / floor['p95_ms']:.2f}"
            rows.append([size, name, "short p50 / p95 ÷ floor", ratio])
            if name in long:
                rows.append([size, name, "long p50 / p95 ms", _ms(long[name])])
                ratio = f"{long[name]['p95_ms'] / s['p95_ms']:.2f}"
                rows.append([size, name, "long p95 ÷ short p95", ratio])
        if long.get("floor"):
            rows.append([size, "neo4j_vector", "long p50 / p95 ms", _ms(long["floor"])])
        cold = r.get("cold_start")
        if cold:
            warm, first = r["metisgraph"]["p50_ms"], cold["p50_ms"]
            rows.append([size, "metisgraph", "ready after (s)", f"{cold['ready_s']:.1f}"])
            figure = f"first {cold['questions']} p50 ÷ warm p50"
            value = f"{first:.1f} ÷ {warm:.1f} = {first / warm:.2f}"
            rows.append([size, "metisgraph", figure, value])
    if rows:
        print()
        _table(["episodes", "system", "figure", "value"], rows)


def _throughput_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in results["recall"]:
        t = r.get("throughput")
        if not t:
            continue
        for name in ("metisgraph", "before", "chroma", "floor", "hybrid", "hybrid_search"):
            if name not in t:
                continue
            s = t[name]
            errors = ", ".join(f"{k} {v}" for k, v in s["errors"].items()) or "0"
            rows.append([f"{r['size']:,}", str(t["clients"]), name, f"{s['rps']:.1f}",
                         f"{s.get('p50_ms', 0):.1f}", f"{s.get('p95_ms', 0):.1f}",
                         f"{s.get('recall@5', 0):.3f}", str(s["requests"]), errors])  # fmt: skip
    return rows


def _lineage_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in results["lineage"]:
        size = f"{r['size']:,}"
        against = r.get("against") or {}
        for name, call in (("lineage", "lineage <= 100 sightings"),
                           ("lineage_large", "lineage > 100 sightings")):  # fmt: skip
            for who, lin in (("", r.get(name)), ("against: ", against.get(name))):
                if not lin:
                    continue
                note = f"sightings median {lin['sightings_median']}, max {lin['sightings_max']}"
                rows.append([size, f"{who}{call}", f"{lin['p50_ms']:.1f}",
                             f"{lin['p95_ms']:.1f}", str(lin["n"]), note])  # fmt: skip
        for order, e in r["errors"].items():
            for page in ("first_page", "next_page"):
                if page in e:
                    f = e[page]
                    rows.append([size, f"errors {order} {page.replace('_', ' ')}",
                                 f"{f['p50_ms']:.1f}", f"{f['p95_ms']:.1f}", str(f["n"]),
                                 f"{e['total']} errors"])  # fmt: skip
        for a in r["analytics"]:
            measured = f"{a['episodes']:,} episodes measured" if "episodes" in a else ""
            note = f"failed: {a['failed']}" if "failed" in a else measured
            rows.append([size, f"analytics cap {a['cap']:,}", f"{a['seconds'] * 1000:.0f}", "",
                         "1", note])  # fmt: skip
    return rows


def _explore_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in results["explore"]:
        if r.get("skipped"):
            rows.append([f"{r['size']:,}", "/explore lineage", "", "", "0", r["skipped"]])
            continue
        d, marks = r["drawn"], r["sightings"]
        rows.append([f"{r['size']:,}", "/explore lineage drawn", f"{d['p50_ms']:.0f}",
                     f"{d['p95_ms']:.0f}", str(d["n"]),
                     f"sightings drawn median {marks['median']}, max {marks['max']} "
                     "(target: 100 within 2 s)"])  # fmt: skip
        full = r.get("full_page")
        if full:
            rows.append([f"{r['size']:,}", "  pages of 100 sightings", f"{full['p50_ms']:.0f}",
                         "", str(full["n"]), f"max {full['max_ms']:.0f} ms"])  # fmt: skip
    return rows


def _maintain_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in results["maintain"]:
        names = ("first", "second (incremental)", "after new episodes")
        for name, run in zip(names, r["runs"], strict=False):
            note = f"dirty {run['dirty']}, dissolved {run['dissolved']}, retired {run['retired']}"
            if name == "second (incremental)":
                note += f"; graph digest unchanged: {r['same_digest']}"
            if "after" in run:
                note += f"; {run['after']['written']} new episodes ingested first"
            rows.append([f"{r['size']:,}", name, f"{run['wall_s']:.1f}", str(run["episodes"]),
                         str(run["compared"]), str(run["duplicates"]), str(run["patterns"]),
                         note])  # fmt: skip
    return rows


def _plan_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in results["plan"]:
        size, p, sdk = f"{r['size']:,}", r["plan_context"], r["sdk"]
        note = (f"k {p['k']}, budget {p['budget']}; prompt {r['prompt']['tokens_median']} "
                "tokens median (target p95 <= 100 ms)")  # fmt: skip
        rows.append([size, "planContext (raw HTTP)", f"{p['p50_ms']:.1f}", f"{p['p95_ms']:.1f}",
                     str(r["tasks"]), note])  # fmt: skip
        own, raw = sdk["sdk_own_ms"], sdk["raw_own_ms"]
        rows.append([size, "  SDK overhead over raw", f"{sdk['overhead_p50_ms']:.2f}", "",
                     str(r["tasks"]), f"client's own time p50: SDK {own['p50_ms']:.2f}, raw "
                     f"{raw['p50_ms']:.2f}; wall p50 difference "
                     f"{sdk['wall_p50_difference_ms']:.1f} (target <= 2 ms)"])  # fmt: skip
        b = r.get("before")
        if b:
            rows.append([size, "planContext, --against", f"{b['p50_ms']:.1f}",
                         f"{b['p95_ms']:.1f}", str(r["tasks"]), "the other checkout"])  # fmt: skip
    return rows
