"""Tools: the programs an episode ran and the libraries its code imported, as ``Tool`` nodes.

A shell command is split into simple commands (pipelines, ``&&``, ``;``, subshells,
``$( )``) by the one shell tokenizer (``ingest/code/commands.py``), heredoc bodies are
set aside (a body fed to ``python -`` or written to a ``.py`` file is code, read for its
imports), and each simple command is resolved to the program it really runs: through
``sudo``/``env``/``timeout`` wrappers, into ``bash -c '…'``, ``python -m pytest``, ``npx
jest``, ``poetry run``, ``kubectl exec … --``, ``docker exec``, ``ssh host 'cmd'``, and
through tracers (``strace``, ``valgrind``, ``perf``), which are tools themselves and also
run one.

Shell plumbing (``cd``, ``ls``, ``cat``, ``grep``, ``sed``, ``echo``, ``mkdir`` …) is
left out on purpose: it is in nearly every step of every trajectory, so as a
``Tool`` node it would link everything to everything and say nothing. Diagnostic
programs stay, however ordinary (``ps``, ``top``, ``df``, ``free``, ``kill``).
"""

from __future__ import annotations

import re

from metisgraph.ingest.code import commands
from metisgraph.ingest.tools.libraries import libraries_in_code
from metisgraph.ingest.tools.uses import ToolUse, dedupe

__all__ = ["EDITORS", "PLUMBING", "RUNTIMES", "program_name", "tools_in_command"]


