"""Mutated copies of real records, fed through the real ingest path, and what must hold after.

Seeds are real: the eval corpora and the agent trajectories of ../shared when it is there
(trajectories as the native records their adapters make of them), else the repository's own
fixtures and demo memory. Each output line is a seed copy with 0–3 mutations: truncation,
wrong types, bad unicode, huge and deep values, duplicate ids, missing and unknown fields,
out-of-range numbers, invalid UTF-8. A seeded ``random.Random``: a run is reproducible
from its seed, which every failure message names.

``check`` holds the pipeline to: no exception escapes; every line is either refused with
a reason naming it or written; every record that must be written is in the graph (the
last version of a duplicated id, by content hash); every line that must be refused is.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metisgraph.ingest.adapters import Parsed, Refused, SourceRef, read_path
from metisgraph.ingest.adapters.corpus import corpus_episode
from metisgraph.ingest.records import EpisodeRecord, SnippetRecord, TaskRecord

REPO_FIXTURES = Path(__file__).resolve().parent / "fixtures"
DEMO = Path(__file__).resolve().parents[1] / "ingest" / "demo" / "episodes.jsonl"

# What a mutated line must become: written, refused, or either (but never lost or a crash).
MUST_WRITE, MUST_REFUSE, EITHER = "write", "refuse", "either"

_TEXT_FIELDS = {
    "native": ("summary", "title", "reasoning", "observation", "error", "goal", "code"),
    "corpus": ("text", "title", "error", "code"),
}
_SURPRISES = [
    "\ud800",  # a lone high surrogate
    "\udfff tail",
    "\x00",
    "\ufeff",
    "\u202e\u2066reversed\u2069",
    "e\u0301" * 500,  # combining marks
    "\u200b\u200d" * 200,
    "🧠🔥" * 300,
    "\uffff\ufffe",
    "\x1b[31mred\x1b[0m",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
]
_SAFE_SURPRISES = _SURPRISES[3:]  # text that is odd but valid: it must be stored


@dataclass
class Line:
    """One line of a mutated file: the text written, what was done to it, what must happen."""

    fmt: str  # native | corpus
    text: bytes
    mutations: list[str]
    expect: str
    record: dict[str, Any] | None  # the mutated object (None when the line is not JSON)


@dataclass
class Seeds:
    native: list[dict[str, Any]] = field(default_factory=list)
    corpus: list[dict[str, Any]] = field(default_factory=list)


# --- seeds ------------------------------------------------------------------------------------


def _jsonl(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    out = []
    with path.open(encoding="utf-8") as handle:
        for text in handle:
            try:
                value = json.loads(text)
            except ValueError:
                continue  # a fixture's deliberately broken line: not a seed
            if isinstance(value, dict):
                out.append(value)
            if limit is not None and len(out) >= limit:
                break
    return out


def _as_native(item: Parsed) -> dict[str, Any]:
    record = item.record
    data = record.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    data["record_type"] = record.record_type
    return data


def _native_from(path: Path) -> list[dict[str, Any]]:
    return [_as_native(i) for i in read_path(path, project="seed") if isinstance(i, Parsed)]


def load_seeds(shared: Path | None, per_corpus: int = 400) -> Seeds:
    """Real records to mutate: ../shared when given, else the repository's own fixtures."""
    seeds = Seeds()
    if shared is not None:
        for name in ("bugdup-hadoop", "trace2fix-defects4j", "memory-locomo"):
            corpus = shared / "eval" / name / "corpus.jsonl"
            if corpus.is_file():
                seeds.corpus += _jsonl(corpus, per_corpus)
        trajectories = shared / "trajectories"
        for folder in sorted(p for p in trajectories.iterdir() if p.is_dir()):
            seeds.native += _native_from(folder)
    seeds.corpus += _jsonl(REPO_FIXTURES / "records" / "corpus.jsonl")
    seeds.native += _jsonl(REPO_FIXTURES / "records" / "native.jsonl")
    seeds.native += _jsonl(DEMO)
    for folder in sorted((REPO_FIXTURES / "trajectories").iterdir()):
        seeds.native += _native_from(folder)
    seeds.native = [r for r in seeds.native if _valid_native(r)]
    # The repository's corpus fixture holds deliberately bad lines (tags as one string) for
    # the adapter's own tests: a seed must be one the reader writes.
    ref = SourceRef("seed.jsonl", 1)
    seeds.corpus = [r for r in seeds.corpus if isinstance(corpus_episode(r, ref), Parsed)]
    return seeds


