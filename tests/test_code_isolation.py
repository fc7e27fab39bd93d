"""Long code is analysed by a worker process: a grammar's worst case no longer holds the
service's interpreter, and is stopped.

A bash pipeline of 20,000 commands or a Java line of 20,000 ``a<`` kept py-tree-sitter
(and the interpreter's lock) busy for 5–7 s after its last byte was read, out of reach of
the parse budget; 200 KB of it for minutes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from metisgraph.ingest.code import analyze_snippet, isolation
from metisgraph.ingest.code.extract import _reads_as_commands
from metisgraph.ingest.code.treesitter_analysis import analyze_with_treesitter

ORDINARY = {
    "javascript": "".join(f"function f{i}(a, b) {{ return g(a) + h(b); }}\n" for i in range(300)),
    "java": "class Ledger {\n" + "  int f(int x) { return Math.abs(x) + 1; }\n" * 200 + "}\n",
    "go": "package main\n\n"
    + "".join(f"func f{i}(a int) int {{ return a + {i} }}\n" for i in range(300)),
    "bash": "#!/bin/bash\nset -e\n" + "cp -r src/ build/ && make -C build all\n" * 200,
}


@pytest.fixture
def short_timeout(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(isolation, "TIMEOUT_S", 1.0)
    yield
    isolation.stop_worker()


@pytest.mark.parametrize("language", sorted(ORDINARY))
def test_long_code_is_analysed_as_in_process(language: str) -> None:
    code = ORDINARY[language]
    assert len(code) > isolation.ISOLATE_ABOVE
    here = analyze_with_treesitter(code, language)
    assert here is not None and (here.name or here.calls)
    assert isolation.isolated(analyze_with_treesitter, code, language) == here


def test_a_grammars_worst_case_is_stopped_without_holding_the_interpreter(
    short_timeout: None,
) -> None:
    code = "a<" * 20_000  # java: 4.6 s of parsing after the last byte, on this machine
    ticks = 0
    done = threading.Event()

    def analyse() -> None:
        try:
            analysis = analyze_snippet(code, "java")
            assert analysis.name is None  # read without a tree
        finally:
            done.set()

    worker = threading.Thread(target=analyse)
    started = time.monotonic()
    worker.start()
    while not done.is_set():
        time.sleep(0.01)
        ticks += 1
    worker.join()
    # the analysis was stopped near the timeout, and this thread ran meanwhile (in process,
    # it ran once: the parse held the interpreter throughout)
    assert time.monotonic() - started < 1.0 + 2.5
    assert ticks >= 20
    # the next long snippet gets a new worker
    assert isolation.isolated(analyze_with_treesitter, ORDINARY["go"], "go") is not None


def test_a_long_block_is_told_from_shell_in_the_worker(short_timeout: None) -> None:
    assert _reads_as_commands(ORDINARY["bash"])
    assert not _reads_as_commands("a|" * 20_000 + "\n===== ====\n")


def test_a_dead_worker_is_replaced(short_timeout: None) -> None:
    code = ORDINARY["java"]
    first = isolation.isolated(analyze_with_treesitter, code, "java")
    assert isolation._worker is not None
    isolation._worker.process.kill()
    isolation._worker.process.wait()
    assert isolation.isolated(analyze_with_treesitter, code, "java") in (None, first)
    assert isolation.isolated(analyze_with_treesitter, code, "java") == first
