"""What the learned ranker costs a recall: building the features of a shortlist and scoring
it with the shipped ranker, beside the hand-set order it replaces.

    python bench/ranker_bench.py --candidates 100 --repeat 500

The shortlist is made up (no database): each candidate with two errors with stack frames,
a task shared with a few others, snippets with files and symbols, tools, tags, scores in
every channel — more graph evidence than a real hit carries, so the figure is an upper
bound. Prints the medians (ms) of: features (and the propagation among them: the
personalised PageRank over the shortlist's links), score + terms, and the whole of `rerank`;
and the load average beside them (a figure taken above 1.5 is not a result).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from metisgraph.graph import RecallRequest  # noqa: E402
from metisgraph.graph.channel_registry import CHANNELS  # noqa: E402
from metisgraph.graph.fusion import Candidate  # noqa: E402
from metisgraph.graph.learned_rank import rerank  # noqa: E402
from metisgraph.graph.rank_features import _Evidence, _propagation, candidate_features  # noqa: E402
from metisgraph.graph.ranker import shipped_ranker  # noqa: E402
from metisgraph.graph.recall import Hit  # noqa: E402
from metisgraph.graph.recall_settings import PRESETS  # noqa: E402


def _shortlist(n: int) -> tuple[list[Hit], dict[str, list[Candidate]]]:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    hits = []
    for i in range(n):
        errors = [
            {"key": f"k{(i + j) % 7}", "family": f"f{i % 3}",
             "frames": [f"org.acme.C{(i + f) % 11}.m" for f in range(6)]}
            for j in range(2)
        ]  # fmt: skip
        snippets = [{"files": [f"src/F{i % 9}.java"], "symbols": [f"org.acme.C{i % 5}"]}]
        hits.append(
            Hit(
                episode={"project": "p", "id": f"e{i}", "step": i % 6, "created_at":
                         now - timedelta(days=i), "tags": [f"t:{i % 4}"], "outcome": "success"},
                task={"id": f"task{i // 6}"},
                score=1.0 - i / n,
                relevance=1.0 - i / n,
                channels={c.name: 1.0 - i / n for c in CHANNELS},
                ranks={c.name: i + 1 for c in CHANNELS},
                contributions={},
                trust={"confidence": 1.0, "review": 1.0, "decay": 0.9},
                errors=errors,
                environment={"key": f"env{i % 2}"},
                snippets=snippets,
                tools=[{"name": f"tool{i % 3}"}],
            )
        )  # fmt: skip
    answers = {c.name: [Candidate(("p", f"e{i}"), 1.0 - i / n) for i in range(n)] for c in CHANNELS}
    return hits, answers


def _median_ms(run: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=500)
    args = parser.parse_args()
    hits, answers = _shortlist(args.candidates)
    req = RecallRequest(projects=("p",), text="q", settings=PRESETS["learned"])
    ranker = shipped_ranker()
    table = candidate_features(hits, answers, req)
    load = Path("/proc/loadavg").read_text().split()[:3]
    features = _median_ms(lambda: candidate_features(hits, answers, req), args.repeat)
    score = _median_ms(lambda: (ranker.score(table.matrix), ranker.contributions(table.matrix)),
                       args.repeat)  # fmt: skip
    whole = _median_ms(lambda: rerank(hits, answers, req), args.repeat)
    evidence = [_Evidence.of(h) for h in hits]
    walk = _median_ms(lambda: _propagation(hits, evidence, req), args.repeat)
    print(f"candidates {args.candidates}, repeat {args.repeat}, load {' '.join(load)}")
    print(f"features median {features:.3f} ms (of which the personalised PageRank {walk:.3f} ms)")
    print(f"score + terms median {score:.3f} ms")
    print(f"rerank (features + score + terms) median {whole:.3f} ms")


if __name__ == "__main__":
    main()
