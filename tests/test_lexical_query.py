"""The question's words for the full-text channels: library frames out, each term once."""

from __future__ import annotations

from metisgraph.graph.lucene import lucene_query, lucene_terms
from metisgraph.ingest.prepare.keywords import without_library_frames

JAVA_TRACE = """--- org.acme.plot.AxisTest::testRange
java.lang.IllegalStateException: bad range
\tat org.acme.plot.Axis.range(Axis.java:10)
\tat org.acme.plot.AxisTest.testRange(AxisTest.java:20)
\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
\tat java.lang.reflect.Method.invoke(Method.java:498)
\tat junit.framework.TestCase.runTest(TestCase.java:176)
\tat org.junit.runners.ParentRunner.run(ParentRunner.java:363)"""

PYTHON_TRACE = """Traceback (most recent call last):
  File "/usr/lib/python3.11/asyncio/runners.py", line 190, in run
    return runner.run(main)
  File "/srv/app/billing/invoice.py", line 42, in total
    return sum(line.amount for line in lines)
  File "/srv/venv/lib/python3.11/site-packages/requests/api.py", line 73, in get
    return request("get", url)
TypeError: unsupported operand type(s)"""


def test_library_frames_of_a_java_trace_are_dropped_own_frames_and_message_stay() -> None:
    kept = without_library_frames(JAVA_TRACE).splitlines()
    assert kept == [
        "--- org.acme.plot.AxisTest::testRange",
        "java.lang.IllegalStateException: bad range",
        "\tat org.acme.plot.Axis.range(Axis.java:10)",
        "\tat org.acme.plot.AxisTest.testRange(AxisTest.java:20)",
    ]


def test_a_dropped_python_frame_takes_its_source_line_with_it() -> None:
    kept = without_library_frames(PYTHON_TRACE)
    assert "asyncio" not in kept and "runner.run(main)" not in kept
    assert "requests" not in kept and 'request("get", url)' not in kept
    assert 'File "/srv/app/billing/invoice.py", line 42, in total' in kept
    assert "return sum(line.amount for line in lines)" in kept
    assert kept.endswith("TypeError: unsupported operand type(s)")


def test_text_without_frames_is_unchanged() -> None:
    text = "When did Caroline go to the support group?\n  indented line\nat noon"
    assert without_library_frames(text) == text


def test_lucene_terms_uses_each_term_once_in_first_seen_order() -> None:
    assert lucene_terms("Park or park, the PARK near the lake") == (
        "park OR or OR the OR near OR lake"
    )


def test_lucene_terms_budget_counts_distinct_terms() -> None:
    text = " ".join(["again"] * 50 + [f"w{n}" for n in range(10)])
    terms = lucene_terms(text, max_terms=5).split(" OR ")
    assert terms == ["again", "w0", "w1", "w2", "w3"]


def test_lucene_terms_escapes_user_syntax() -> None:
    query = lucene_query('fix:crash (now) "AND" x-ray*', ("scope_p",))
    assert query == "+scope:(scope_p) +(fix OR crash OR now OR and OR x\\-ray)"
