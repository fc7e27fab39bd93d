"""`make test`'s two workers: modules sharing a costly session fixture run on ONE worker.

A small suite of its own is run the Makefile's way (``-n 2 --dist loadgroup``) with this
suite's conftest hooks and a stand-in for ``scratch_neo4j`` that notes each build: the two
modules using it must run on one worker, which builds it once (each worker builds session
fixtures for itself; before, the groups were read from xdist's id suffix, which pytest 9
ignores, and the real-model ``shared_run`` was ingested on both workers).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
XDIST = ("-n", "2", "--dist", "loadgroup")  # the Makefile's

CONFTEST = f"""
import importlib.util, os, sys
from pathlib import Path

import pytest

sys.path.append({str(TESTS)!r})
_spec = importlib.util.spec_from_file_location("suite_conftest", {str(TESTS / "conftest.py")!r})
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)
globals().update({{k: v for k, v in vars(_suite).items() if k.startswith("pytest_")}})  # its hooks
OUT = Path(os.environ["SCHEDULING_OUT"])


def note(name, line):
    with open(OUT / name, "a") as out:
        out.write(line + "\\n")


@pytest.fixture(scope="session")
def scratch_neo4j():
    note("builds", os.environ["PYTEST_XDIST_WORKER"])
    return os.environ["PYTEST_XDIST_WORKER"]
"""

GROUPED = """
from conftest import note
import os

def test_uses_it(scratch_neo4j):
    note("runs", f"{__name__} {os.environ['PYTEST_XDIST_WORKER']}")
"""

PLAIN = """
from conftest import note
import os

def test_alone():
    note("runs", f"{__name__} {os.environ['PYTEST_XDIST_WORKER']}")
"""


@pytest.mark.slow
def test_modules_sharing_a_costly_fixture_run_on_one_worker_that_builds_it_once(
    tmp_path: Path,
) -> None:
    suite, out = tmp_path / "suite", tmp_path / "out"
    suite.mkdir()
    out.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow\n    shared\n")
    for name in ("test_grouped_a", "test_grouped_b"):
        (suite / f"{name}.py").write_text(GROUPED)
    for name in ("test_plain_a", "test_plain_b", "test_plain_c"):
        (suite / f"{name}.py").write_text(PLAIN)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["SCHEDULING_OUT"] = str(out)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *XDIST],
        cwd=suite,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    runs = dict(line.split() for line in (out / "runs").read_text().splitlines())
    assert len(runs) == 5, runs  # every module ran
    assert runs["test_grouped_a"] == runs["test_grouped_b"], runs
    assert (out / "builds").read_text().splitlines() == [runs["test_grouped_a"]]
    assert {"gw0", "gw1"} == set(runs.values()), runs  # and both workers had work


class _Item:
    """What group_and_order reads of a collected test."""

    def __init__(self, nodeid: str, *marks: pytest.MarkDecorator) -> None:
        self.nodeid, self.fixturenames = nodeid, ["neo4j_settings"]
        self.marks = [mark.mark for mark in marks]
        self.keywords = {mark.name for mark in self.marks}

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return next((mark for mark in self.marks if mark.name == name), None)


def test_a_slow_test_that_names_its_seconds_is_costed_by_them() -> None:
    """``slow`` is a test of a few seconds (most are: the inner loop leaves out all above
    1.5 s); one of minutes says so, ``slow(50)``, and its module goes out first — ahead of a
    module of three plain ``slow`` tests, behind none of the tests of seconds."""
    from scheduling import group_and_order

    minute = _Item("tests/test_minute.py::test_it", pytest.mark.slow(50))
    seconds = [_Item(f"tests/test_seconds.py::test_{n}", pytest.mark.slow) for n in range(3)]
    plain = _Item("tests/test_plain.py::test_it")
    items: list[Any] = [plain, *seconds, minute]
    group_and_order(SimpleNamespace(), items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        minute.nodeid, *(item.nodeid for item in seconds), plain.nodeid]  # fmt: skip