PLUMBING = frozenset(
    {
        "cd", "echo", "printf", "cat", "ls", "ll", "head", "tail", "grep", "egrep", "fgrep",
        "rg", "ag", "sed", "awk", "gawk", "cut", "sort", "uniq", "wc", "tr", "tee", "xargs",
        "true", "false", "test", "[", "[[", "]]", "export", "set", "unset", "source", ".",
        "exit", "sleep", "mkdir", "rmdir", "touch", "cp", "mv", "rm", "ln", "pwd", "pushd",
        "popd", "read", "alias", "eval", "wait", "clear", "history", "type", "which",
        "whoami", "basename", "dirname", "nl", "less", "more", "yes", "seq", "column", "rev",
        "paste", "find", "fd", "chmod", "chown", "date", "local", "return", "shift", "trap",
        "declare", "let", ":", "realpath", "readlink", "stat", "file", "tar", "gzip",
        "gunzip", "zip", "unzip", "base64", "md5sum", "sha256sum", "tree", "hexdump", "od",
        "fold", "fmt", "expand", "comm", "join", "split", "install", "mktemp", "printenv",
        "hostname", "id", "tput", "stty", "reset", "bc", "expr", "cmp", "dos2unix",
        # agent interfaces (SWE-agent, OpenHands): navigation, not tools
        "open", "goto", "scroll_up", "scroll_down", "create", "edit", "search_file",
        "search_dir", "find_file", "submit", "end_of_edit", "finish", "think",
    }
)  # fmt: skip
EDITORS = frozenset(
    {"vim", "vi", "nvim", "nano", "emacs", "code", "subl", "ed", "str_replace_editor",
     "str_replace_based_edit_tool"}
)  # fmt: skip
RUNTIMES = frozenset({"python", "pypy", "node", "java", "ruby", "perl", "php", "deno", "bun"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "busybox"})
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "while", "until", "do", "done", "esac", "function",
     "!", "{", "}", "time", "coproc", "in"}
)  # fmt: skip
_LOOP_HEADERS = frozenset({"for", "select", "case"})
# Wrappers that only change how a command runs; the options listed take a value.
_TRANSPARENT = {
    "sudo": "ugCDhprtUT", "doas": "uC", "env": "uCS", "nohup": "", "nice": "n",
    "ionice": "cnp", "timeout": "sk", "command": "", "builtin": "", "exec": "a",
    "stdbuf": "ioe", "unbuffer": "", "taskset": "", "chrt": "", "setsid": "",
    "xvfb-run": "asnef", "caffeinate": "tw", "noglob": "", "watch": "nd", "xargs": "IdLnPs",
}  # fmt: skip
_POSITIONAL_BEFORE_COMMAND = {"timeout": 1, "taskset": 1, "chrt": 1}
# Tools that run another command after their own options.
_TRACERS = {
    "strace": "eoOpsuEabIPSX", "ltrace": "eoOpsuaAnS", "valgrind": "", "heaptrack": "o",
    "catchsegv": "", "memusage": "", "py-spy": "ro", "perf": "eoFcCtupG",
    "mpirun": "nHx", "mpiexec": "nHx", "srun": "nNptJ", "nsys": "ot", "ncu": "o",
    "gdb": "exp",
}  # fmt: skip
_RUNNERS = frozenset({"npx", "bunx", "pnpx", "uvx", "pipx"})
# package managers whose "run"/"exec" runs a tool; npm/yarn "run" runs a script, not a tool
_MANAGER_RUN = {
    "uv": {"run"}, "poetry": {"run"}, "pipenv": {"run"}, "pdm": {"run"}, "hatch": {"run"},
    "rye": {"run"}, "conda": {"run"}, "mamba": {"run"}, "micromamba": {"run"},
    "bundle": {"exec"}, "npm": {"exec"}, "pnpm": {"exec", "dlx"}, "yarn": {"dlx"},
    "pipx": {"run"},
}  # fmt: skip
_ALIASES = {
    "py": "python", "py.test": "pytest", "mvnw": "mvn", "gradlew": "gradle", "nodejs": "node",
    "pypy3": "pypy", "ipython3": "ipython", "docker.io": "docker", "podman-compose": "podman",
}  # fmt: skip
_SCRIPT = re.compile(r"\.(?:sh|bash|py|js|mjs|ts|rb|pl|php|jar|bat|ps1)$")
_PROGRAM = re.compile(r"[A-Za-z_][\w.+-]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_REDIRECT = re.compile(r"\d*(?:>>?|<<?<?|&>>?|>&|<&)(.*)")


def program_name(token: str) -> str | None:
    """The canonical name of the program a command word runs, or None for a script or value."""
    folder, _, base = token.rpartition("/")
    base = base.lower().removesuffix(".exe")
    if not _PROGRAM.fullmatch(base) or _SCRIPT.search(base):
        return None
    # ./server and build/app are the project's own programs; /usr/bin/valgrind is a tool
    system = folder.startswith("/") and folder.endswith(("/bin", "/sbin"))
    if folder and not system and base not in {"mvnw", "gradlew"}:
        return None
    if re.fullmatch(r"python[0-9.]*", base):
        return "python"
    if re.fullmatch(r"pip[0-9.]*", base):
        return "pip"
    base = _ALIASES.get(base, base)
    return re.sub(r"-\d+(?:\.\d+)*$", "", base) or None  # gcc-12, clang-15, pytest-3


def _kind(name: str) -> str:
    if name in EDITORS:
        return "editor"
    return "runtime" if name in RUNTIMES else "cli"


# --- splitting a script -------------------------------------------------------------------

_CODE_TARGET = re.compile(r"(?:>|\btee(?:[ \t]+-a)?)[ \t]*['\"]?([\w./~-]+\.(py|js|mjs|ts|java))\b")
_LANGUAGE_OF = {"py": "python", "js": "javascript", "mjs": "javascript", "ts": "javascript",
                "java": "java"}  # fmt: skip


def _heredocs(script: str) -> tuple[str, list[tuple[str, str | None]]]:
    """The script without heredoc bodies, and each body with the language it is code in."""
    kept: list[str] = []
    cursor = 0
    docs = commands.heredocs(script)
    for doc in docs:
        kept += (script[cursor : doc.start + len(doc.command)], "\n")
        cursor = doc.end
    kept.append(script[cursor:])
    return "".join(kept), [(doc.body, _heredoc_language(doc.command)) for doc in docs]


def _heredoc_language(line: str) -> str | None:
    target = _CODE_TARGET.search(line)
    if target:
        return _LANGUAGE_OF[target.group(2)]
    programs = [program_name(w) for w in line.split()[:3]]
    if "python" in programs:
        return "python"
    return "javascript" if "node" in programs else None


# --- resolving a simple command -----------------------------------------------------------


def _skip_options(
    words: list[str], i: int, value_letters: str, long_values: frozenset[str] = frozenset()
) -> int:
    """Past the options at ``words[i:]``; those in ``value_letters`` or ``long_values`` take one."""
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        word = words[i]
        i += 1
        if word == "--":
            break
        short = not word.startswith("--") and len(word) == 2 and word[1] in value_letters
        if short or word in long_values:
            i += 1
    return i


def _strip_redirections(words: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        redirect = _REDIRECT.fullmatch(word)
        if redirect:
            skip = not redirect.group(1)  # "> file" takes the next word; ">file" does not
            continue
        kept.append(word)
    return kept


def _resolve(words: list[str], depth: int = 0) -> list[ToolUse]:
    """The tools a simple command runs, unwrapping wrappers and runners."""
    words = _strip_redirections(words)
    i = 0
    while i < len(words) and depth < 6:
        word = words[i]
        if _ASSIGNMENT.match(word) or word in _KEYWORDS:
            i += 1
            continue
        if word in _LOOP_HEADERS:
            return []
        if any(c.isspace() for c in word):  # watch 'df -h', sudo sh -c "…": a command string
            return tools_in_command(word, depth + 1)
        name = program_name(word)
        if name is None or (name in PLUMBING and name not in _TRANSPARENT):
            return []
        if name in _TRANSPARENT:
            i = _skip_options(words, i + 1, _TRANSPARENT[name])
            i += _POSITIONAL_BEFORE_COMMAND.get(name, 0)
            continue
        return _program(name, words, i + 1, depth)
    return []


def _program(name: str, words: list[str], rest: int, depth: int) -> list[ToolUse]:
    if name in _SHELLS:
        return _shell(words, rest, depth)
    if name in {"python", "pypy"}:
        return _python(name, words, rest)
    if name in _RUNNERS:
        start = _skip_options(words, rest, "p")
        return _resolve(words[start:], depth + 1) if start < len(words) else [ToolUse(name, "cli")]
    uses = [ToolUse(name, _kind(name))]
    if name in _TRACERS:
        start = _skip_options(words, rest, _TRACERS[name])
        if name == "perf" and start < len(words):  # perf record|stat|trace [options] cmd
            start = _skip_options(words, start + 1, _TRACERS[name])
        if name == "gdb" and "--args" not in words[rest:start]:
            return uses  # "gdb ./server core" debugs a program, it does not run one
        return uses + _resolve(words[start:], depth + 1)
    if name in _MANAGER_RUN and rest < len(words) and words[rest] in _MANAGER_RUN[name]:
        start = _skip_options(words, rest + 1, "npe")
        return uses + _resolve(words[start:], depth + 1)
    return uses + _remote(name, words, rest, depth)


def _shell(words: list[str], rest: int, depth: int) -> list[ToolUse]:
    """``bash -c 'cmd'`` runs cmd; ``bash script.sh`` runs a script we cannot see."""
    for i in range(rest, len(words)):
        word = words[i]
        if not word.startswith("-"):
            return []
        if "c" in word.lstrip("-") and not word.startswith("--") and i + 1 < len(words):
            return tools_in_command(words[i + 1], depth + 1)
    return []


def _python(name: str, words: list[str], rest: int) -> list[ToolUse]:
    """``python -m pytest`` runs pytest; ``python -c code`` imports libraries."""
    i = rest
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        option = words[i]
        if option.startswith("-m"):
            module = option[2:] or (words[i + 1] if i + 1 < len(words) else "")
            return [ToolUse(module.lower(), "cli")] if module else [ToolUse(name, "runtime")]
        if option.startswith("-c"):
            code = option[2:] or (words[i + 1] if i + 1 < len(words) else "")
            return [ToolUse(name, "runtime"), *libraries_in_code(code, "python")]
        i += 2 if option in {"-W", "-X", "-Q"} else 1
    return [ToolUse(name, "runtime")]


_CONTAINER_OPTIONS = frozenset(
    {
        "--name", "--network", "--entrypoint", "--env", "--volume", "--workdir", "--user",
        "--memory", "--cpus", "--platform", "--mount", "--env-file", "--label", "--publish",
        "--hostname", "--add-host", "--ulimit", "--cap-add", "--device", "--shm-size",
    }
)  # fmt: skip


def _remote(name: str, words: list[str], rest: int, depth: int) -> list[ToolUse]:
    """Commands run elsewhere: ``kubectl exec … -- cmd``, ``docker exec c cmd``, ``ssh h cmd``."""
    if name == "kubectl" and "--" in words[rest:]:
        return _resolve(words[words.index("--", rest) + 1 :], depth + 1)
    if name in {"docker", "podman"} and rest < len(words) and words[rest] in {"exec", "run"}:
        start = _skip_options(words, rest + 1, "eupvwlmh", _CONTAINER_OPTIONS)
        return _resolve(words[start + 1 :], depth + 1)  # after the container or image
    if name == "ssh":
        start = _skip_options(words, rest, "bcDEeFIiJLlmOoPpQRSWw")
        remote = " ".join(words[start + 1 :])
        return tools_in_command(remote, depth + 1) if remote else []
    return []


def tools_in_command(command: str, depth: int = 0) -> list[ToolUse]:
    """Programs a shell command runs (and libraries its inline code imports), in order."""
    if depth > 6:
        return []
    script, bodies = _heredocs(command)
    uses: list[ToolUse] = []
    for simple in commands.segments(script):
        uses += _resolve(commands.words(simple), depth)
    for body, language in bodies:
        if language is not None:
            uses += libraries_in_code(body, language)
    return dedupe(uses)
