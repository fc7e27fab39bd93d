"""The files recall's question passes through, from the GraphQL resolver to the Cypher.

    python bench/recall_path.py            # the stops, the files and the returns, listed
    python bench/recall_path.py --json     # the same as one JSON object

One recall runs in-process through the GraphQL schema, against the Neo4j of the settings
(NEO4J_URI, or the embedded one) and the real model, over two episodes recorded through
the schema in a project of their own that is forgotten afterwards. A profile hook (this
thread: the model's own thread is not ours) follows the question as a reader follows the
`query` argument: every call of ours on the way to a Cypher query whose arguments hold the
question's marker word (as text, or inside a list, a dict or an object), the calls those
make with it within their file, and one step into each other file they hand it to. A
*stop* is a visit to a file (visits in a row count once); a *return* is a stop in a file
the path had already left. Coroutine suspensions are not returns; a coroutine run as a
task counts as called by the function that made it. `bench/ingest_path.py` does the same
for one ingested record.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dis
import gc
import json
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not bench/ (whose names must not shadow packages)

import metisgraph.api  # noqa: E402
from metisgraph.api.auth import Caller  # noqa: E402
from metisgraph.api.graphql.context import Context  # noqa: E402
from metisgraph.api.graphql.schema import build_schema  # noqa: E402
from metisgraph.api.services import Services, open_services  # noqa: E402

MARKER = "zebrafish"
STORE = "graph/store.py"  # where Cypher is sent
PACKAGE = str(Path(metisgraph.api.__file__).resolve().parents[1]) + "/"
_YIELDS = {dis.opmap[name] for name in ("YIELD_VALUE",) if name in dis.opmap}
_DEPTH = 5

RECALL = """
query Path($project: String!, $query: String!, $error: String) {
  recall(project: $project, query: $query, k: 3,
         context: {error: $error, tags: ["memory"], tools: ["jmap"], environment: {os: "linux"}},
         filter: {outcome: ["success", "failure"]}) {
    hits { score episode { id summary } snippets { relation snippet { id } } errors { key } }
    abstained
  }
}
"""

RECORD = """
mutation Record($inputs: [EpisodeInput!]!) { recordEpisodes(inputs: $inputs) { written } }
"""


def _carries(value: Any, depth: int = _DEPTH) -> bool:
    """Whether a value holds the marker: as text, or inside a container or an object."""
    if isinstance(value, str):
        return MARKER in value.lower()
    if depth == 0 or isinstance(value, int | float | bytes | type(None)):
        return False
    if isinstance(value, dict):
        return any(_carries(v, depth - 1) for v in list(value.values())[:50])
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)[:50]
        return (
            bool(items)
            and not isinstance(items[0], float)
            and any(_carries(v, depth - 1) for v in items)
        )
    fields = getattr(value, "__dict__", None)
    if isinstance(fields, dict) and not isinstance(value, type):
        return any(_carries(v, depth - 1) for v in list(fields.values())[:50])
    return False


def _ours(frame: FrameType | None) -> str | None:
    """The frame's file relative to the package when it is ours, else None."""
    if frame is None:
        return None
    path = frame.f_code.co_filename
    return path[len(PACKAGE) :] if path.startswith(PACKAGE) else None


def _holds_question(frame: FrameType) -> bool:
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[: count + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)]
    return any(_carries(frame.f_locals.get(name)) for name in names)


@dataclass(frozen=True)
class _Call:
    file: str
    name: str
    parent: int | None  # the nearest recorded caller
    carrier: bool  # its arguments hold the marker
    task: int  # the asyncio task it runs in: each task's path is its own


@dataclass
class Route:
    """The files a value passed through: one entry per visit, with the function entered."""

    visits: list[tuple[str, str]] = field(default_factory=list)

    def visit(self, file: str, name: str) -> None:
        if not self.visits or self.visits[-1][0] != file:
            self.visits.append((file, name))

    def summary(self) -> dict[str, Any]:
        files = [f for f, _ in self.visits]
        return {
            "stops": len(files),
            "files": len(set(files)),
            "returns": sum(f in files[:i] for i, f in enumerate(files)),
            "path": [f"{f}:{n}" for f, n in self.visits],
        }


@dataclass
class Routes:
    """The routes of the tasks a question ran in (channels asked side by side have their own)."""

    routes: list[Route]

    def summary(self) -> dict[str, Any]:
        each = [r.summary() for r in self.routes if r.visits]
        files = {stop.split(":")[0] for r in each for stop in r["path"]}
        return {
            "stops": sum(r["stops"] for r in each),
            "files": len(files),
            "returns": sum(r["returns"] for r in each),
            "tasks": [r["path"] for r in each],
        }


def _task() -> int:
    try:
        return id(asyncio.current_task())
    except RuntimeError:  # no running loop
        return 0


