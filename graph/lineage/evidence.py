"""What an error says and what a step did, read from their text: the evidence attribution
weighs (graph/lineage/attribution.py).

An error *names* things: a missing module or package, files (its innermost own frame, a
path in the message), settings (an upper-case variable, an encoding), identifiers it quotes.
A step *does* things: it installs packages, writes files (an editor call, ``sed -i``, a
redirect, ``mv``/``cp``/``mkdir``/``touch``), sets variables, runs programs. Both are read
from what the graph stores (the error's sample, kind and frames; the step's command, action
type and parameters) with plain patterns — no source, run or label is special-cased.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

__all__ = [
    "ErrorSays",
    "StepDid",
    "error_says",
    "merged",
    "package_matches",
    "source_file_stems",
    "step_did",
]

# --- what an error says ----------------------------------------------------------------------

_MODULE = (
    re.compile(r"No module named '?([\w.\-]+)'?"),
    re.compile(r"cannot import name '?[\w.]+'? from '?([\w.]+)'?"),
    re.compile(r"Cannot find module '([^']+)'"),
    re.compile(r"Unable to locate package (\S+)"),
    re.compile(r"No matching distribution found for ([\w.\-]+)"),
    re.compile(r"package ([\w.]+) does not exist"),
    re.compile(r'provided by "([\w.\-]+)"'),
    re.compile(r"(?:^|\s)([\w.\-]+): command not found"),
    re.compile(r"command not found: ([\w.\-]+)"),
)
_LIBRARY_FRAME = re.compile(r"(?:site|dist)-packages/([A-Za-z_]\w*)/")
_PATH_QUOTED = re.compile(r"""['"`]((?:\.{0,2}/|[\w.\-]+/)[\w./\-]+)['"`]""")
_PATH_BARE = re.compile(
    r"(?:can't cd to|cannot access|cannot open|cannot stat)\s+'?(/?[\w./\-]+)'?"
)
_PATH_BEFORE_COLON = re.compile(r"(?:^|\s)((?:\.{0,2}/|/)?[\w.\-]+(?:/[\w.\-]+)+):")
# A source file's stem: the name before a known extension. Read with a linear scan
# (`source_file_stems`), never one pattern: a lazy path prefix before the stem costs the cube
# of a long unbroken word (a base64 or hex line in a sample: 2,000 characters took 12 s,
# 4,000 ~100 s, in the write transaction that derives the task's links).
_PATH_RUN = re.compile(r"[\w.\-/]+")
_STEM = re.compile(r"[\w\-]+")
_SOURCE_EXTENSION = re.compile(
    r"\.(?:py|java|kt|scala|c|h|cc|cpp|hpp|go|rs|ts|tsx|js|jsx|rb|php|cs|swift)\b"
)
_SETTING = re.compile(r"\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b")
_QUOTED_NAME = re.compile(r"""['"`]([A-Za-z_][\w]{3,})['"`]""")
_FUNCTION_CALLED = re.compile(r"\b([A-Za-z_]\w{2,})\(\) (?:got|missing|takes)")
_TOOL_KINDS = ("tool:", "shell:")
_ENCODING_KINDS = ("UnicodeEncodeError", "UnicodeDecodeError")
# Names too common to tell one file or identifier from another.
_COMMON = frozenset(
    [
        "__init__",
        "__main__",
        "main",
        "test",
        "tests",
        "self",
        "none",
        "true",
        "false",
        "null",
        "error",
        "errors",
        "object",
        "type",
        "value",
        "values",
        "data",
        "file",
        "path",
        "name",
        "self",
        "args",
        "kwargs",
        "init",
        "setup",
        "utils",
        "util",
        "index",
    ]
)


@dataclass(frozen=True)
class ErrorSays:
    """The things an error names, each lower-cased where names are compared loosely."""

    modules: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()  # file stems: the innermost own frame's, the message's
    paths: frozenset[str] = frozenset()  # paths the message names (missing, unreadable …)
    settings: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()  # identifiers the message quotes (a function, a name)
    frame: str | None = None  # the innermost own frame, as stored
    kind: str | None = None
    # A tool's failure told apart from another of the same tool by its first words; None for
    # errors of code, where another error is always another failure.
    shape: str | None = None


