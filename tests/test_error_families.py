"""Error families: signatures that differ only where many values were seen (no database)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metisgraph.ingest.errors import FamilyIndex, FamilySettings, FamilyShape, line_signature
from metisgraph.ingest.errors.families import covers, family_template


def _shape(signature: str, kind: str = "log:ERROR") -> FamilyShape:
    return FamilyShape(kind, (), tuple(signature.split()))


def _families(signatures: list[str], config: FamilySettings | None = None) -> set[frozenset[str]]:
    index = FamilyIndex(config or FamilySettings())
    for signature in signatures:
        index.add(signature, _shape(signature))
    return {frozenset(keys) for keys in index.families()}


def _sessions(*users: str) -> list[str]:
    return [line_signature(f"session opened for user {u} by (uid=0)") for u in users]


def test_a_pattern_covers_what_its_placeholders_can_stand_for() -> None:
    assert covers("(<*>)", "()") and covers("(<*>)", "(host.example)")
    assert covers("<*>", "uucp") and covers("a<*>b<*>c", "a--b--c")
    assert covers("<*>:<*>", "<*>:<*>")
    assert not covers("()", "(x)")  # no placeholder: a word is not a pattern
    assert not covers("(<*>)", "[x]") and not covers("a<*>b<*>c", "a-c-b")
    assert not covers("ab<*>ba", "aba")  # prefix and suffix may not overlap


def test_many_values_at_one_position_make_a_family() -> None:
    found = _families(_sessions("cyrus", "news", "test"))
    assert found == {frozenset(_sessions("cyrus", "news", "test"))}


def test_two_values_are_not_yet_a_slot() -> None:
    found = _families(_sessions("cyrus", "news"), FamilySettings(3, 0.6, instances=False))
    assert len(found) == 2


def test_a_token_another_covers_joins_it() -> None:
    empty = line_signature("connection from 10.1.2.3 () at Fri Jun 17 07:07:00 2005")
    named = line_signature("connection from 10.1.2.3 (a.example.net) at Fri Jun 17 07:07:00 2005")
    assert empty != named  # the signature alone keeps them apart
    assert _families([empty, named]) == {frozenset({empty, named})}
    assert len(_families([empty, named], FamilySettings(3, 0.6, instances=False))) == 2


def test_words_among_few_constants_stay_apart() -> None:
    # "program interrupt: illegal <*>" and its kin: too little is fixed around the word.
    words = ("illegal", "privileged", "imprecise", "trap")
    found = _families([f"interrupt: {w} <*>" for w in words], FamilySettings(3, 0.6))
    assert len(found) == 4
    assert len(_families([f"interrupt: {w} <*>" for w in words], FamilySettings(3, 0.3))) == 1


def test_nothing_fixed_around_a_token_never_joins() -> None:
    assert len(_families(["<*>", "ready", "suspended", "stopped"])) == 4


def test_other_kinds_lengths_or_frames_never_join() -> None:
    index = FamilyIndex(FamilySettings(2, 0.0))
    index.add("a", FamilyShape("log:ERROR", (), ("disk", "a", "full")))
    index.add("b", FamilyShape("log:WARN", (), ("disk", "b", "full")))
    index.add("c", FamilyShape("log:ERROR", ("app.py:f",), ("disk", "c", "full")))
    index.add("d", FamilyShape("log:ERROR", (), ("disk", "d", "full", "now")))
    assert len(index.families()) == 4


def test_a_family_is_named_by_its_first_member() -> None:
    index = FamilyIndex(FamilySettings(3, 0.6, instances=False))
    keys = _sessions("news", "cyrus", "test")
    for key in keys:
        index.add(key, _shape(key))
    assert {index.family(k) for k in keys} == {keys[0]}


def test_the_template_holds_what_all_members_share() -> None:
    shapes = [s.split() for s in _sessions("cyrus", "news")]
    assert family_template(shapes) == "session opened for user <*> by (uid=<*>)"
    assert family_template([]) == ""


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="min_values"):
        FamilySettings(1)
    with pytest.raises(ValueError, match="similarity"):
        FamilySettings(3, 1.5)


# A small language of signatures: a few templates with slots, some values repeated.
_TEMPLATES = [
    "session opened for user {} by <*>",
    "Failed password for {} from <*> port <*>",
    "connection from <*> ({}) at <*>",
    "disk {} full on <*>",
]
_VALUES = ["root", "news", "cyrus", "<*>", "", "a<*>", "x", "test", "ftp", "()"]
_signatures = st.lists(
    st.builds(lambda t, v: t.format(v), st.sampled_from(_TEMPLATES), st.sampled_from(_VALUES)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(_signatures, st.randoms(use_true_random=False))
def test_families_do_not_depend_on_the_order(signatures: list[str], rnd: random.Random) -> None:
    shuffled = list(signatures)
    rnd.shuffle(shuffled)
    assert _families(signatures) == _families(shuffled)


@settings(max_examples=60, deadline=None)
@given(_signatures)
def test_families_only_merge(signatures: list[str]) -> None:
    index = FamilyIndex()
    previous: dict[str, str] = {}
    for signature in signatures:
        index.add(signature, _shape(signature))
        now = {k: index.family(k) for k in [*previous, signature]}
        for a in previous:
            for b in previous:  # two keys of one family stay one family
                assert previous[a] != previous[b] or now[a] == now[b]
        previous = now
