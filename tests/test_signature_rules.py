"""Which template rules earn their place, and leave one system out."""

from __future__ import annotations

from pathlib import Path

import pytest

from metisgraph.api.eval.rules import RuleBench
from metisgraph.api.eval.signatures import SignatureLine, load_lines
from metisgraph.ingest.errors.logtemplate import DEFAULT_RULES


def _lines(system: str, rows: list[tuple[str, str]]) -> list[SignatureLine]:
    return [
        SignatureLine(system, str(i), text, f"{system}:{g}") for i, (text, g) in enumerate(rows)
    ]


def _sessions(system: str) -> list[SignatureLine]:
    """Two templates whose account names vary: only the `user` rule groups them."""
    return _lines(
        system,
        [
            ("session opened for user ana", "open"),
            ("session opened for user bob", "open"),
            ("session closed for user ana", "close"),
            ("session closed for user carol", "close"),
        ],
    )


def _plain(system: str) -> list[SignatureLine]:
    return _lines(system, [("disk 3 full", "full"), ("disk 9 full", "full"), ("ok", "ok")])


def test_a_rule_that_helps_on_two_systems_besides_its_own_is_kept() -> None:
    bench = RuleBench(_sessions("OpenSSH") + _sessions("A") + _sessions("B"))
    kept, effects = bench.select()
    user = next(e for e in effects if e.rule == "user")
    assert user.helps == ("A", "B")  # OpenSSH is where it came from: it does not count
    assert "user" in kept


def test_a_rule_that_helps_only_where_it_came_from_is_dropped() -> None:
    bench = RuleBench(_sessions("OpenSSH") + _sessions("Linux") + _plain("A") + _plain("B"))
    kept, _ = bench.select()
    assert "user" not in kept
    assert bench.accuracy(kept)["OpenSSH"] < bench.accuracy(kept | {"user"})["OpenSSH"]


def test_leave_one_out_chooses_without_the_system_it_scores() -> None:
    bench = RuleBench(_sessions("OpenSSH") + _sessions("A") + _sessions("B") + _plain("C"))
    folds = {f.system: f for f in bench.leave_one_out()}
    # Judged without A, `user` helps on B alone: A is scored without it.
    assert "user" not in folds["A"].rules
    assert folds["A"].accuracy == 0.0
    # Written from OpenSSH, the rule is no candidate when OpenSSH is scored.
    assert "user" not in folds["OpenSSH"].rules
    assert folds["C"].accuracy == 1.0 and "user" in folds["C"].rules


def test_the_report_names_each_rules_effect_per_system() -> None:
    report = RuleBench(_sessions("OpenSSH") + _sessions("A") + _sessions("B")).report()
    data = report.as_json()
    assert set(data["leave_one_out"]) == {"A", "B", "OpenSSH"}
    user = next(r for r in data["rules"] if r["rule"] == "user")
    assert user["provenance"] == ["OpenSSH", "Linux"]
    assert user["helps"] == ["A", "B"] and user["kept"] is True


@pytest.mark.shared
@pytest.mark.slow
def test_the_product_signs_with_the_rules_the_development_systems_select(
    shared_dir: Path,
) -> None:
    bench = RuleBench(load_lines(shared_dir / "eval" / "logsig-loghub" / "lines.jsonl"))
    report = bench.report()
    assert report.selected == DEFAULT_RULES
    assert len(report.folds) == 8
    assert report.mean_leave_one_out >= 0.84
