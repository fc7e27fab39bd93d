"""How long `metisgraph --help` takes to start, and which heavy libraries it loads.

    .venv/bin/python bench/cli_start.py [--runs 15] [--command "--help"]

Runs the installed console script RUNS times (one warm-up first) and prints the median and
spread of the wall time, then, in one more process, which of the heavy imports (the embedding
model's torch and sentence-transformers, ONNX Runtime, Neo4j's driver, strawberry, Starlette)
the command left in sys.modules. Run it under `cpu bench`; the load average goes beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HEAVY = (
    "torch",
    "sentence_transformers",
    "onnxruntime",
    "neo4j",
    "strawberry",
    "starlette",
    "numpy",
)

# The console script's own start, in one process, reporting what it imported.
PROBE = """
import json, sys
sys.argv = ["metisgraph", *json.loads(sys.argv[1])]
from metisgraph.api.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps({"loaded": [m for m in HEAVY if m in sys.modules],
                  "modules": len(sys.modules)}), file=sys.stderr)
"""


def _script() -> str:
    found = shutil.which("metisgraph", path=os.path.dirname(sys.executable))
    if found is None:
        raise SystemExit("no metisgraph console script beside this python: run `make install`")
    return found


def time_runs(arguments: list[str], runs: int) -> list[float]:
    command = [_script(), *arguments]
    subprocess.run(command, capture_output=True, check=True)  # warm the file cache
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        seconds.append(time.perf_counter() - start)
    return seconds


def loaded(arguments: list[str]) -> dict[str, object]:
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(arguments)],
        capture_output=True,
        text=True,
        check=True,
    )
    last = done.stderr.strip().splitlines()[-1]
    return dict(json.loads(last))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--command", default="--help", help="the arguments, space-separated")
    options = parser.parse_args()
    arguments = options.command.split()
    seconds = time_runs(arguments, options.runs)
    probe = loaded(arguments)
    load = os.getloadavg()
    print(
        json.dumps(
            {
                "command": f"metisgraph {options.command}",
                "runs": options.runs,
                "median_s": round(statistics.median(seconds), 3),
                "min_s": round(min(seconds), 3),
                "max_s": round(max(seconds), 3),
                "heavy_loaded": probe["loaded"],
                "modules_loaded": probe["modules"],
                "load_average": load,
            }
        )
    )


if __name__ == "__main__":
    main()