class _Recorder:
    """A profile hook: the calls of ours (whether their arguments hold the marker), returns."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.events: list[tuple[str, int]] = []  # ("call" | "return", index in calls)
        self._index: dict[int, int] = {}  # id(frame) -> index in calls
        self._frames: list[FrameType] = []  # kept alive so ids are not reused while tracing

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self._call(frame)
        elif event == "return" and id(frame) in self._index and not _suspended(frame):
            self.events.append(("return", self._index[id(frame)]))

    def _call(self, frame: FrameType) -> None:
        file = _ours(frame)
        if file is None or id(frame) in self._index:
            return  # a resumed coroutine is no new call
        parent = self._parent(frame)
        self._index[id(frame)] = len(self.calls)
        self._frames.append(frame)
        carrier = _holds_question(frame)
        self.calls.append(_Call(file, frame.f_code.co_name, parent, carrier, _task()))
        self.events.append(("call", len(self.calls) - 1))

    def _parent(self, frame: FrameType) -> int | None:
        """The nearest recorded caller; for a coroutine run as a task, the call that made it."""
        caller = frame.f_back
        while caller is not None and id(caller) not in self._index:
            caller = caller.f_back
        if caller is not None:
            return self._index[id(caller)]
        for owner in gc.get_referrers(frame):
            origin = getattr(owner, "cr_origin", None)
            if getattr(owner, "cr_frame", None) is frame and origin:
                file, _, name = origin[0]
                made_in = (file.removeprefix(PACKAGE), name)
                found = [n for n, c in enumerate(self.calls) if (c.file, c.name) == made_in]
                return found[-1] if found else None
        return None

    def routes(self) -> dict[str, Routes]:
        """The route to the last Cypher the value reached, and the whole way back up.

        Counted: the calls on the way to the store (its ancestors), the calls they make
        with the value, and so on within a file; a call into another file off that way is
        a stop, what it calls in turn is its own business.
        """
        spine: set[int] = set()
        for n, call in enumerate(self.calls):
            at = self.calls[n].parent if call.file == STORE else None
            if at is None or not self.calls[at].carrier:
                continue  # the store called with something else than the question
            spine.add(n)
            while at is not None and at not in spine and self.calls[at].carrier:
                spine.add(at)
                at = self.calls[at].parent
        counted = set(spine)
        for n, call in enumerate(self.calls):  # parents come before their calls
            parent = call.parent
            if not call.carrier or parent is None or parent not in counted:
                continue
            above = self.calls[parent]
            entered = parent not in spine and above.file != self.calls[above.parent or 0].file
            if parent in spine or not entered:
                counted.add(n)
        last = max(
            (
                i
                for i, (kind, n) in enumerate(self.events)
                if n in spine and kind == "call" and self.calls[n].file == STORE
            ),
            default=-1,
        )
        to_cypher: dict[int, Route] = defaultdict(Route)
        whole: dict[int, Route] = defaultdict(Route)
        for i, (kind, n) in enumerate(self.events):
            call = self.calls[n]
            if n not in counted:
                continue
            if kind == "call":
                stop = (call.file, call.name)
            elif call.parent in counted and self.calls[call.parent].task == call.task:
                parent = self.calls[call.parent]
                stop = (parent.file, parent.name)
            else:
                continue  # a task's end returns to no caller
            whole[call.task].visit(*stop)
            if i <= last:
                to_cypher[call.task].visit(*stop)
        return {
            "to_cypher": Routes(list(to_cypher.values())),
            "round_trip": Routes(list(whole.values())),
        }


def _suspended(frame: FrameType) -> bool:
    """A coroutine or generator that yields, not one that returns."""
    return frame.f_lasti >= 0 and frame.f_code.co_code[frame.f_lasti] in _YIELDS


@contextlib.contextmanager
def _recording() -> Iterator[_Recorder]:
    recorder = _Recorder()
    depth = sys.get_coroutine_origin_tracking_depth()
    sys.set_coroutine_origin_tracking_depth(1)  # a task's coroutine says who made it
    sys.setprofile(recorder)
    try:
        yield recorder
    finally:
        sys.setprofile(None)
        sys.set_coroutine_origin_tracking_depth(depth)


async def _execute(services: Services, document: str, variables: dict[str, Any]) -> Any:
    schema = build_schema(services.settings.api)
    context = Context(services=services, caller=Caller("bench", None))
    result = await schema.execute(document, variable_values=variables, context_value=context)
    if result.errors:
        raise RuntimeError(f"{result.errors}")
    return result.data


def _episode(project: str, n: int) -> dict[str, Any]:
    return {
        "project": project,
        "taskId": "t1",
        "step": n,
        "summary": f"the {MARKER} cache grew for days until the heap ran out (step {n})",
        "error": "java.lang.OutOfMemoryError: Java heap space\n\tat com.x.Cache.put(Cache.java:42)",
        "outcome": "success",
        "tags": ["area:memory"],
        "tools": ["jmap"],
        "environment": {"os": "linux", "runtime": "java", "runtimeVersion": "21"},
        "action": {"type": "command", "command": "jmap -histo 1234"},
        "snippets": [{"code": "jmap -dump:live,format=b,file=heap.hprof 1234", "kind": "shell"}],
    }


async def measure() -> dict[str, Any]:
    project = f"path-{uuid.uuid4().hex[:8]}"
    async with open_services() as services:
        try:
            await _execute(services, RECORD, {"inputs": [_episode(project, n) for n in (1, 2)]})
            variables = {
                "project": project,
                "query": f"the {MARKER} cache keeps growing",
                "error": "java.lang.OutOfMemoryError: Java heap space",
            }
            await _execute(services, RECALL, variables)  # warm: caches and the model
            with _recording() as recorder:
                answer = await _execute(services, RECALL, variables)
        finally:
            await services.store.run("forget_project", project=project)
    if not answer["recall"]["hits"]:
        raise RuntimeError("the recall found nothing: the path would be short of its end")
    return {way: route.summary() for way, route in recorder.routes().items()}


def _print(name: str, figures: dict[str, Any]) -> None:
    print(
        f"{name}: {figures['stops']} stops in {figures['files']} files, "
        f"{figures['returns']} returns"
    )
    for number, path in enumerate(figures["tasks"], start=1):
        print(f"  task {number}:")
        for n, stop in enumerate(path, start=1):
            print(f"    {n:2}. {stop}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    options = parser.parse_args()
    figures = asyncio.run(measure())
    if options.json:
        print(json.dumps(figures, indent=2))
        return
    for name, found in figures.items():
        _print(name, found)


if __name__ == "__main__":
    main()
