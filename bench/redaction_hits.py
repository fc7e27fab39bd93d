"""What redaction takes out of real records that hold no planted secret: its false positives.

    python bench/redaction_hits.py                  # counts per set and kind
    python bench/redaction_hits.py --show 40        # and up to 40 hits of --kind, in context
    python bench/redaction_hits.py --kind high_entropy --json

Reads the shared trajectories and the retrieval corpora (METISGRAPH_SHARED_DIR, default
../shared) through the product's own adapters, and redacts every text of every record as
ingest does (``redact_value`` of the record). A hit is one secret replaced. The generic
rule (``high_entropy``) is the one without a name or a shape to go by; its hits are the
ones to read: a real credential, a random id (harmless to lose: the abstraction would
give it a placeholder), or a word lost (a false positive that costs recall).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

from metisgraph.ingest.adapters import Parsed, read_path  # noqa: E402
from metisgraph.ingest.sanitize import marker, redact  # noqa: E402

_SETS = (
    ("trajectories", "trajectories", None),
    ("bugdup-hadoop", "eval/bugdup-hadoop/corpus.jsonl", "corpus"),
    ("trace2fix-defects4j", "eval/trace2fix-defects4j/corpus.jsonl", "corpus"),
    ("memory-locomo", "eval/memory-locomo/corpus.jsonl", "corpus"),
)


def _texts(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def measure(shared: Path, kind: str, show: int) -> dict[str, object]:
    report: dict[str, object] = {}
    shown: list[dict[str, str]] = []
    tag = re.escape(marker(kind))
    for name, relative, format in _SETS:
        records = texts = 0
        kinds: Counter[str] = Counter()
        for item in read_path(shared / relative, format=format):
            if not isinstance(item, Parsed):
                continue
            records += 1
            for text in _texts(item.record.model_dump(mode="json")):
                texts += 1
                result = redact(text)
                kinds.update(result.kinds)
                for hit in re.finditer(tag, result.text) if kind in result.kinds else ():
                    if len(shown) < show:
                        around = result.text[max(0, hit.start() - 60) : hit.end() + 30]
                        shown.append({"set": name, "context": around.replace("\n", " ")})
        report[name] = {"records": records, "texts": texts, "hits": dict(kinds.most_common())}
    report["shown"] = shown
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="high_entropy", help="the marker kind to show")
    parser.add_argument("--show", type=int, default=0, help="how many hits to show")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    shared = Path(os.environ.get("METISGRAPH_SHARED_DIR", ROOT.parent / "shared"))
    report = measure(shared, args.kind, args.show)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, _, _ in _SETS:
        row = report[name]
        assert isinstance(row, dict)
        print(f"{name}: {row['records']} records, {row['texts']} texts; hits {row['hits']}")
    for hit in report["shown"]:  # type: ignore[attr-defined]
        print(f"  [{hit['set']}] …{hit['context']}…")


if __name__ == "__main__":
    main()
