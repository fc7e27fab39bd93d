"""Patches: files, hunks, line counts and the symbols the hunks touch."""

from __future__ import annotations

from pathlib import Path

from metisgraph.ingest.code import PatchFile, analyze_snippet, parse_patch
from metisgraph.ingest.code.patch import declared_symbol

FIXTURES = Path(__file__).parent / "fixtures" / "code"


def test_files_hunks_and_counts() -> None:
    files = parse_patch((FIXTURES / "two_files.diff").read_text())
    assert [(f.path, f.hunks, f.added, f.removed) for f in files] == [
        ("src/shop/cart.py", 2, 5, 1),
        ("README.md", 1, 1, 1),
    ]


def test_symbols_come_from_changed_lines_and_hunk_headers() -> None:
    files = parse_patch((FIXTURES / "two_files.diff").read_text())
    # `total` is found above the change inside the hunk and qualified by the header's class;
    # the second hunk's change sits in `checkout`, named only by its header.
    assert files[0].symbols == ("Cart.total", "checkout")
    assert files[1].symbols == ()


def test_new_and_deleted_files_and_plain_unified_diffs() -> None:
    diff = (
        "--- /dev/null\n+++ b/tools/new.sh\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo hi\n"
        "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
    )
    assert parse_patch(diff) == (
        PatchFile("tools/new.sh", 1, 2, 0, ()),
        PatchFile("old.txt", 1, 0, 1, ()),
    )


def test_lines_that_look_like_headers_inside_a_hunk_are_content() -> None:
    diff = (
        "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n"
        "--- old comment\n"  # a removed SQL comment line "-- old comment"
        "+-- new comment\n"
        " SELECT 1;\n"
    )
    assert parse_patch(diff) == (PatchFile("q.sql", 1, 1, 1, ()),)


def test_methods_added_to_a_java_interface() -> None:
    diff = (
        "--- a/JSON.java\n+++ b/JSON.java\n@@ -10,3 +10,6 @@ public interface JSON {\n"
        "     }\n"
        "+    static <T> T parseObject(String text, Type type) {\n"
        "+        return null;\n"
        "+    }\n"
        " }\n"
    )
    assert parse_patch(diff)[0].symbols == ("JSON.parseObject",)


def test_declarations_in_several_languages() -> None:
    assert declared_symbol("    async def fetch(self, url):") == "fetch"
    assert declared_symbol("export default class Store extends Base {") == "Store"
    assert declared_symbol("func (s *Server) Run(ctx context.Context) error {") == "Run"
    assert declared_symbol("const handler = async (req, res) => {") == "handler"
    assert declared_symbol("public static int parse(String s) throws IOException {") == "parse"
    assert declared_symbol("elif isinstance(field, models.JSONField):") is None
    assert declared_symbol("return compute(x);") is None
    assert declared_symbol("if (ready) {") is None


def test_patch_analysis_is_kind_patch_with_files() -> None:
    analysis = analyze_snippet((FIXTURES / "two_files.diff").read_text())
    assert (analysis.language, analysis.kind) == ("diff", "patch")
    assert [f.path for f in analysis.patch_files] == ["src/shop/cart.py", "README.md"]
    assert analysis.risk == "high"  # the added os.system line
