"""Draw how recall's latency grows with the corpus: an SVG with log-scaled axes, no plotting
library (the benchmark's figures are a handful of points).

    python bench/plot_scale.py --store bench/results/store-scale-X.json \
        --recall bench/results/bench-A.json bench/results/bench-B.json --out docs/scale.svg

``--store``: results of bench/store_scale.py (Neo4j's vector search and ChromaDB per size);
``--recall``: results of bench/run.py with a recall part (metisgraph, its floor and
ChromaDB on the full graph), each size taken from the last file that has it.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

W, H = 780, 440
LEFT, RIGHT, TOP, BOTTOM = 70, 250, 40, 60
COLOURS = {
    "metisgraph recall": "#1f77b4",
    "Neo4j vector search (full graph)": "#2ca02c",
    "Neo4j vector search (episodes only)": "#98df8a",
    "ChromaDB (full-graph run)": "#d62728",
    "ChromaDB (episodes-only run)": "#ff9896",
}


def series(store: list[dict[str, Any]], recall: list[dict[str, Any]]) -> dict[str, list]:
    out: dict[str, list[tuple[int, float, float]]] = {name: [] for name in COLOURS}
    for s in store:
        v, c = s["neo4j_vector"], s["chroma"]
        out["Neo4j vector search (episodes only)"].append((s["size"], v["p50_ms"], v["p95_ms"]))
        out["ChromaDB (episodes-only run)"].append((s["size"], c["p50_ms"], c["p95_ms"]))
    by_size = {r["size"]: r for r in recall}
    for size, r in sorted(by_size.items()):
        m, c = r["metisgraph"], r["chroma"]
        out["metisgraph recall"].append((size, m["p50_ms"], m["p95_ms"]))
        out["ChromaDB (full-graph run)"].append((size, c["p50_ms"], c["p95_ms"]))
        if r.get("neo4j_vector"):
            f = r["neo4j_vector"]
            out["Neo4j vector search (full graph)"].append((size, f["p50_ms"], f["p95_ms"]))
    return {k: sorted(v) for k, v in out.items() if v}


def svg(
    data: dict[str, list[tuple[int, float, float]]],
    title: str,
    colours: dict[str, str] = COLOURS,
    unit: str = "ms per question over HTTP (log)",
    target: float | None = None,
) -> str:
    xs = [p[0] for points in data.values() for p in points]
    ys = [y for points in data.values() for p in points for y in p[1:]]
    ys += [target] if target is not None else []
    x0, x1 = math.log10(min(xs)) - 0.15, math.log10(max(xs)) + 0.15
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - x0) / (x1 - x0) * (W - LEFT - RIGHT)

    def py(y: float) -> float:
        return H - BOTTOM - (math.log10(y) - y0) / (y1 - y0) * (H - TOP - BOTTOM)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{LEFT}" y="22" font-size="14">{title}</text>',
    ]
    for decade in range(y0, y1 + 1):
        for step in (1, 2, 5):
            y = step * 10**decade
            if y > 10**y1:
                break
            parts.append(
                f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py(y):.1f}" y2="{py(y):.1f}" '
                f'stroke="#ddd"/><text x="{LEFT - 6}" y="{py(y) + 4:.1f}" '
                f'text-anchor="end">{y:g}</text>'
            )
    if target is not None:  # a horizontal line: the target the figures are held to
        parts.append(
            f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py(target):.1f}" y2="{py(target):.1f}" '
            f'stroke="#888" stroke-dasharray="2,3"/><text x="{W - RIGHT - 4}" '
            f'y="{py(target) - 5:.1f}" text-anchor="end" fill="#666">target {target:g}</text>'
        )
    for x in sorted(set(xs)):
        label = f"{x // 1000:,}k" if x < 1_000_000 else f"{x // 1_000_000}M"
        parts.append(
            f'<line x1="{px(x):.1f}" x2="{px(x):.1f}" y1="{TOP}" y2="{H - BOTTOM}" '
            f'stroke="#eee"/><text x="{px(x):.1f}" y="{H - BOTTOM + 18}" '
            f'text-anchor="middle">{label}</text>'
        )
    parts.append(
        f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 18}" text-anchor="middle">episodes '
        "(log)</text>"
        f'<text transform="translate(18,{(TOP + H - BOTTOM) / 2}) rotate(-90)" '
        f'text-anchor="middle">{unit}; solid p50, dashed p95</text>'
    )
    for row, (name, points) in enumerate(data.items()):
        colour = colours[name]
        for index, dash in ((1, ""), (2, ' stroke-dasharray="5,4"')):
            path = " ".join(f"{px(p[0]):.1f},{py(p[index]):.1f}" for p in points)
            parts.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>'
            )
            parts.extend(
                f'<circle cx="{px(p[0]):.1f}" cy="{py(p[index]):.1f}" r="3" fill="{colour}"/>'
                for p in points
            )
        y = TOP + 10 + row * 20
        parts.append(
            f'<line x1="{W - RIGHT + 12}" x2="{W - RIGHT + 32}" y1="{y}" y2="{y}" '
            f'stroke="{colour}" stroke-width="3"/><text x="{W - RIGHT + 38}" y="{y + 4}" '
            f'font-size="11">{name}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, nargs="*", default=[])
    parser.add_argument("--recall", type=Path, nargs="*", default=[])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--title", default="Recall latency by corpus size (2 cores, idle)")
    args = parser.parse_args()
    store = [s for path in args.store for s in json.loads(path.read_text())["sizes"]]
    recall = [r for path in args.recall for r in json.loads(path.read_text()).get("recall", [])]
    args.out.write_text(svg(series(store, recall), args.title))


if __name__ == "__main__":
    main()
