"""Symbols weighted by where they occur: what a fix changed, what a trace passed through."""

from __future__ import annotations

from metisgraph.ingest.errors.signatures import extract_errors
from metisgraph.ingest.prepare.symbols import (
    CHANGED,
    FRAME,
    NAMED,
    code_symbols,
    question_symbols,
    symbol_weights,
)

TRACE = """java.lang.IllegalArgumentException: Requires start <= end.
\tat org.jfree.data.time.TimeSeries.createCopy(TimeSeries.java:880)
\tat org.jfree.data.time.TimeSeriesCollection.update(TimeSeriesCollection.java:120)
\tat org.jfree.data.time.junit.TimeSeriesTests.testBug1864222(TimeSeriesTests.java:842)
\tat junit.framework.TestCase.runTest(TestCase.java:154)
"""
PATCH = """--- a/source/org/jfree/data/time/TimeSeries.java
+++ b/source/org/jfree/data/time/TimeSeries.java
@@ -877,7 +877,7 @@ public class TimeSeries extends Series {
-        if (start > end) {
+        if (start > end + 1) {
"""


def test_a_changed_file_outweighs_a_frame_the_trace_passed_through() -> None:
    weights = symbol_weights(["Failing test testBug1864222"], extract_errors(TRACE), [PATCH])
    assert weights["TimeSeries"] == CHANGED
    assert weights["TimeSeriesCollection"] < FRAME  # the second own frame, one step out
    assert weights["TimeSeriesTests"] < weights["TimeSeriesCollection"]


def test_a_name_in_the_memorys_own_words_counts_as_named() -> None:
    weights = symbol_weights(["Fixed in: org.apache.commons.cli.OptionGroup"])
    assert weights == {"OptionGroup": NAMED}


def test_names_only_in_a_trace_text_weigh_less_than_its_frames() -> None:
    header = "--- org.apache.commons.csv.CSVParserTest::testNoHeaderMap"
    weights = symbol_weights([], [], [], [header])
    assert weights["CSVParserTest"] == weights["CSVParser"] < FRAME


def test_question_frames_weigh_most_where_the_fault_shows() -> None:
    errors = extract_errors(TRACE)
    weights = question_symbols("A test fails with this trace.", TRACE, errors)
    order = sorted(weights, key=lambda name: -weights[name])
    assert order[0] == "TimeSeries" and weights["TimeSeries"] == 1.0
    assert weights["TimeSeriesCollection"] < weights["TimeSeries"]


def test_a_trace_pasted_into_the_question_keeps_its_frame_order() -> None:
    errors = extract_errors(TRACE)
    pasted = question_symbols("why does this fail?\n" + TRACE, None, errors)
    separate = question_symbols("why does this fail?", TRACE, errors)
    assert pasted["TimeSeriesCollection"] == separate["TimeSeriesCollection"] < 1.0


def test_a_class_named_in_the_question_is_named() -> None:
    weights = question_symbols("is org.apache.hadoop.fs.s3a.S3AFileSystem thread safe?", None, [])
    assert weights == {"S3AFileSystem": NAMED}


def test_code_symbols_lists_every_weighted_symbol() -> None:
    errors = extract_errors(TRACE)
    assert set(code_symbols([], errors, [PATCH])) == set(symbol_weights([], errors, [PATCH]))
