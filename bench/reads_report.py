"""The reads at 10k, 100k and 1M in one table, and their plot (issue 24).

    python bench/reads_report.py bench/results/reads-at-n*.json --build 1000000=LOG \
        --out docs/reads-scale.svg > table.md

Each size from the last file given that has it (bench/reads_at.py's results). ``--build``:
a size's build log of bench/bulk_build.py (its JSON object at the end; the maximum resident
memory of `/usr/bin/time -v` after it, when present). Writes the Markdown table to stdout
and the SVG (bench/plot_scale.py's drawing, no plotting library) to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from bench.plot_scale import svg  # noqa: E402

COLOURS = {
    "recall": "#1f77b4",
    "planContext": "#ff7f0e",
    "lineage ≤ 100 sightings": "#2ca02c",
    "lineage, thousands": "#98df8a",
    "errors page (COUNT)": "#d62728",
}


def _label(size: int) -> str:
    return f"{size // 1000:,}k" if size < 1_000_000 else f"{size // 1_000_000}M"


def build_figures(log: Path) -> dict[str, Any]:
    """The JSON object bench/bulk_build.py prints last, and /usr/bin/time's maximum RSS."""
    text = log.read_text()
    start = text.rfind("\n{\n") + 1 if "\n{\n" in text else text.find("{")
    end = text.rfind("\n}") + 2
    out: dict[str, Any] = json.loads(text[start:end])
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if rss:
        out["max_rss_mb"] = round(int(rss.group(1)) / 1024)
    return out


def _pp(part: dict[str, Any] | None) -> str:
    if not part or "p50_ms" not in part:
        return "failed" if part and "failed" in part else "—"
    return f"{part['p50_ms']:.0f} / {part['p95_ms']:.0f}"


def _sightings(part: dict[str, Any] | None) -> str:
    if not part or not part.get("n"):
        return ""
    return f" (n {part['n']}, median {part['sightings_median']:g} sightings)"


def rows(runs: dict[int, dict[str, Any]], builds: dict[int, dict[str, Any]]) -> list[list[str]]:
    sizes = sorted(set(runs) | set(builds))
    table: list[list[str]] = [["", *(_label(s) for s in sizes), "target at 1M"]]

    def line(name: str, cell: Any, target: str = "") -> None:
        table.append([name, *(cell(s) for s in sizes), target])

    def reads(s: int) -> dict[str, Any]:
        return dict(runs.get(s, {}).get("reads", {}))

    line("recall p50 / p95 ms", lambda s: _pp(reads(s).get("recall")), "p95 ≤ 150")
    line("planContext p50 / p95 ms", lambda s: _pp(reads(s).get("plan_context")))
    for key, name, target in (
        ("lineage_small", "lineage ≤ 100 sightings p50 / p95 ms", "p95 ≤ 150"),
        ("lineage_large", "lineage > 100 sightings p50 / p95 ms", ""),
    ):
        line(name, lambda s, k=key: _pp(reads(s).get(k)) + _sightings(reads(s).get(k)), target)
    for order in ("COUNT", "RECENT", "UNRESOLVED"):
        line(
            f"errors first page, {order}, p50 / p95 ms",
            lambda s, o=order: _pp(reads(s).get("errors", {}).get(o, {}).get("first_page")),
            "p95 ≤ 150",
        )
        line(
            f"errors next page, {order}, p50 / p95 ms",
            lambda s, o=order: _pp(reads(s).get("errors", {}).get(o, {}).get("next_page")),
        )

    def analytics(s: int) -> str:
        a = reads(s).get("analytics")
        if not a:
            return "—"
        return "failed" if "failed" in a else f"{a['seconds']:.1f} s ({a['episodes']:,} ep.)"

    line("analytics at its cap (20k), one call", analytics)

    def maintain(s: int) -> str:
        m = (runs.get(s, {}).get("maintain") or {}).get("periodic")
        return f"{m['wall_s']:.1f} s ({m['episodes']:,} episodes read)" if m else "—"

    line("maintain periodic, after 1,000 new", maintain, "≤ 60 s")
    line("Neo4j heap / page cache", lambda s: f"{runs[s]['heap']} / {runs[s]['pagecache']}"
         if s in runs else "—")  # fmt: skip
    line("store on disk (data)", lambda s: f"{runs[s]['store_bytes'] / 1e9:.2f} GB"
         if s in runs else f"{builds[s]['store_bytes'] / 1e9:.2f} GB")  # fmt: skip

    def rss(s: int) -> str:
        r = reads(s).get("rss_mb") or {}
        return f"{r.get('api') or 0:,.0f} / {r.get('neo4j') or 0:,.0f} MB" if r else "—"

    line("resident memory, API / Neo4j", rss)
    line("Neo4j start / API ready", lambda s: f"{runs[s].get('neo4j_start_s', 0):.0f} / "
         f"{reads(s).get('api_ready_s', 0):.0f} s" if s in runs else "—")  # fmt: skip
    line("load average, start → end", lambda s: f"{runs[s]['load_start'][0]:.2f} → "
         f"{runs[s].get('load_end', [0])[0]:.2f}" if s in runs else "—")  # fmt: skip

    def build(key: str, unit: str = " s") -> Any:
        return lambda s: f"{builds[s][key]:,}{unit}" if key in builds.get(s, {}) else "—"

    line("build: files", build("files_s"))
    line("build: import", build("import_s"))
    line("build: start + schema", build("start_schema_s"))
    line("build: derive", build("derive_s"))
    line("build: all told", build("total_s"), "≤ 1 h")
    line("build: episodes/s", build("episodes_per_s", ""), "≥ 500")
    line("build: max resident memory", build("max_rss_mb", " MB"))
    return table


def markdown(table: list[list[str]]) -> str:
    head, *body = table
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(out)


def plot(runs: dict[int, dict[str, Any]]) -> dict[str, list[tuple[int, float, float]]]:
    keys = {
        "recall": ("recall",),
        "planContext": ("plan_context",),
        "lineage ≤ 100 sightings": ("lineage_small",),
        "lineage, thousands": ("lineage_large",),
        "errors page (COUNT)": ("errors", "COUNT", "first_page"),
    }
    data: dict[str, list[tuple[int, float, float]]] = {}
    for name, path in keys.items():
        for size, run in sorted(runs.items()):
            part: Any = run.get("reads", {})
            for key in path:
                part = part.get(key) or {}
            if "p50_ms" in part:
                data.setdefault(name, []).append((size, part["p50_ms"], part["p95_ms"]))
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="*")
    parser.add_argument("--build", action="append", default=[], help="SIZE=LOG")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--title", default="Reads by store size, through the API (2 cores)")
    options = parser.parse_args()
    runs: dict[int, dict[str, Any]] = {}
    for path in options.results:  # a run of reads, or of maintain alone (--no-reads)
        run = json.loads(path.read_text())
        kept = runs.setdefault(run["size"], {})
        if "reads" in run:
            kept.update({k: v for k, v in run.items() if k != "maintain" or v})
        else:
            kept.setdefault("maintain_only", run)
            kept["maintain"] = run.get("maintain") or kept.get("maintain")
    builds = {}
    for given in options.build:
        size, log = given.split("=", 1)
        builds[int(size)] = build_figures(Path(log))
    print(markdown(rows(runs, builds)))
    if options.out and runs:
        unit = "ms per request (log)"
        data = plot(runs)
        options.out.write_text(svg(data, options.title, colours=COLOURS, unit=unit, target=150))


if __name__ == "__main__":
    main()