def _valid_native(record: dict[str, Any]) -> bool:
    model = {"task": TaskRecord, "snippet": SnippetRecord}.get(record.get("record_type", ""))
    try:
        (model or EpisodeRecord).model_validate({**record, "project": "seed"})
    except ValueError:
        return False
    return True


# --- mutations --------------------------------------------------------------------------------


def _words(rng: random.Random, chars: int) -> str:
    vocabulary = ["heap", "timeout", "retry", "kubectl", "segfault", "/var/log", "ORA-04031"]
    block = " ".join(rng.choice(vocabulary) + str(rng.randrange(10_000)) for _ in range(400))
    return (block + " ") * (chars // (len(block) + 1)) + block[: chars % (len(block) + 1)]


def _deep(rng: random.Random, depth: int) -> str:
    """A placeholder for a value nested ``depth`` deep; ``_serialise`` writes it out (the
    json module itself cannot write what it cannot read back)."""
    return f"@@deep:{depth}:{rng.randrange(1 << 30)}@@"


_DEEP = re.compile(r'"@@deep:(\d+):(\d+)@@"')


def _nested(match: re.Match[str]) -> str:
    depth, pattern = int(match.group(1)), random.Random(int(match.group(2)))
    opens = [pattern.random() < 0.5 for _ in range(depth)]
    head = "".join('{"k": ' if is_map else "[" for is_map in opens)
    tail = "".join("}" if is_map else "]" for is_map in reversed(opens))
    return f'{head}"bottom"{tail}'


def _other_type(rng: random.Random, value: Any) -> Any:
    choices: list[Any] = [42, -1.5, True, None, [value], {"value": value}, "", 10**30]
    return rng.choice([c for c in choices if type(c) is not type(value)])


Mutation = Callable[[random.Random, str, dict[str, Any]], tuple[str, str]]


def _text_field(rng: random.Random, fmt: str, record: dict[str, Any]) -> str:
    present = [f for f in _TEXT_FIELDS[fmt] if isinstance(record.get(f), str)]
    return rng.choice(present or [_required(fmt, record)])


def _required(fmt: str, record: dict[str, Any]) -> str:
    """The field a record cannot be without: its text."""
    if fmt == "corpus":
        return "text"
    return {"task": "goal", "snippet": "code"}.get(record.get("record_type", ""), "summary")


def m_wrong_type(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    name = rng.choice([k for k in record if k != "record_type"] or ["id"])
    value = record[name] = _other_type(rng, record.get(name))
    if fmt == "native":
        must = name == _required(fmt, record) and not (isinstance(value, str) and value.strip())
    else:  # a corpus text field holding anything but text or null
        must = name in _TEXT_FIELDS[fmt] + ("kind",) and not isinstance(value, str | None)
    return f"wrong_type:{name}", MUST_REFUSE if must else EITHER


def m_bad_unicode(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    name = _text_field(rng, fmt, record)
    surprise = rng.choice(_SURPRISES)
    text = str(record.get(name) or "x")
    at = rng.randrange(len(text) + 1)
    record[name] = text[:at] + surprise + text[at:]
    return f"unicode:{name}:{surprise[:2]!r}", MUST_WRITE if surprise in _SAFE_SURPRISES else EITHER


def m_huge(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    shape = rng.choice(["text", "text", "tags", "facts"])
    if shape == "text":
        name = _text_field(rng, fmt, record)
        record[name] = _words(rng, rng.choice([50_000, 150_000, 400_000, 1_200_000]))
        return f"huge:{name}", EITHER
    if shape == "tags":
        record["tags"] = [f"k{i}:v{i}" for i in range(rng.choice([500, 5_000]))]
        return "huge:tags", EITHER
    key = "facts" if fmt == "native" else "extra"
    record[key] = {f"f{i}": f"value {i}" for i in range(rng.choice([1_000, 10_000]))}
    return f"huge:{key}", EITHER


def m_deep(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    depth = rng.choice([30, 200, 600, 1_500, 5_000])
    if fmt == "native" and record.get("record_type", "episode") == "episode":
        target = rng.choice(["facts", "action", "environment"])
        if target == "action":
            record["action"] = {
                "type": "command",
                "command": "ls",
                "parameters": {"d": _deep(rng, depth)},
            }
        elif target == "environment":
            record["environment"] = {"packages": _deep(rng, depth)}
        else:
            record["facts"] = {"d": _deep(rng, depth)}
        return f"deep:{target}:{depth}", EITHER
    record["nested"] = _deep(rng, depth)
    return f"deep:nested:{depth}", EITHER


def m_drop(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    name = rng.choice([k for k in record if k != "record_type"] or ["id"])
    record.pop(name, None)
    must = name == ("id" if fmt == "corpus" else _required(fmt, record))
    return f"drop:{name}", MUST_REFUSE if must else EITHER


def m_unknown_field(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    record[f"surprise_{rng.randrange(100)}"] = "value"
    # The native format forbids unknown fields; the corpus keeps them as facts.
    return "unknown_field", MUST_REFUSE if fmt == "native" else MUST_WRITE


def m_blank(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    name = _text_field(rng, fmt, record)
    record[name] = rng.choice(["", "   ", "\n\t"])
    return f"blank:{name}", EITHER


def m_numbers(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    name = rng.choice(["step", "confidence", "created_at", "id"])
    record[name] = rng.choice([-1, 2**63, 1e308, float("nan"), float("inf"), "high", 0.5])
    return f"number:{name}", EITHER


def m_emoji_ok(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    name = _text_field(rng, fmt, record)
    record[name] = f"{record.get(name) or 'text'} {rng.choice(_SAFE_SURPRISES)}"
    return f"odd_but_valid:{name}", MUST_WRITE


def m_long_name(rng: random.Random, fmt: str, record: dict[str, Any]) -> tuple[str, str]:
    """A name that ends up as a key or in a range index: a package, a language, a program, an
    identifier, a tag value, an id."""
    # Long but made of words: one 9,000-character token costs seconds in some extraction
    # regexes (docs/reliability.md), a cost measured apart from this harness.
    long = "xy " * rng.choice([200, 3_000, 13_000])
    where = rng.choice(["package", "language", "program", "identifier", "tag", "id", "task_id"])
    if where == "package":
        record["environment"] = {"packages": {long: "1.0"}}
    elif where == "language":
        record["snippets" if fmt == "native" else "code_language"] = [
            {"code": "print(1)", "language": long}
        ]
    elif where == "program":
        record["action"] = {"type": "command", "command": f"{'x' * 600} --help"}
    elif where == "identifier":
        code = f"def {'x' * 600}():\n    return 1\n"
        record["snippets"] = [{"code": code, "language": "python"}]
    elif where == "tag":
        record["tags"] = [f"k{i}:{long[:250]}" for i in range(rng.choice([3, 20]))]
    else:
        record[where] = long
    return f"long_name:{where}:{len(long)}", EITHER


MUTATIONS: list[Mutation] = [
    m_wrong_type,
    m_bad_unicode,
    m_huge,
    m_deep,
    m_drop,
    m_unknown_field,
    m_blank,
    m_numbers,
    m_emoji_ok,
    m_long_name,
]


def _serialise(record: dict[str, Any]) -> bytes:
    # Lone surrogates and NaN are written as JSON does (\ud800, NaN), as a broken producer would.
    return _DEEP.sub(_nested, json.dumps(record, ensure_ascii=True)).encode()


_FIELDS = {
    kind: set(model.model_fields)
    for kind, model in (
        ("task", TaskRecord),
        ("snippet", SnippetRecord),
        ("episode", EpisodeRecord),
    )
}


def must_refuse(fmt: str, record: dict[str, Any]) -> bool:
    """What the input format says of a record however it was made: no text, an unknown
    field (native), no usable id or a text field that is not text (corpus)."""
    text = record.get(_required(fmt, record))
    if fmt == "corpus":
        ident = record.get("id")
        bad_id = not isinstance(ident, str | int) or isinstance(ident, bool) or ident == ""
        not_text = [
            f for f in (*_TEXT_FIELDS[fmt], "kind") if not isinstance(record.get(f), str | None)
        ]
        has_text = any(
            isinstance(record.get(f), str) and record[f].strip() for f in ("text", "title")
        )
        return bad_id or bool(not_text) or not has_text
    kind = record.get("record_type", "episode")
    unknown = set(record) - _FIELDS.get(kind, set())
    return bool(unknown) or not (isinstance(text, str) and text.strip())


def _line(rng: random.Random, fmt: str, seed: dict[str, Any], project: str) -> Line:
    record = json.loads(json.dumps(seed))
    record["project"] = project
    mutations: list[str] = []
    verdicts: set[str] = set()
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        name, verdict = rng.choice(MUTATIONS)(rng, fmt, record)
        mutations.append(name)
        verdicts.add(verdict)
    if must_refuse(fmt, record):
        expect = MUST_REFUSE
    else:
        expect = MUST_WRITE if verdicts <= {MUST_WRITE} else EITHER
    text = _serialise(record)
    roll = rng.random()
    if roll < 0.04:
        text = text[: rng.randrange(1, max(2, len(text) - 1))]
        return Line(fmt, text, [*mutations, "truncated"], MUST_REFUSE, None)
    if roll < 0.06:
        at = rng.randrange(len(text))
        text = text[:at] + b"\xff\xfe" + text[at:]
        return Line(fmt, text, [*mutations, "invalid_utf8"], MUST_REFUSE, None)
    return Line(fmt, text, mutations, expect, record)


def mutated_lines(seeds: Seeds, count: int, project: str, seed: int) -> Iterator[Line]:
    """``count`` lines: mutated seed copies, with some duplicated ids among them."""
    rng = random.Random(seed)
    emitted: list[Line] = []
    for _ in range(count):
        if emitted and rng.random() < 0.05:
            earlier = rng.choice(emitted)
            if earlier.record is not None and "id" in earlier.record:
                again = dict(earlier.record)
                summary = again.get("summary")
                # Appending to a blank summary would make a refused record valid: the copy
                # keeps its original's expectation, so only a real summary is changed.
                if rng.random() < 0.5 and isinstance(summary, str) and summary.strip():
                    again["summary"] += " (recorded again, changed)"
                line = Line(earlier.fmt, _serialise(again), ["duplicate_id"], earlier.expect, again)
                emitted.append(line)
                yield line
                continue
        fmt = "corpus" if seeds.corpus and rng.random() < 0.4 else "native"
        line = _line(rng, fmt, rng.choice(getattr(seeds, fmt)), project)
        emitted.append(line)
        yield line


def write_files(lines: list[Line], folder: Path) -> dict[str, tuple[Path, list[Line]]]:
    """One JSONL file per format; returns format -> (path, its lines in file order)."""
    out: dict[str, tuple[Path, list[Line]]] = {}
    for fmt in ("native", "corpus"):
        mine = [line for line in lines if line.fmt == fmt]
        path = folder / f"fuzz-{fmt}.jsonl"
        path.write_bytes(b"".join(line.text + b"\n" for line in mine))
        out[fmt] = (path, mine)
    return out


# --- the oracle ----------------------------------------------------------------------------


@dataclass
class Verdicts:
    """What the reader and the pipeline made of each line, by file and line number."""

    refused: dict[tuple[str, int], list[Refused]] = field(default_factory=dict)
    parsed: dict[tuple[str, int], list[Parsed]] = field(default_factory=dict)

    def add(self, item: Parsed | Refused) -> None:
        where = (item.ref.file, item.ref.line or 0)
        target = self.refused if isinstance(item, Refused) else self.parsed
        target.setdefault(where, []).append(item)  # type: ignore[arg-type]


def read_items(
    files: dict[str, tuple[Path, list[Line]]],
) -> tuple[list[Parsed | Refused], Verdicts]:
    verdicts = Verdicts()
    items: list[Parsed | Refused] = []
    for fmt, (path, _) in files.items():
        for item in read_path(path, format=fmt):
            verdicts.add(item)
            items.append(item)
    return items, verdicts
