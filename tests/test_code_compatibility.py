"""Compatibility verdicts: compatible, unknown or incompatible, each with its reasons."""

from __future__ import annotations

import pytest

from metisgraph.ingest import EnvironmentInput
from metisgraph.ingest.code import (
    Requirement,
    Verdict,
    analyze_snippet,
    compatibility,
    pin_to_environment,
)
from metisgraph.ingest.snippets import verdict_for

NEEDS = (Requirement("pandas", "<2"), Requirement("python", ">=3.9"))


def test_compatible_when_every_requirement_is_met() -> None:
    verdict = compatibility(NEEDS, {"pandas": "1.5.3", "numpy": "1.26"}, ("python", "3.11.4"))
    assert verdict == Verdict(
        "compatible", ("pandas 1.5.3 satisfies <2", "python 3.11.4 satisfies >=3.9")
    )


def test_incompatible_names_what_is_unmet() -> None:
    verdict = compatibility(NEEDS, {"pandas": "2.1.0"}, ("python", "3.8.10"))
    assert verdict.status == "incompatible"
    assert verdict.reasons == (
        "needs pandas <2; found pandas 2.1.0",
        "needs Python >=3.9; found python 3.8.10",
    )


def test_unknown_when_the_environment_does_not_say() -> None:
    assert compatibility(NEEDS, None, None).status == "unknown"
    verdict = compatibility(NEEDS, {"numpy": "1.26"}, ("python", "3.12.1"))
    assert verdict == Verdict("unknown", ("needs pandas <2; pandas is not installed",))
    other_runtime = compatibility((Requirement("python", ">=3.9"),), {}, ("node", "20.1.0"))
    assert other_runtime.status == "unknown"


def test_incompatible_outranks_unknown() -> None:
    verdict = compatibility(
        (Requirement("pandas", "<2"), Requirement("requests")), {"pandas": "2.0"}, None
    )
    assert verdict.status == "incompatible"
    assert verdict.reasons == ("needs pandas <2; found pandas 2.0",)


def test_names_are_compared_canonically_and_bad_versions_are_unknown() -> None:
    req = (Requirement("scikit-learn", ">=1.2"),)
    assert compatibility(req, {"Scikit_Learn": "1.3.0"}, None).status == "compatible"
    assert compatibility(req, {"scikit-learn": "custom-build"}, None).status == "unknown"


def test_no_requirements_is_compatible() -> None:
    assert compatibility((), None, None) == Verdict("compatible", ())


def test_verified_versions_become_ranges() -> None:
    pinned = pin_to_environment(
        (Requirement("pandas"), Requirement("tqdm"), Requirement("numpy", "<2")),
        {"pandas": "1.5.3", "tqdm": "0.4.1", "numpy": "1.26.0"},
    )
    assert pinned == (
        Requirement("pandas", ">=1.5.3,<2"),
        Requirement("tqdm", ">=0.4.1,<0.5"),
        Requirement("numpy", "<2"),
    )


def test_end_to_end_from_analysis_to_verdict() -> None:
    code = "import pandas as pd\n\nmatch pd.__version__:\n    case _:\n        pass\n"
    analysis = analyze_snippet(code, "python", environment={"pandas": "1.5.3"})
    assert analysis.requires == (
        Requirement("pandas", ">=1.5.3,<2"),
        Requirement("python", ">=3.10"),
    )
    ok = compatibility(analysis.requires, {"pandas": "1.5.3"}, ("python", "3.11.0"))
    old_python = compatibility(analysis.requires, {"pandas": "1.5.3"}, ("python", "3.9.18"))
    new_pandas = compatibility(analysis.requires, {"pandas": "2.2.0"}, ("python", "3.11.0"))
    assert (ok.status, old_python.status, new_pandas.status) == (
        "compatible",
        "incompatible",
        "incompatible",
    )
    assert old_python.reasons == ("needs Python >=3.10; found python 3.9.18",)


@pytest.mark.parametrize(
    ("runtime", "version", "status"),
    [
        ("jdk", "17.0.2", "compatible"),
        ("OpenJDK", "11.0.1", "incompatible"),
        ("java", "", "unknown"),
    ],
)
def test_a_stated_runtime_is_read_as_every_environment_is(
    runtime: str, version: str, status: str
) -> None:
    """verdict_for settles the caller's environment as ingest settles any (one shape, one
    set of runtime names), so a JDK is Java whatever the caller calls it."""
    snippet = {"requires": [{"name": "java", "spec": ">=17"}]}
    stated = EnvironmentInput(runtime=runtime, runtime_version=version or None)
    assert verdict_for(snippet, stated).status == status
