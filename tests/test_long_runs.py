"""Texts with a run of path characters too long to be a path: scanned in linear time, with
the names around them found as before.

The patterns that find file paths, dotted names and Maven coordinates in free text try each
position of such a run and read to its end (n² steps; lineage's file-stem pattern n³): a
20,000-character hex line in an observation took 1–3.5 s to prepare, in a question 1.3–3.2 s,
and in an error's sample lineage took 12 s for 2,000 characters — each holding the
interpreter. These tests hold the answers and bound the work by a generous alarm (the text
sizes below took 30 s to minutes before).
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import given
from hypothesis import strategies as st

from metisgraph.graph.lineage.evidence import error_says, source_file_stems
from metisgraph.ingest.environment.extract import extract_environment
from metisgraph.ingest.long_runs import LONGEST_RUN, without_long_runs
from metisgraph.ingest.prepare.episode import prepare_episode
from metisgraph.ingest.prepare.symbols import question_symbols
from metisgraph.ingest.question import Question, prepare_question
from metisgraph.ingest.records import EpisodeRecord

# The pattern `source_file_stems` replaces: its second group is the answer.
_OLD_SOURCE_FILE = re.compile(
    r"([\w.\-/]*?([\w\-]+)\.(?:py|java|kt|scala|c|h|cc|cpp|hpp|go|rs|ts|tsx|js|jsx|rb|php|cs|swift))\b"
)
HEX = "9f" * 60_000  # 120,000 characters of one run, as a hex dump or digest list prints


@contextmanager
def at_most(seconds: int) -> Iterator[None]:
    """Fail the test when the block runs past ``seconds`` (a hang, not a measurement)."""

    def stop(*_: object) -> None:
        raise AssertionError(f"still scanning after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@given(st.text(alphabet="ab_-./:pyjsc é\n'X", max_size=80))
def test_source_file_stems_are_the_patterns_answers(text: str) -> None:
    assert source_file_stems(text) == [m.group(2) for m in _OLD_SOURCE_FILE.finditer(text)]


def test_source_file_stems_of_paths_and_frames() -> None:
    text = 'File "/srv/app/models.py", line 3 in a.py-b.py and lib/x.cpp.orig, not x.pyc'
    assert source_file_stems(text) == ["models", "a", "-b", "x"]


def test_an_errors_files_are_read_past_a_long_line() -> None:
    # (a sample is read to its first 4,000 characters)
    sample = f"ValueError: bad digest {HEX[:3_800]}\n  at src/payments/ledger.py:41"
    with at_most(20):
        says = error_says("python:ValueError", sample, None, None)
    assert "ledger" in says.files


@given(st.text(alphabet="ab/.-: \n\"',=+", max_size=60), st.integers(1, 12))
def test_long_runs_are_blanked_and_nothing_else_moves(text: str, longest: int) -> None:
    kept = without_long_runs(text, longest)
    assert len(kept) == len(text)
    runs = re.compile(r"[\w.\-/:]+")
    assert all(len(run) <= longest for run in runs.findall(kept))
    for a, b in zip(text, kept, strict=True):
        assert a == b or b == " "
    # a run no longer than ``longest`` is kept whole
    for run in runs.finditer(text):
        if len(run.group()) <= longest:
            assert kept[run.start() : run.end()] == run.group()


def test_names_beside_a_long_run_are_found_as_without_it() -> None:
    text = "fails in src/app/models.py after org.example.billing.Invoice was read"
    alone = question_symbols(text, None, [])
    assert alone  # the path and the qualified name
    with at_most(20):
        beside = question_symbols(f"{text} {HEX} {HEX}", f"{HEX}\n{text}", [])
    assert set(alone) <= set(beside)
    # a run of path characters just within the bound is still read whole
    path = "/".join(["pkg"] * ((LONGEST_RUN - 20) // 4)) + "/deep_module.py"
    assert len(path) <= LONGEST_RUN
    assert any("deep_module" in s for s in question_symbols(f"see {path}", None, []))


def test_an_environment_is_read_beside_a_long_run() -> None:
    tree = "[INFO] +- org.slf4j:slf4j-api:jar:2.0.9:compile\n"
    alone = extract_environment([tree])
    assert alone is not None and alone.packages
    with at_most(20):
        beside = extract_environment([f"{HEX}\n{tree}{HEX}"])
    assert beside == alone


def test_a_record_and_a_question_with_long_runs_are_prepared() -> None:
    with at_most(30):
        episode = prepare_episode(
            EpisodeRecord(
                project="p",
                summary="upload failed",
                observation=f"wrote {HEX[:99_000]} to src/upload/chunks.py",
                error=("a.b/" * 25_000)[:99_000],
            )
        )
        prepare_question(Question(project="p", query=f"why {HEX} fails", error="ab." * 60_000))
    assert episode.props["observation"].endswith("chunks.py")
