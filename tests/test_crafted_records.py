"""One crafted record is one refusal: the rest of its batch is written, through every door.

A lone surrogate in a free-text field, or facts nested hundreds deep, once escaped the
prepare worker (UnicodeEncodeError in the content hash, RecursionError in redaction) and
stopped the whole ingest at the same record on every re-run.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from metisgraph.ingest.adapters import MAX_DEPTH, Parsed, Refused, SourceRef, validate_record
from metisgraph.ingest.pipeline import DeadLetter, Ingestor
from metisgraph.ingest.records import EpisodeRecord

LONE = "\ud800"  # half of a surrogate pair: a str in Python, not Unicode text


def _nested(depth: int, leaf: object = "x") -> object:
    value = leaf
    for _ in range(depth):
        value = {"k": value}
    return value


def _crafted(project: str) -> list[tuple[str, dict[str, Any], str]]:
    """(id, record, the field its refusal must name)."""
    base = {"project": project, "summary": "A step that was taken"}
    return [
        ("s-title", {**base, "title": f"stuck {LONE} here"}, "title"),
        ("s-reasoning", {**base, "reasoning": LONE}, "reasoning"),
        ("s-command", {**base, "action": {"command": f"ls {LONE}"}}, "action.command"),
        ("s-observation", {**base, "observation": f"ok{LONE}"}, "observation"),
        ("s-error", {**base, "error": LONE}, "error"),
        ("s-fact-key", {**base, "facts": {f"k{LONE}": 1}}, "facts.k\\ud800"),
        ("deep-facts", {**base, "facts": _nested(600)}, "facts.k"),
        ("deep-params", {**base, "action": {"parameters": _nested(600)}}, "action.parameters"),
    ]


@pytest.mark.parametrize("case", range(8))
def test_each_hazard_is_refused_naming_its_field(case: int) -> None:
    ident, raw, field = _crafted("p")[case]
    item = validate_record({**raw, "id": ident}, SourceRef("f.jsonl", 3))
    assert isinstance(item, Refused)
    assert [e.field for e in item.errors] == [field]
    reason = item.errors[0].message
    assert ("lone surrogate (U+D800" in reason) or (f"more than {MAX_DEPTH} levels" in reason)
    item.describe().encode()  # printable: the surrogate is shown as its escape


def test_nesting_up_to_the_limit_is_accepted() -> None:
    raw = {"project": "p", "summary": "s", "facts": _nested(MAX_DEPTH - 1)}
    assert isinstance(validate_record(raw, SourceRef("f")), Parsed)


def _lines(project: str) -> list[str]:
    good = {"project": project, "summary": "Cleared the stale cache", "outcome": "success"}
    rows = [json.dumps({**good, "id": "good-1"})]
    rows += [json.dumps({**raw, "id": ident}) for ident, raw, _ in _crafted(project)]
    rows.append(json.dumps({**good, "id": "good-2", "summary": "Restarted the worker"}))
    return rows


async def _stored(store: Any, project: str) -> list[str]:
    rows = await store.run_text(
        "MATCH (e:Episode {project: $p}) RETURN e.id AS id ORDER BY id", {"p": project}, read=True
    )
    return [r["id"] for r in rows]


@pytest.mark.anyio
async def test_the_cli_writes_the_rest_and_keeps_each_refusal_redacted(
    store: Any, cli_in_process: Any, project: str, tmp_path: Path
) -> None:
    source = tmp_path / "crafted.jsonl"
    secret = "ghp_" + "A1b2C3d4" * 5
    lines = _lines(project)
    bad = {"project": project, "summary": f"pushed with {secret}", "outcome": "maybe"}
    lines.insert(len(lines) - 1, json.dumps(bad))
    source.write_text("\n".join(lines) + "\n")
    dead = tmp_path / "dead.jsonl"
    # in this process (test_ingest_pipeline runs `metisgraph ingest` as its own process)
    result = cli_in_process("ingest", str(source), "--dead-letter", str(dead), "--quiet")
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert await _stored(store, project) == ["good-1", "good-2"]
    assert stat.S_IMODE(dead.stat().st_mode) == 0o600
    text = dead.read_text(encoding="utf-8")
    assert secret not in text and "[REDACTED:github_token]" in text
    kept = [json.loads(line) for line in text.splitlines()]
    assert [k["line"] for k in kept] == list(range(2, len(lines)))  # every refusal, in order
    assert kept[0]["raw"]["title"] == f"stuck {LONE} here"  # kept exactly, as JSON escapes
    assert kept[6]["errors"][0]["field"] == "facts.k"
    assert "cut here" in json.dumps(kept[6]["raw"])  # the deep part itself is not kept
    assert kept[-1]["errors"][0]["field"] == "outcome"
    assert f"{source}:2: field 'title'" in result.stderr


@pytest.mark.anyio
async def test_a_record_whose_preparation_fails_is_refused_alone(
    store: Any, embedder: Any, project: str
) -> None:
    # model_construct skips validation: a record a future check misses, as the fuzzer makes.
    bad = EpisodeRecord.model_construct(
        **{**EpisodeRecord(project=project, summary="x").__dict__, "title": LONE, "id": "bad"}
    )
    good = [EpisodeRecord(project=project, id=f"ok-{n}", summary=f"Step {n}") for n in (1, 2)]
    items = [Parsed(good[0], SourceRef("t", 1)), Parsed(bad, SourceRef("t", 2)),
             Parsed(good[1], SourceRef("t", 3))]  # fmt: skip
    summary = await Ingestor(store, embedder).ingest(items)
    assert (summary.read, summary.written, summary.refused) == (3, 2, 1)
    assert summary.refusals[0].ref == SourceRef("t", 2)
    assert "could not be prepared (UnicodeEncodeError)" in summary.refusals[0].describe()
    assert await _stored(store, project) == ["ok-1", "ok-2"]


RECORD_MANY = """
mutation($inputs: [EpisodeInput!]!) {
  recordEpisodes(inputs: $inputs) { written refused results { id status errors { field } } }
}"""


def test_record_episodes_writes_the_rest_of_the_list(client: Any, project: str) -> None:
    inputs = [json.loads(line) for line in _lines(project)]
    # JSON escapes, as a client sends a lone surrogate (it cannot be encoded as UTF-8).
    body = json.dumps({"query": RECORD_MANY, "variables": {"inputs": inputs}}, ensure_ascii=True)
    response = client.post("/graphql", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    result = response.json()["data"]["recordEpisodes"]
    assert (result["written"], result["refused"]) == (2, len(inputs) - 2)
    statuses = [(r["id"], r["status"]) for r in result["results"]]
    assert statuses[0] == ("good-1", "written") and statuses[-1] == ("good-2", "written")
    fields = [r["errors"][0]["field"] for r in result["results"][1:-1]]
    assert fields == [field for _, _, field in _crafted(project)]


def test_the_dead_letter_file_is_narrowed_when_it_exists(tmp_path: Path) -> None:
    path = tmp_path / "dead.jsonl"
    path.write_text("")
    path.chmod(0o644)
    letters = DeadLetter.open(path)
    raw = {"summary": "x", "facts": {"password": "hunter2-but-longer"}}
    letters.keep(Refused(SourceRef("f", 1), raw, ()))
    letters.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "hunter2" not in path.read_text()


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"record_type": "task", "project": "p", "id": "t", "goal": " \t "}, "goal"),
        ({"project": "p", "id": "e", "summary": "\n \n"}, "summary"),
    ],
)
def test_a_goal_or_summary_of_blanks_is_refused(raw: dict[str, Any], field: str) -> None:
    """Found by the 10,000-record fuzz: a task whose goal was blanks was written."""
    item = validate_record(raw, SourceRef("f.jsonl", 7))
    assert isinstance(item, Refused)
    assert [e.field for e in item.errors] == [field]
    assert item.errors[0].message == f"{field} must not be blank"
    kept = validate_record({**raw, field: " fix the build "}, SourceRef("f.jsonl", 8))
    assert not isinstance(kept, Refused)