def source_file_stems(text: str) -> list[str]:
    """The stems of the source files ``text`` names, in order (``foo`` of ``src/foo.py``):
    each run of path characters read left to right, a stem being the first word (letters,
    digits, ``_``, ``-``) that a known extension ends, the reading going on after it. The
    answers of the pattern ``([\\w.\\-/]*?([\\w\\-]+)\\.(?:py|…))\\b``'s second group, in
    time linear in the text."""
    stems: list[str] = []
    for run in _PATH_RUN.finditer(text):
        at, end = run.start(), run.end()
        while at < end:
            word = _STEM.search(text, at, end)
            if word is None:
                break
            extension = _SOURCE_EXTENSION.match(text, word.end())  # \b sees the next character
            if extension is None:
                at = word.end()
                continue
            stems.append(word.group())
            at = extension.end()
    return stems


def error_says(
    kind: str | None, sample: str | None, frames: list[str] | None, symbols: list[str] | None
) -> ErrorSays:
    text = (sample or "")[:4000]
    # The message is at the top of a one-line error and at the bottom of a traceback.
    lines = text.splitlines()
    head = "\n".join(lines[:12] + lines[max(12, len(lines) - 12) :])
    modules = {m.group(1).strip(".").lower() for p in _MODULE for m in p.finditer(head)}
    # a library frame of the traceback: upgrading or pinning that library acts on it
    modules |= {m.group(1).lower() for m in _LIBRARY_FRAME.finditer(text)}
    paths = {m.group(1).rstrip("/.") for m in _PATH_QUOTED.finditer(head)}
    paths |= {m.group(1).rstrip("/.") for m in _PATH_BARE.finditer(head)}
    paths |= {m.group(1).rstrip("/.") for m in _PATH_BEFORE_COLON.finditer(head)}
    paths = {p for p in paths if len(p) > 2 and not p.startswith(("http", "//"))}
    files = {stem.lower() for stem in source_file_stems(head)}
    frame = next(iter(frames or ()), None)
    if frame:  # innermost first; its module or class names the file it lives in
        files |= {part.lower() for part in re.split(r"[./:$#]", frame)[-3:-1] if part}
    settings = set(_SETTING.findall(head))
    if any(k in (kind or "") + head for k in _ENCODING_KINDS):
        settings |= {"PYTHONIOENCODING", "LANG", "LC_ALL", "encoding"}
    names = {m.group(1) for m in _QUOTED_NAME.finditer(head)}
    names |= set(_FUNCTION_CALLED.findall(head))
    # a module's name is the module rule's (writing `import pytz` does not install it)
    names = {n for n in names if n.lower() not in _COMMON | modules and not n.isupper()}
    if (kind or "").startswith(_TOOL_KINDS):
        # A tool refusing a call or a path quotes its parameters and files, not code: only
        # the very path it names counts, not a file of the same name, nor a quoted word.
        files, names = set(), set()
        lines = [x.strip(" -[") for x in head.splitlines() if x.strip(" -[") not in ("", "ERROR:")]
        shape = " ".join([kind or "", *(lines[0].split()[:3] if lines else [])])
    else:
        shape = None
    return ErrorSays(
        modules=frozenset(m for m in modules if m and m.lower() not in _COMMON),
        files=frozenset(f for f in files if f not in _COMMON and len(f) > 2),
        paths=frozenset(paths),
        settings=frozenset(settings),
        names=frozenset(names),
        frame=frame,
        kind=kind,
        shape=shape,
    )


def merged(a: ErrorSays, b: ErrorSays) -> ErrorSays:
    """What two sightings of one error say together (the first's frame, kind and shape)."""
    return ErrorSays(
        modules=a.modules | b.modules,
        files=a.files | b.files,
        paths=a.paths | b.paths,
        settings=a.settings | b.settings,
        names=a.names | b.names,
        frame=a.frame,
        kind=a.kind,
        shape=a.shape,
    )


# --- what a step did -------------------------------------------------------------------------

