"""Redaction where review found it missing: keys, stated environments, ids, unnamed keys,
and three token families. Every secret here survived before."""

from __future__ import annotations

import json
import secrets
import string
from pathlib import Path
from typing import Any

import pytest

from metisgraph.ingest.adapters import Parsed, read_path
from metisgraph.ingest.prepare import prepare_episode
from metisgraph.ingest.records import EnvironmentInput, EpisodeRecord, SnippetRecord, TaskRecord
from metisgraph.ingest.sanitize import marker, redact, redact_value

GITHUB = "ghp_R2d2C3poBB8uKenobiLuke5kywalker00001"
OTHER = "ghp_R2d2C3poBB8uKenobiLuke5kywalker00002"


@pytest.mark.parametrize(
    ("kind", "text", "secret"),
    [
        ("twilio_key", "TWILIO=SK0123456789abcdef0123456789abcdef", "SK0123456789abcdef01234567"),
        ("shopify_token", "X-Shopify-Access-Token: shpat_0123456789abcdef0123456789abcdef",
         "shpat_0123456789abcdef"),
        ("databricks_token", "databricks configure dapi0123456789abcdef0123456789abcdef-2",
         "dapi0123456789abcdef"),
        ("high_entropy", "X=9fJ2kLq8xYz3Wv7Nm1PqR4", "9fJ2kLq8xYz3Wv7Nm1PqR4"),
        ("high_entropy", '{"cfg": "Zq81rTy5UwX0pLm3NbV7cK2d"}', "Zq81rTy5UwX0pLm3NbV7cK2d"),
        ("high_entropy", "deploy --seed: aB3dE6fG9hJ2kL5mN8pQ1rS4", "aB3dE6fG9hJ2kL5mN8pQ1rS4"),
    ],
)  # fmt: skip
def test_a_secret_review_found_surviving_is_redacted(kind: str, text: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text and marker(kind) in result.text, result


@pytest.mark.parametrize(
    "text",
    [
        "request_id=Ab12Cd34Ef56Gh78Ij90Kl12",  # an id, by its name
        "sha256=Zq81rTy5UwX0pLm3NbV7cK2dEe",  # a digest, by its name
        "at org.joda.time.TestCutover::testBug2182444_ausNSW",  # a qualified name
        "key: 3f2a9c1e-4b7d-4e0a-9f1b-2c3d4e5f6a7b",  # a UUID
        "commit: 9fceb02d0ae598e95dc970b74767f19372d61af8",  # hex
        "s3a://bucket/part-00012-baa6a706-3816-4dfa-ba07-0fb56fd38178-c000",  # a path
        "class=AbstractSingletonProxyFactoryBean12",  # code
        "test: test_HTTP_200_OK_GET_WITH_PARAMS",
        "TASK0123456789abcdef0123456789abcdef",  # a Twilio shape glued to a word
    ],
)
def test_ids_digests_paths_and_code_are_not_generated_keys(text: str) -> None:
    assert redact(text).text == text


def test_unnamed_random_keys_are_found_at_the_lengths_keys_have() -> None:
    rng = secrets.SystemRandom(12)
    alphabet = string.ascii_letters + string.digits
    for length, most_missed in ((32, 0.1), (40, 0.05)):
        keys = ["".join(rng.choice(alphabet) for _ in range(length)) for _ in range(400)]
        missed = sum("high_entropy" not in redact(f"X={k}").kinds for k in keys)
        assert missed / len(keys) <= most_missed, (length, missed)


def test_json_keys_are_redacted_and_two_stay_two() -> None:
    value = {GITHUB: 1, OTHER: 2, "nested": [{f"Bearer {GITHUB}": "x"}]}
    redacted = redact_value(value)
    blob = json.dumps(redacted)
    assert GITHUB not in blob and OTHER not in blob
    assert redacted == {
        "[REDACTED:github_token]": 1,
        "[REDACTED:github_token]#2": 2,
        "nested": [{"Bearer [REDACTED:github_token]": "x"}],
    }


def test_facts_and_parameters_keys_never_reach_the_store() -> None:
    record = EpisodeRecord(
        project="p", summary="s", facts={GITHUB: "x"}, action={"parameters": {OTHER: 1}}
    )
    props = prepare_episode(record).props
    assert GITHUB not in props["facts"] and OTHER not in props["action_parameters"]


def test_a_stated_environment_is_redacted_in_every_field() -> None:
    stated = EnvironmentInput(
        os=f"linux {GITHUB}", arch=GITHUB, runtime=f"python-{OTHER}", os_version=GITHUB,
        runtime_version=OTHER, packages={GITHUB: OTHER},
    )  # fmt: skip
    env = prepare_episode(EpisodeRecord(project="p", summary="s", environment=stated)).environment
    assert env is not None
    blob = json.dumps([env.os, env.os_version, env.arch, env.runtime, env.runtime_version,
                       env.packages])  # fmt: skip
    lowered = blob.lower()  # os, arch and runtime are stored in lower case
    assert GITHUB.lower() not in lowered and OTHER.lower() not in lowered, blob
    assert "redacted:github_token" in lowered


def test_record_ids_holding_a_secret_are_stored_redacted_and_distinct() -> None:
    one = EpisodeRecord(project="p", summary="s", id=f"run-{GITHUB}", task_id=f"t-{GITHUB}")
    two = EpisodeRecord(project="p", summary="s", id=f"run-{OTHER}")
    task = TaskRecord(project="p", goal="g", id=f"t-{GITHUB}")
    snippet = SnippetRecord(project="p", code="x = 1", id=GITHUB, episode_id=f"run-{GITHUB}")
    ids = [one.id, one.task_id, two.id, task.id, snippet.id, snippet.episode_id]
    assert all(i and GITHUB not in i and OTHER not in i for i in ids), ids
    assert one.id != two.id and one.task_id == task.id and snippet.episode_id == one.id
    assert EpisodeRecord(project="p", summary="s", id="run-7").id == "run-7"  # others unchanged


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (str(k), *_texts(v))]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


@pytest.mark.shared
@pytest.mark.slow
def test_the_generic_rule_rarely_fires_on_real_records(shared_dir: Path) -> None:
    """Real trajectories and corpora hold (almost) no unnamed keys: hits there are the
    rule's false positives (bench/redaction_hits.py shows them)."""
    sets = ["trajectories", "eval/bugdup-hadoop/corpus.jsonl",
            "eval/trace2fix-defects4j/corpus.jsonl", "eval/memory-locomo/corpus.jsonl"]  # fmt: skip
    records = hits = 0
    for name in sets:
        format = None if name == "trajectories" else "corpus"
        for item in read_path(shared_dir / name, format=format):
            if isinstance(item, Parsed):
                records += 1
                for text in _texts(item.record.model_dump(mode="json")):
                    hits += redact(text).kinds.get("high_entropy", 0)
    assert records > 5000
    assert hits <= records / 1000, (hits, records)


def test_an_id_holding_a_secret_is_answered_redacted_and_still_finds_its_memory(
    gql: Any, project: str
) -> None:
    record = "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id status } }"
    done = gql(record, {"i": {"project": project, "id": f"run-{GITHUB}", "summary": "Deployed"}})
    stored = done["data"]["recordEpisode"]
    assert stored["status"] == "written" and GITHUB not in stored["id"], stored
    forget = "mutation($p: String!, $e: String!) { forget(project: $p, episodeId: $e) { deleted } }"
    assert gql(forget, {"p": project, "e": f"run-{GITHUB}"})["data"]["forget"]["deleted"] == 1
