"""Which language a piece of code is in: from a name, a path, a shebang or the text itself."""

from __future__ import annotations

import json
import re
from pathlib import PurePath

from metisgraph.ingest.code.python_analysis import parse_source

__all__ = [
    "CONFIG_LANGUAGES",
    "SHELL_LANGUAGES",
    "detect_language",
    "file_suffix",
    "normalize_language",
]

SHELL_LANGUAGES = frozenset({"bash"})
CONFIG_LANGUAGES = frozenset(
    {"yaml", "json", "toml", "ini", "xml", "dockerfile", "properties", "dotenv", "hcl"}
)

_ALIASES = {
    "py": "python",
    "python3": "python",
    "python2": "python",
    "py3": "python",
    "ipython": "python",
    "pycon": "python",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "mts": "typescript",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "ksh": "bash",
    "console": "bash",
    "shell-session": "bash",
    "shellsession": "bash",
    "terminal": "bash",
    "golang": "go",
    "postgres": "sql",
    "postgresql": "sql",
    "psql": "sql",
    "pgsql": "sql",
    "plpgsql": "sql",
    "mysql": "sql",
    "sqlite": "sql",
    "sqlite3": "sql",
    "plsql": "sql",
    "tsql": "sql",
    "yml": "yaml",
    "patch": "diff",
    "udiff": "diff",
    "cfg": "ini",
    "conf": "ini",
    "env": "dotenv",
    "docker": "dockerfile",
    "containerfile": "dockerfile",
    "terraform": "hcl",
    "tf": "hcl",
    "jsonc": "json",
}

_EXTENSIONS = {
    "py": "python",
    "pyw": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "tsx": "typescript",
    "java": "java",
    "go": "go",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "sql": "sql",
    "yaml": "yaml",
    "yml": "yaml",
    "json": "json",
    "toml": "toml",
    "ini": "ini",
    "cfg": "ini",
    "conf": "ini",
    "xml": "xml",
    "properties": "properties",
    "env": "dotenv",
    "tf": "hcl",
    "diff": "diff",
    "patch": "diff",
    "rs": "rust",
    "c": "c",
    "h": "c",
    "cpp": "cpp",
    "cc": "cpp",
    "hpp": "cpp",
    "rb": "ruby",
    "md": "markdown",
    "rst": "rst",
    "txt": "text",
}

_SHEBANG = re.compile(r"^#!\s*(?:/usr/bin/env\s+(?:-S\s+)?)?(?:\S*/)?(?P<prog>[\w.+-]+)")
_SHEBANG_PROGRAMS = {
    "python": "python",
    "node": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "dash": "bash",
    "ksh": "bash",
}

_DIFF = re.compile(r"^(?:diff --git |--- \S.*\n\+\+\+ \S|@@ -\d+(?:,\d+)? \+\d+)", re.M)
_SQL_START = re.compile(
    r"^\s*(?:--[^\n]*\n\s*)*(?:SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW|INDEX|UNIQUE|FUNCTION|PROCEDURE|SCHEMA|DATABASE)|"
    r"ALTER\s+TABLE|DROP\s+(?:TABLE|VIEW|INDEX|SCHEMA|DATABASE)|TRUNCATE|WITH\s+(?:RECURSIVE\s+)?\w+\s+AS|"
    r"GRANT|REVOKE|BEGIN\s*;|EXPLAIN)\b",
    re.I,
)
_GO = re.compile(r"^package\s+\w+\s*$|^func\s+(?:\([^)]*\)\s*)?\w+\s*[\[(]", re.M)
_JAVA = re.compile(
    r"^\s*(?:public|private|protected)\s+(?:static\s+|final\s+|abstract\s+)*"
    r"(?:class|interface|enum|record|[\w<>\[\],.? \t]{1,200}?\s\w+\s*\()|^import\s+java\.",
    re.M,
)
_TS_HINTS = re.compile(
    r"^\s*(?:export\s+)?(?:interface|type)\s+\w+\s*[={<]|:\s*(?:string|number|boolean|void|any)\b"
    r"|\bas\s+const\b|<\w+>\(",
    re.M,
)
_JS_HINTS = re.compile(
    r"\b(?:const|let|var)\s+[\w{}\[\],\s]+=|\bfunction\s*\w*\s*\(|=>|\bconsole\.\w+\(|"
    r"\brequire\(['\"]|^\s*import\s+.+\s+from\s+['\"]|^\s*export\s+(?:default|const|function)",
    re.M,
)
_PY_HINTS = re.compile(
    r"^\s*(?:def|class|import|from\s+\S+\s+import|async\s+def|with|for|while|if|elif|try|"
    r"return|raise|print\()\b|^\s*[\w.\[\]'\"]+\s*=[^=]|\w\(",
    re.M,
)
_PY_BLOCK = re.compile(
    r"^\s*(?:async\s+def|def|class|if|elif|for|while|with|try|except|finally)\b[^\n]*:\s*(?:#.*)?$"
    r"|^\s*from\s+[\w.]+\s+import\s+\w|^\s*raise\s+\w+\(",
    re.M,
)
_YAML_LINE = re.compile(r"^\s*(?:-\s+)?[\w.\"'-]+:(?:\s|$)")
_TOML_SECTION = re.compile(r"^\s*\[[\w.\"-]+\]\s*$", re.M)
_KEY_VALUE = re.compile(r"^\s*[\w.\"-]+\s*=\s*\S")
_DOCKERFILE = re.compile(r"^\s*FROM\s+\S+(?:\s+AS\s+\w+)?\s*$", re.M | re.I)
_DOCKER_STEP = re.compile(r"^\s*(?:RUN|COPY|ADD|ENV|WORKDIR|CMD|ENTRYPOINT|EXPOSE)\s", re.M)