_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?.*?\n(.*?)\n\s*\1\b", re.S)
_SPLIT = re.compile(r"&&|\|\||;|\n|\|")
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)=\S*$")
_INSTALLERS = (
    re.compile(r"\bpip3?\s+install\s+(.+)"),
    re.compile(r"\bpython[\d.]*\s+-m\s+pip\s+install\s+(.+)"),
    re.compile(
        r"\b(?:apt-get|apt|yum|dnf|apk|brew|conda|mamba)\s+(?:-\S+\s+)*(?:install|add)\s+(.+)"
    ),
    re.compile(r"\b(?:npm|pnpm)\s+(?:install|i|add)\s+(.+)"),
    re.compile(r"\byarn\s+add\s+(.+)"),
    re.compile(r"\b(?:gem|cargo|go)\s+(?:install|add|get)\s+(.+)"),
)
_REDIRECT = re.compile(r"(?<![0-9&])>>?\s*([^\s;&|<>]+)")
_SED_INPLACE = re.compile(r"\bsed\s+(?:-\w*\s+)*-i\S*\s")
_WRITE_PROGRAMS = ("mv", "cp", "mkdir", "touch", "tee", "patch", "ln", "git apply", "dos2unix")
_EDIT_TYPES = ("edit", "write", "create", "str_replace", "insert", "patch")
# A run's submission or finish restates what earlier steps did: it acts on no error itself.
_CLOSING_TYPES = ("submit", "finish")
_EDITOR_CALLS = ("create", "str_replace", "insert", "undo_edit", "edit")
_TRIVIAL = frozenset(
    [
        "cd",
        "echo",
        "ls",
        "cat",
        "head",
        "tail",
        "pwd",
        "grep",
        "find",
        "sleep",
        "true",
        "wc",
        "printf",
    ]
)


@dataclass(frozen=True)
class StepDid:
    """What one step did, read from its command, action type and parameters."""

    runs: tuple[str, ...] = ()  # the programs it ran, each normalised (no cd, env, pipes)
    installs: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()  # paths written or created
    sets: frozenset[str] = frozenset()  # variables and options it set
    tool: str | None = None  # the editor or program of its first action
    target: str | None = None  # the file or folder it acted on first
    text: str = ""  # the command and its parameters' text, for names it mentions
    edits: bool = False
    editor: bool = False  # an editor tool's call: when it failed, the tool made no change
    extra: dict[str, Any] = field(default_factory=dict)


def _words(segment: str) -> list[str]:
    return [w.strip("'\"") for w in segment.split()]


def _normalised(segment: str) -> tuple[str, set[str]]:
    """A segment without leading variable assignments and wrappers, and the variables set."""
    words = _words(segment)
    sets: set[str] = set()
    while words and (_ASSIGN.match(words[0]) or words[0] in ("env", "timeout", "sudo", "time")):
        if (m := _ASSIGN.match(words[0])) is not None:
            sets.add(m.group(1))
        words = words[1:]
        if words and words[0].isdigit():
            words = words[1:]  # timeout's seconds
    words = [w for w in words if not re.fullmatch(r"\d?>&?\d?|2>&1|/dev/null", w)]
    return " ".join(words), sets


