"""Environment extraction: OS, runtime and packages from observations, as a stable fingerprint."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from metisgraph.ingest.environment import (
    EnvironmentFingerprint,
    extract_environment,
    fingerprint,
    normalize_package,
)
from metisgraph.ingest.records import EnvironmentInput
from metisgraph.ingest.sanitize.abstraction import sanitize

FIELDS = ("os", "os_version", "arch", "runtime", "runtime_version", "packages")


def _cases(fixtures_dir: Path) -> list[dict[str, Any]]:
    lines = (fixtures_dir / "text" / "environments.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _fields(env: EnvironmentFingerprint | None) -> dict[str, object]:
    assert env is not None
    return {name: getattr(env, name) for name in FIELDS}


def test_each_fixture_environment_is_extracted(fixtures_dir: Path) -> None:
    cases = _cases(fixtures_dir)
    assert len(cases) >= 8
    for case in cases:
        assert _fields(extract_environment(case["texts"])) == case["expected"], case["name"]


def test_extraction_reads_sanitized_text_the_same(fixtures_dir: Path) -> None:
    # the pipeline extracts from what it stores: text with hosts and times abstracted
    for case in _cases(fixtures_dir):
        raw = extract_environment(case["texts"])
        clean = extract_environment([sanitize(text).text for text in case["texts"]])
        assert clean == raw, case["name"]


def test_nothing_known_gives_none() -> None:
    assert extract_environment([]) is None
    assert extract_environment(["ls -la", "total 0", ""]) is None
    assert extract_environment(["nothing"], EnvironmentInput()) is None


def test_code_that_looks_like_pins_is_not_a_package_list() -> None:
    code = "def f(x):\n    if x==1:\n        return x >= 2\nassert y==3\nresult = a<=4\n"
    assert extract_environment([code]) is None


def test_the_key_is_a_stable_hash_of_every_field() -> None:
    one = fingerprint("ubuntu", "22.04", "x86_64", "python", "3.11.7", {"a": "1", "b": "2"})
    again = fingerprint("ubuntu", "22.04", "x86_64", "python", "3.11.7", {"b": "2", "a": "1"})
    assert one == again and re.fullmatch("[0-9a-f]{64}", one.key)
    variants = [
        fingerprint("debian", "22.04", "x86_64", "python", "3.11.7", {"a": "1", "b": "2"}),
        fingerprint("ubuntu", "24.04", "x86_64", "python", "3.11.7", {"a": "1", "b": "2"}),
        fingerprint("ubuntu", "22.04", "arm64", "python", "3.11.7", {"a": "1", "b": "2"}),
        fingerprint("ubuntu", "22.04", "x86_64", "python", "3.12.1", {"a": "1", "b": "2"}),
        fingerprint("ubuntu", "22.04", "x86_64", "python", "3.11.7", {"a": "1", "b": "3"}),
        fingerprint("ubuntu", "22.04", "x86_64", "python", "3.11.7", {"a": "1"}),
    ]
    assert len({v.key for v in variants} | {one.key}) == len(variants) + 1


def test_explicit_fields_win_and_carry_their_own_consequences() -> None:
    texts = [
        "Python 3.9.1",
        "Linux box-1 5.15.0-91-generic #1 SMP x86_64 GNU/Linux",
        "numpy==1.24.0",
    ]
    stated = EnvironmentInput(
        os="Ubuntu",
        runtime="CPython",
        runtime_version="3.11",
        packages={
            "NumPy": "1.26.4",
            "Django_Rest.Framework": "3.15",
            "org.slf4j:slf4j-api": "2.0.9",
        },
    )
    assert _fields(extract_environment(texts, stated)) == {
        "os": "ubuntu",
        "os_version": None,  # the kernel release belonged to the extracted "linux"
        "arch": "x86_64",
        "runtime": "python",
        "runtime_version": "3.11",
        "packages": {
            "numpy": "1.26.4",
            "django-rest-framework": "3.15",
            "org.slf4j:slf4j-api": "2.0.9",
        },
    }


def test_secrets_in_stated_fields_are_redacted() -> None:
    token = "ghp_" + "Q7x" * 12
    stated = EnvironmentInput(
        runtime="python",
        runtime_version=f"3.11 password={token}",
        packages={"internal-sdk": f"git+https://ci:{token}@git.example.com/sdk.git"},
    )
    fingerprint = extract_environment([], stated)
    assert fingerprint is not None
    stored = str(_fields(fingerprint))
    assert token not in stored and "REDACTED" in stored
    assert _fields(fingerprint)["runtime"] == "python"


def test_an_explicit_other_runtime_drops_the_extracted_version() -> None:
    env = extract_environment(["Python 3.9.1"], EnvironmentInput(runtime="java"))
    assert env is not None and (env.runtime, env.runtime_version) == ("java", None)


def test_a_direct_statement_beats_an_inference_whatever_the_order() -> None:
    path = 'File "/usr/lib/python3.8/site-packages/x.py", line 3'
    for texts in ([path, "Python 3.11.7"], ["Python 3.11.7", path]):
        env = extract_environment(texts)
        assert env is not None and env.runtime_version == "3.11.7"


def test_a_range_never_overrides_an_exact_version() -> None:
    env = extract_environment(["requests==2.31.0", "requests>=2.28,<3"])
    assert env is not None and env.packages == {"requests": "2.31.0"}
    only_range = extract_environment(["requests>=2.28, <3  # http"])
    assert only_range is not None and only_range.packages == {"requests": ">=2.28,<3"}


@pytest.mark.parametrize(
    ("name", "ecosystem", "expected"),
    [
        ("Django", "python", "django"),
        ("zope.interface", "python", "zope-interface"),
        ("typing__Extensions", "python", "typing-extensions"),
        ("lodash.merge", "npm", "lodash.merge"),
        ("@Babel/Core", "npm", "@babel/core"),
        ("org.slf4j:slf4j-api", "maven", "org.slf4j:slf4j-api"),
    ],
)
def test_normalize_package(name: str, ecosystem: str, expected: str) -> None:
    assert normalize_package(name, ecosystem) == expected


python_names = st.from_regex(
    r"[A-Za-z][A-Za-z0-9]{0,8}(?:[-_.][A-Za-z0-9]{1,6}){0,2}", fullmatch=True
)
versions = st.from_regex(
    r"[0-9]{1,3}(?:\.[0-9]{1,3}){0,3}(?:(?:a|b|rc|\.post|\.dev)[0-9]{1,2})?", fullmatch=True
)


@settings(deadline=None)
@given(
    packages=st.dictionaries(python_names, versions, min_size=1, max_size=15),
    data=st.data(),
)
@pytest.mark.slow
def test_a_pip_freeze_round_trips_in_any_order(
    packages: dict[str, str], data: st.DataObject
) -> None:
    expected = {normalize_package(name): version for name, version in packages.items()}
    assume(len(expected) == len(packages))  # Foo_Bar and foo.bar are one package
    lines = [f"{name}=={version}" for name, version in packages.items()]
    shuffled = extract_environment(["\n".join(data.draw(st.permutations(lines)))])
    ordered = extract_environment(["\n".join(lines)])
    assert shuffled is not None and ordered is not None
    assert shuffled.packages == expected
    assert shuffled.key == ordered.key


@pytest.mark.shared
def test_real_trajectories_name_their_python(shared_dir: Path) -> None:
    runtimes: set[tuple[str | None, str | None]] = set()
    for path in sorted((shared_dir / "trajectories").rglob("*.traj.json")):
        for message in json.loads(path.read_text()).get("messages", []):
            content = message.get("content")
            env = (
                extract_environment([sanitize(content).text]) if isinstance(content, str) else None
            )
            if env is not None:
                runtimes.add((env.runtime, env.runtime_version))
    versions = {version for runtime, version in runtimes if runtime == "python"}
    assert versions, "pytest headers in the trajectories name a Python"
    assert all(version and re.fullmatch(r"3\.\d+(?:\.\d+)?", version) for version in versions)