def normalize_language(name: str | None) -> str | None:
    """The canonical name for a language name or fence info string (`py` → `python`)."""
    if name is None:
        return None
    word = name.strip().lower()
    # A fence info string may carry attributes: ```python title="x.py"
    word = re.split(r"[\s{,]", word, maxsplit=1)[0].lstrip(".")
    if not word:
        return None
    return _ALIASES.get(word, word)


def file_suffix(language: str) -> str:
    """The usual file extension of a language (`python` → `.py`); `.txt` when it has none."""
    return next((f".{ext}" for ext, name in _EXTENSIONS.items() if name == language), ".txt")


def language_from_path(path: str) -> str | None:
    """The language a file name implies, by extension or well-known name."""
    pure = PurePath(path.strip().strip("'\""))
    if pure.name.lower() in {"dockerfile", "containerfile"}:
        return "dockerfile"
    if pure.name.lower() in {"makefile", "gnumakefile"}:
        return "make"
    if pure.name.startswith(".env"):
        return "dotenv"
    return _EXTENSIONS.get(pure.suffix.lower().lstrip("."))


def detect_language(code: str, path: str | None = None) -> str:
    """Best guess at the language of `code`: shebang, then path, then the content."""
    shebang = _SHEBANG.match(code.lstrip("\ufeff"))
    if shebang:
        prog = re.sub(r"[\d.]+$", "", shebang["prog"])
        if prog in _SHEBANG_PROGRAMS:
            return _SHEBANG_PROGRAMS[prog]
    if path:
        from_path = language_from_path(path)
        if from_path:
            return from_path
    return _detect_from_content(code)


def _detect_from_content(code: str) -> str:
    text = code.strip()
    if not text:
        return "text"
    if _DIFF.search(text) and re.search(r"^@@ ", text, re.M):
        return "diff"
    if _SQL_START.match(text):
        return "sql"
    if _DOCKERFILE.search(text) and _DOCKER_STEP.search(text):
        return "dockerfile"
    if _looks_like_json(text):
        return "json"
    if _GO.search(text):
        return "go"
    if _JAVA.search(text) and not _parses_as_python(text):
        return "java"
    return _detect_script(text)


def _detect_script(text: str) -> str:
    if _parses_as_python(text) and _PY_HINTS.search(text) and not _looks_like_shell(text):
        return "python"
    if _TS_HINTS.search(text):
        return "typescript"
    if _JS_HINTS.search(text):
        return "javascript"
    if _PY_BLOCK.search(text):
        return "python"  # a fragment that does not parse on its own, but reads as Python
    if _TOML_SECTION.search(text) and _KEY_VALUE.search(text.splitlines()[-1]):
        return "toml"
    lines = [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    nested = all(_YAML_LINE.match(line) or line.startswith((" ", "\t", "- ")) for line in lines)
    if lines and nested and _YAML_LINE.match(lines[0]):
        return "yaml"
    return "bash"


def _looks_like_shell(text: str) -> bool:
    """Short commands such as `make` or `pytest -x` also parse as Python expressions."""
    first = text.splitlines()[0].strip()
    if re.match(r"^[\w./-]+(?:\s+-{1,2}[\w-]+)+", first):
        return True
    return bool(re.fullmatch(r"[\w./-]+", first)) and "\n" not in text


def _parses_as_python(text: str) -> bool:
    return parse_source(text) is not None


def _looks_like_json(text: str) -> bool:
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
