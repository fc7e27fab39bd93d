"""Which template rules and family settings earn their place, leave one system out."""

from __future__ import annotations

from pathlib import Path

import pytest

from metisgraph.api.eval.families import GRID, FamilyBench
from metisgraph.api.eval.rules import RuleBench
from metisgraph.api.eval.signatures import SignatureLine, evaluate, load_lines
from metisgraph.ingest.errors import DEFAULT_RULES, FAMILY_SETTINGS


@pytest.fixture(scope="module")
def development(shared_dir: Path) -> RuleBench:
    """The development systems (../shared), benched once for this module."""
    return RuleBench(load_lines(shared_dir / "eval" / "logsig-loghub" / "lines.jsonl"))


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
    development: RuleBench,
) -> None:
    report = development.report()
    assert report.selected == DEFAULT_RULES
    assert len(report.folds) == 8
    assert report.mean_leave_one_out >= 0.84


# --- families: settings chosen leave one system out ------------------------------------


def _accounts(system: str) -> list[SignatureLine]:
    """One template whose account varies: families group it, signatures cannot."""
    users = ("ana", "bob", "carol", "dan")
    return _lines(system, [(f"login accepted for account {u} on console", "login") for u in users])


def _words(system: str) -> list[SignatureLine]:
    """Four templates that differ in one word, shaped like _accounts: a slot would join them."""
    words = ("illegal", "privileged", "imprecise", "unimplemented")
    return _lines(system, [(f"kernel trapped an {w} instruction on console", w) for w in words])


def test_families_group_what_signatures_keep_apart_in_any_order() -> None:
    lines = _accounts("A")
    assert evaluate(lines, "rules").mean == 0.0
    assert evaluate(lines, "families").mean == 1.0
    assert evaluate(lines, "families", shuffle_seed=5).mean == 1.0


def test_family_settings_are_chosen_without_the_system_they_score() -> None:
    bench = FamilyBench(RuleBench(_accounts("A") + _accounts("B") + _words("C")))
    folds = {f.system: f for f in bench.leave_one_out()}
    # Chosen on A and B, where slots help, C is scored with them and its words join.
    assert folds["C"].settings.min_values is not None and folds["C"].accuracy == 0.0
    # Chosen on B and C, which disagree, A gets the most cautious of the best: no slots.
    assert folds["A"].settings == GRID[0] and folds["A"].accuracy == 0.0
    for fold in folds.values():
        assert fold.settings == bench.select(fold.rules, held_out=fold.system)
        assert fold.accuracy == bench.accuracy(fold.rules, fold.settings)[fold.system]


@pytest.mark.shared
@pytest.mark.slow
def test_families_hold_on_development_systems_never_seen(development: RuleBench) -> None:
    report = FamilyBench(development).report()
    assert report.selected == FAMILY_SETTINGS
    assert len(report.folds) == 8
    assert report.mean_leave_one_out >= 0.90
