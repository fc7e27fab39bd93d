"""Grouping accuracy of line signatures, on hand-written sets and on ../shared/eval."""

from __future__ import annotations

from pathlib import Path

import pytest

from metisgraph.api.eval.signatures import (
    METHODS,
    SignatureLine,
    SignatureSetError,
    evaluate,
    evaluate_dir,
    group_lines,
    grouping_accuracy,
    line_groups,
    load_lines,
    mine,
)


@pytest.fixture
def signature_set(fixtures_dir: Path) -> Path:
    return fixtures_dir / "errors" / "signature_set"


# --- the metric -----------------------------------------------------------------


def test_accuracy_is_one_when_groups_match_under_other_names() -> None:
    assert grouping_accuracy(["a", "a", "b"], ["x", "x", "y"]) == 1.0


def test_a_merged_group_makes_every_line_in_it_wrong() -> None:
    assert grouping_accuracy(["a", "a", "a"], ["x", "x", "y"]) == 0.0


def test_a_split_group_makes_its_lines_wrong_and_spares_the_others() -> None:
    assert grouping_accuracy(["a", "b", "c"], ["x", "x", "y"]) == pytest.approx(1 / 3)


def test_accuracy_needs_one_prediction_per_line() -> None:
    with pytest.raises(ValueError, match="2 predictions for 3 lines"):
        grouping_accuracy(["a", "b"], ["x", "y", "z"])


# --- reading a set ----------------------------------------------------------------


def test_load_lines_reads_every_row_and_skips_blank_lines(signature_set: Path) -> None:
    rows = load_lines(signature_set / "lines.jsonl")
    assert len(rows) == 9
    assert rows[0] == SignatureLine("Web", "1", "GET /api/users/17 took 35 ms", "Web:T1")


def test_a_missing_field_is_named_with_its_file_and_line(fixtures_dir: Path) -> None:
    path = fixtures_dir / "errors" / "bad_set" / "lines.jsonl"
    with pytest.raises(SignatureSetError, match=r"lines\.jsonl:2: missing field 'content'"):
        load_lines(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", r":1: not JSON"),
        ("[1, 2]", r":1: expected an object, got list"),
        (
            '{"system": "A", "line_id": 1, "content": 5, "group": "g"}',
            r"field 'content' must be str",
        ),
        (
            '{"system": "A", "line_id": true, "content": "x", "group": "g"}',
            r"'line_id' must be str or int",
        ),
        ("", r"no lines"),
    ],
)
def test_bad_sets_are_refused_with_a_clear_reason(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(SignatureSetError, match=message):
        load_lines(path)


def test_a_folder_without_lines_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SignatureSetError, match=r"no lines\.jsonl"):
        evaluate_dir(tmp_path)


# --- evaluating -------------------------------------------------------------------


def test_rules_group_by_shape_and_split_a_word_that_varies(signature_set: Path) -> None:
    report = evaluate_dir(signature_set)
    scores = {s.system: s for s in report.systems}
    # Web: numbers, paths and times vary inside fixed words — all three groups are found.
    assert scores["Web"].accuracy == 1.0
    assert scores["Web"].found_groups == 3
    # Db: "db-primary" and "db-replica" are plain words; stateless rules keep them apart.
    assert scores["Db"].accuracy == pytest.approx(1 / 3)
    assert report.mean == pytest.approx((1 + 1 / 3) / 2)


def test_report_json_has_the_mean_and_one_figure_per_system(signature_set: Path) -> None:
    data = evaluate_dir(signature_set).as_json()
    assert data["mean_grouping_accuracy"] == pytest.approx(0.6667, abs=1e-4)
    assert data["systems"] == {"Db": pytest.approx(0.3333, abs=1e-4), "Web": 1.0}
    assert data["set"] == "signature_set"
    assert data["lines"] == 9
    assert data["mean_key_drift"] == 0.0


def test_rules_do_not_depend_on_the_order_lines_are_read(signature_set: Path) -> None:
    rows = load_lines(signature_set / "lines.jsonl")
    plain = evaluate(rows)
    for seed in (1, 2, 3):
        assert evaluate(rows, shuffle_seed=seed).systems == plain.systems


def test_line_groups_are_the_groups_evaluate_scores(signature_set: Path) -> None:
    rows = load_lines(signature_set / "lines.jsonl")
    found = line_groups(rows)
    assert [line for line, _ in found] == sorted(rows, key=lambda r: r.system)  # file order kept
    by_system = {s.system: s.found_groups for s in evaluate(rows).systems}
    for system, count in by_system.items():
        assert len({group for line, group in found if line.system == system}) == count


def test_drain3_groups_identical_shapes_and_reports_like_the_rules() -> None:
    lines = [
        SignatureLine("S", str(i), text, group)
        for i, (text, group) in enumerate(
            [
                ("disk sda1 is 91 percent full", "full"),
                ("disk sdb2 is 97 percent full", "full"),
                ("backup finished", "done"),
                ("backup finished", "done"),
            ]
        )
    ]
    report = evaluate(lines, "drain3")
    assert report.method == "drain3"
    assert report.systems[0].accuracy == 1.0


def test_a_drain_key_moves_as_more_lines_are_read_and_a_rule_key_does_not() -> None:
    lines = ["user alice logged in", "user bob logged in", "user carol logged in"]
    drain = mine(lines, "drain3")
    assert len(set(drain.labels)) == 1
    # the first line was keyed "user alice logged in"; the second made it "user <*> logged in"
    assert drain.key_drift == pytest.approx(1 / 3)
    assert mine(lines, "rules").key_drift == 0.0


def test_every_method_gives_one_label_per_line() -> None:
    lines = ["a 1", "a 2", "b"]
    for method in METHODS:
        assert len(group_lines(lines, method)) == 3


def test_an_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown grouping method 'magic'"):
        group_lines(["x"], "magic")


@pytest.mark.shared
def test_rules_group_the_loghub_development_set(shared_dir: Path) -> None:
    report = evaluate_dir(shared_dir / "eval" / "logsig-loghub")
    assert len(report.systems) == 8
    assert report.mean >= 0.84
    assert all(s.accuracy > 0.4 for s in report.systems)
