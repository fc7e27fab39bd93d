"""Tree-sitter's work on long code in a process of its own, stopped when it overruns.

Some grammars take quadratic time on odd input, and not only while they read it: a bash
pipeline of 20,000 commands (40 KB) or a Java line of 20,000 ``a<`` parses for 5–7 s after
its last byte is read, where `grammars.parse`'s budget (which stops feeding the parser) has
no hold. py-tree-sitter keeps the interpreter's lock while it parses, so in the service one
such snippet stops every request for that long (200 KB: minutes). Below `ISOLATE_ABOVE`
characters every grammar tried stays under ~0.1 s whatever the text, and code is read in
process; longer code is read by a worker process (spawned once, one request at a time),
killed after `TIMEOUT_S` (3 s; the worst cases above are stopped there, and the service goes
on meanwhile) — the code is then analysed without a tree, as on an overrun budget.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["ISOLATE_ABOVE", "TIMEOUT_S", "isolated", "stop_worker"]

log = logging.getLogger(__name__)

ISOLATE_ABOVE = 4_096  # characters
TIMEOUT_S = 3.0  # a whole analysis of 200 KB of ordinary code takes well under a second

_lock = threading.Lock()
_worker: _Worker | None = None


class _Overran(Exception):
    pass


class _Worker:
    """This interpreter running `_serve`: a process of its own, not one of
    multiprocessing's (whose spawn runs the caller's main script again in the child)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import _serve; _serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        # the connections own copies of the pipes' ends (each closes its own)
        self.requests = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.answers = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()

    def ask(self, function: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Any:
        self.requests.send((function, args))
        if not self.answers.poll(timeout):
            raise _Overran
        ok, value = self.answers.recv()
        if not ok:
            raise RuntimeError(value)
        return value

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.requests.close()
        self.answers.close()


def _serve() -> None:
    """The worker: each request on stdin answered on stdout, in turn, until stdin closes.
    Anything else the code prints goes to stderr (the answers' pipe is kept apart)."""
    answers = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    requests = Connection(0, writable=False)
    while True:
        try:
            function, args = requests.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[bool, Any] = (True, function(*args))
        except Exception as error:
            answer = (False, f"{type(error).__name__}: {error}")
        answers.send(answer)


def isolated(function: Callable[..., Any], code: str, *args: Any, overran: Any = None) -> Any:
    """``function(code, *args)``: in this process for short code, else in the worker.
    ``overran`` when the worker took longer than `TIMEOUT_S` or died (it is killed, and a
    new one serves the next request): never read again in this process, where the same
    work would hold the interpreter. ``function`` must be a module's (sent by name)."""
    if len(code) <= ISOLATE_ABOVE:
        return function(code, *args)
    global _worker
    with _lock:
        try:
            if _worker is None or not _worker.alive():
                _worker = _Worker()
            return _worker.ask(function, (code, *args), TIMEOUT_S)
        except (_Overran, OSError, EOFError) as error:
            why = f"overran {TIMEOUT_S:.0f} s" if isinstance(error, _Overran) else "worker died"
            log.warning(
                "code analysis of %d characters %s: read without a syntax tree", len(code), why
            )
            if _worker is not None:
                _worker.stop()
                _worker = None
            return overran


def stop_worker() -> None:
    """Stop the worker, if one runs (tests; it also ends with this process)."""
    global _worker
    with _lock:
        if _worker is not None:
            _worker.stop()
            _worker = None
