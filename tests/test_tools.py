"""Tool extraction: the programs a command really runs, and the libraries code imports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metisgraph.ingest.sanitize.abstraction import sanitize
from metisgraph.ingest.tools import (
    ToolUse,
    extract_tools,
    libraries_in_code,
    program_name,
    tools_in_command,
    tools_of_action,
)


def _names(uses: list[ToolUse]) -> list[str]:
    return [use.name for use in uses]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ps aux | grep java && pmap -x 4242 | tail -1", ["ps", "pmap"]),
        ("valgrind --leak-check=full ./server", ["valgrind"]),
        ("cd /testbed && python -m pytest tests/test_x.py -x 2>&1 | tail", ["pytest"]),
        ("sudo -u postgres psql -c 'select 1'", ["psql"]),
        ("env PYTHONPATH=. timeout 60 python3.11 reproduce.py", ["python"]),
        ("FOO=1 ./gradlew test --info", ["gradle"]),
        ("./mvnw -V clean test -Dtest=FooTest", ["mvn"]),
        ("npx jest --watch && npm run build", ["jest", "npm"]),
        ("poetry run pytest -k cache", ["poetry", "pytest"]),
        ("uv pip install -e . && uvx ruff check .", ["uv", "ruff"]),
        ("kubectl exec -it pod-1 -n prod -- jmap -histo 1", ["kubectl", "jmap"]),
        (
            "docker run --rm --name t -v $PWD:/src python:3.11 pip install -r r.txt",
            ["docker", "pip"],
        ),
        ("bash -lc 'strace -f -e trace=network curl -s http://x'", ["strace", "curl"]),
        ("ssh deploy@web-3 'ps aux | grep java; free -m'", ["ssh", "ps", "free"]),
        ("perf record -g -- /usr/local/bin/redis-server", ["perf", "redis-server"]),
        ("gdb -batch -ex bt ./server core.123", ["gdb"]),
        ("gdb --args python app.py", ["gdb", "python"]),
        ("for f in *.py; do black $f; done", ["black"]),
        ("if [ -f x ]; then make -j4; fi", ["make"]),
        ("watch -n 1 'df -h'", ["df"]),
        ("xargs -n1 pytest < files.txt", ["pytest"]),
        ("nohup java -Xmx2g -jar app.jar > log 2>&1 &", ["java"]),
        ("gcc-12 -O2 x.c && clang++-15 y.cc", ["gcc", "clang++"]),
        ("/usr/bin/python3 -V; /opt/conda/bin/pip list", ["python", "pip"]),
        ("vim src/app.py", ["vim"]),
        ("git status && git diff HEAD~1 | less", ["git"]),
        ("echo $(date) && ls -la && cat x | sed -n 1,5p", []),
        ("./reproduce.sh && bash run_tests.sh", []),
        ("find . -name '*.py' -exec grep -l foo {} \\;", []),
    ],
)
def test_tools_in_commands(command: str, expected: list[str]) -> None:
    assert _names(tools_in_command(command)) == expected


def test_kinds() -> None:
    uses = extract_tools("vim x.py && python -m pytest && node app.js && kubectl get pods")
    assert uses == [
        ToolUse("vim", "editor"),
        ToolUse("pytest", "cli"),
        ToolUse("node", "runtime"),
        ToolUse("kubectl", "cli"),
    ]


def test_inline_python_and_heredocs_are_read_for_imports() -> None:
    assert extract_tools('python -c "import sys, yaml; print(yaml.__version__)"') == [
        ToolUse("python", "runtime"),
        ToolUse("yaml", "library"),
    ]
    written = "cat <<'EOF' > repro.py\nimport requests\nfrom django.db import models\nEOF\n"
    assert _names(extract_tools(written + "python repro.py")) == ["python", "requests", "django"]
    # a heredoc fed to something that is not code is not read
    assert extract_tools("cat <<EOF > notes.txt\nimport requests\nEOF") == []


def test_the_memory_leak_session_fixture(fixtures_dir: Path) -> None:
    script = (fixtures_dir / "text" / "memory_leak_session.sh").read_text()
    assert _names(extract_tools(script)) == [
        "ps", "pmap", "kubectl", "jmap", "python", "valgrind", "cmake", "make", "git",
        "psutil", "matplotlib",
    ]  # fmt: skip
    # the stored command is sanitized first; the tools must survive that
    assert extract_tools(sanitize(script).text) == extract_tools(script)


@pytest.mark.parametrize(
    ("code", "language", "expected"),
    [
        ("import numpy as np\nfrom sklearn.linear_model import LinearRegression\nimport os", None,
         ["numpy", "sklearn"]),
        ("from . import sibling\nfrom .models import User\nimport json", "python", []),
        ("+import pandas as pd\n import os\n-import scipy\n def broken(:", None, ["pandas"]),
        ("import org.apache.hadoop.fs.FileSystem;\nimport static org.junit.Assert.assertEquals;\n"
         "import java.util.List;\nimport javax.servlet.http.HttpServlet;\nimport lombok.Data;",
         None, ["org.apache.hadoop", "org.junit", "javax.servlet", "lombok"]),
        ("const express = require('express');\nimport React from 'react';\n"
         "import {x} from '@babel/core/lib/y';\nimport './styles.css';\n"
         "const fs = require('node:fs');", None, ["express", "react", "@babel/core"]),
    ],
)  # fmt: skip
def test_libraries_in_code(code: str, language: str | None, expected: list[str]) -> None:
    uses = libraries_in_code(code, language)
    assert _names(uses) == expected
    assert all(use.kind == "library" for use in uses)


def test_extract_tools_dedupes_by_name_commands_first() -> None:
    uses = extract_tools("python -m pytest -x", code="import pytest\nimport hypothesis")
    assert uses == [ToolUse("pytest", "cli"), ToolUse("hypothesis", "library")]
    assert extract_tools() == [] and extract_tools(None, None) == []


@pytest.mark.parametrize(
    ("action_type", "command", "parameters", "expected"),
    [
        # SWE-agent: the body of an edit is file content, however much it looks like commands
        ("edit", "edit 3:6\n    missing = [e for e in required]\n    if missing:\n        raise "
         "AttributeError(missing)\nend_of_edit", {"tool": "edit", "path": "/repo/handler.py"}, []),
        ("edit", "insert 'from marshmallow.fields import TimeDelta\nprint(td.serialize(x))'",
         {"tool": "insert", "path": "/testbed/reproduce.py"}, ["marshmallow"]),
        # OpenHands: the editor is named by its parameters; its content is read as the file's
        ("edit", "str_replace /w/src/app.ts", {"tool": "edit", "command": "str_replace",
         "path": "/w/src/app.ts", "new_str": "import axios from 'axios';"}, ["axios"]),
        ("edit", "create /w/notes.md", {"tool": "edit", "path": "/w/notes.md",
         "file_text": "import os\nrm -rf /"}, []),
        ("read", "str_replace_editor view /w/a.py", {"tool": "str_replace_editor"},
         ["str_replace_editor"]),
        # an IPython cell: Python, with shell escapes; helper calls are no tools
        ("command", "edit_file_by_replace(\n'/w/App.tsx',\nto_replace='a b')\n!pip install "
         "requests\n%pip install numpy\nimport pandas as pd",
         {"tool": "run_ipython", "language": "python"}, ["pip", "pandas"]),
        # a shell command stays a shell command
        ("command", "cd /x && python -m pytest -x", {}, ["pytest"]),
        ("command", None, None, []),
    ],
)  # fmt: skip
def test_tools_of_an_action_are_read_by_what_the_action_is(
    action_type: str, command: str | None, parameters: dict[str, object] | None,
    expected: list[str],
) -> None:  # fmt: skip
    assert _names(tools_of_action(action_type, command, parameters)) == expected


@pytest.mark.parametrize(
    ("token", "name"),
    [
        ("python3.11", "python"),
        ("pip3", "pip"),
        ("py.test", "pytest"),
        ("./gradlew", "gradle"),
        ("/usr/bin/valgrind", "valgrind"),
        ("./build/server", None),
        ("run.sh", None),
        ("$CMD", None),
    ],
)
def test_program_name(token: str, name: str | None) -> None:
    assert program_name(token) == name


@settings(deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_unique_lowercase_names_and_never_raises(text: str) -> None:
    uses = extract_tools(text, code=text)
    names = _names(uses)
    assert len(names) == len(set(names))
    assert all(name == name.lower() and name.strip() == name and name for name in names)


@pytest.mark.shared
def test_real_agent_commands_name_real_tools(shared_dir: Path) -> None:
    found: set[str] = set()
    for path in sorted((shared_dir / "trajectories").rglob("*.traj.json")):
        for message in json.loads(path.read_text()).get("messages", []):
            if message.get("role") != "assistant":
                continue
            for block in re.findall(r"```bash\n(.*?)```", message.get("content", ""), re.S):
                found.update(_names(extract_tools(block)))
    assert {"python", "git", "pytest"} <= found
    assert not found & {"cd", "ls", "cat", "grep", "sed", "echo"}


def test_a_here_string_does_not_hide_the_commands_after_it() -> None:
    assert _names(tools_in_command("grep -q ok <<< true\npytest -x\ntrue")) == ["pytest"]