def step_did(
    action_type: str | None,
    command: str | None,
    parameters: str | None,
    code: Iterable[str] = (),
) -> StepDid:
    if (action_type or "").lower() in _CLOSING_TYPES:
        return StepDid()
    params: dict[str, Any] = {}
    if parameters:
        try:
            loaded = json.loads(parameters)
            params = loaded if isinstance(loaded, dict) else {}
        except ValueError:
            params = {}
    raw = command or ""
    body = _HEREDOC.sub(" ", raw)  # a heredoc's lines are content, not commands
    runs: list[str] = []
    installs: set[str] = set()
    writes: set[str] = set()
    sets: set[str] = set()
    for m in _REDIRECT.finditer(body):
        if not m.group(1).startswith(("/dev/", "&")):
            writes.add(m.group(1))
    for segment in _SPLIT.split(body):
        normal, assigned = _normalised(segment.strip())
        sets |= assigned
        if not normal:
            continue
        words = normal.split()
        sets |= {m.group(1) for m in re.finditer(r"-D([A-Za-z_]\w*)=", normal)}
        for pattern in _INSTALLERS:
            if (found := pattern.search(normal)) is not None:
                installs |= {
                    w for w in found.group(1).split() if not w.startswith("-") and w != "install"
                }
        if _SED_INPLACE.search(normal + " ") or words[0] in _WRITE_PROGRAMS:
            targets = [w for w in words[1:] if not w.startswith("-")]
            if targets:
                writes.add(targets[-1])
                if words[0] in ("mkdir", "touch"):
                    writes |= set(targets)
        if words[0] not in _TRIVIAL:
            runs.append(normal)
    code = [c for c in code if c]
    for text in code:  # a patch it wrote or applied names the files it changes
        writes |= {m.group(1) for m in _DIFF_PATH.finditer(text) if m.group(1) != "/dev/null"}
    kind = (action_type or "").lower()
    path = params.get("path")
    sub = str(params.get("command") or params.get("tool") or "")
    editor = kind in _EDIT_TYPES or sub in _EDITOR_CALLS or "editor" in sub
    if editor and params:
        runs = []  # an editor call's command line is written by the adapter, not run
    program = runs[0].split()[0] if runs else raw.split()[0] if raw.split() else None
    tool = (sub or program) if editor else program
    edits = bool(writes) or kind in _EDIT_TYPES or sub in _EDITOR_CALLS
    if isinstance(path, str) and path and (kind in _EDIT_TYPES or sub in _EDIT_TYPES):
        writes.add(path)
    text = " ".join([raw, *code, *(str(v) for v in params.values() if isinstance(v, str))])
    if "settings.configure" in text or "os.environ" in text:
        sets |= {m for m in _SETTING_IN_TEXT.findall(text)}
    target = path if isinstance(path, str) and path else next(iter(sorted(writes)), None)
    if target is None and runs:
        target = next((w for w in runs[-1].split()[1:] if "/" in w or "." in w), None)
    return StepDid(
        runs=tuple(runs),
        installs=frozenset(installs),
        writes=frozenset(w.rstrip("/") for w in writes if w),
        sets=frozenset(sets),
        tool=tool,
        target=target,
        text=text,
        edits=edits,
        editor=editor and bool(params),
    )


_DIFF_PATH = re.compile(r"^(?:\+\+\+ b/|--- a/|diff --git a/)(\S+)", re.M)
_SETTING_IN_TEXT = re.compile(r"\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b")


def _package_words(spec: str) -> str:
    name = re.split(r"[=<>!~\[;@ ]", spec.strip().strip("'\""), maxsplit=1)[0]
    return name.lower().replace("_", "-")


# Distributions whose import name is another word (the well-known ones; not exhaustive).
_IMPORT_NAMES = {
    "pyyaml": "yaml",
    "pillow": "pil",
    "beautifulsoup4": "bs4",
    "scikit-learn": "sklearn",
    "scikit-image": "skimage",
    "opencv-python": "cv2",
    "python-dateutil": "dateutil",
    "attrs": "attr",
    "protobuf": "google",
    "pyzmq": "zmq",
    "msgpack-python": "msgpack",
}


def package_matches(module: str, spec: str) -> bool:
    """An installed spec stands for the module or package an error names: the same name
    (``pytz``, ``PyYAML`` for ``yaml`` is not guessed), its top-level module, or the same
    first word of a system package (``llvm-14-dev`` for ``llvm-dev``)."""
    wanted = module.lower().replace("_", "-")
    have = _package_words(spec)
    if not have:
        return False
    top = wanted.split(".")[0]
    if have in (wanted, top, "py" + top, "python-" + top, top + "-python") or top == have:
        return True
    if _IMPORT_NAMES.get(have) == top:
        return True
    first_w, first_h = wanted.split("-")[0], have.split("-")[0]
    return len(first_w) > 2 and first_w == first_h and "-" in wanted and "-" in have


def stem(path: str) -> str:
    name = PurePosixPath(path.strip("'\"")).name
    return name.split(".")[0].lower()
