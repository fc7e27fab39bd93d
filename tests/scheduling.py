"""How `make test`'s two workers share the suite (pytest-xdist, ``--dist loadgroup``).

A worker takes a whole test module at a time (a module's tests share its fixtures and some
count what the store holds), except that modules using one costly session fixture go to ONE
worker together: each worker builds session fixtures for itself, so the mini-swe-agent run
ingested with the real model (``shared_run``), ../shared/trajectories (``shared_trajectories``)
or the scratch Neo4j (``scratch_neo4j``) were built twice whenever their modules landed on
both workers (measured on d8189e5, .ci/run's set: the run's ingest 104.8 s on the second
worker). And the costliest units go first: a run ends when its last unit does, so a
one-minute module handed out last left the other worker idle for that minute.

``group_and_order`` runs where the tests are collected (in each worker, the same on both)
and writes which unit each module belongs to to a file the controller named for the workers
(``publish_units``); ``ModuleGroupScheduling`` runs in the controller, which sees only the
test ids, and reads that file. (The ids themselves cannot carry the group: xdist's own
``xdist_group`` suffix is written to ``item._nodeid``, which pytest 9 no longer reads — with
it, the groups were silently ignored and each worker built the costly fixtures again.)
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

# Session fixtures worth a worker of their own, and roughly what building one costs (s, on
# this 2-core machine under the suite's own load, d8189e5): the units are ordered by these.
COSTLY_FIXTURES: dict[str, float] = {
    "shared_run": 100.0,  # 16 real agent runs ingested with the real model
    "shared_trajectories": 40.0,  # every run of ../shared/trajectories, stand-in model
    "scratch_neo4j": 20.0,  # a JVM started for the tests that kill, stop or wipe it
}
# A test's own cost by what it is marked (s): a test of a few seconds (``slow``: those of
# more, a JVM or a CLI process of their own, say theirs, ``slow(50)``), a sandboxed run, a
# browser page; else a call on the warm store and the model, else (no store, no model)
# hundredths of a second.
MARKED_COST: dict[str, float] = {"slow": 4.0, "browser": 2.0, "sandbox": 1.5}
SERVICE_COST, PLAIN_COST = 0.4, 0.02
SERVICES = frozenset({"neo4j_settings", "embedder"})


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class _Units:
    """Modules joined when they share a costly fixture (union-find over module names)."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, name: str) -> str:
        self.parent.setdefault(name, name)
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, a: str, b: str) -> None:
        first, second = sorted((self.find(a), self.find(b)))
        self.parent[second] = first


def _item_cost(item: pytest.Item) -> float:
    marked = [_marked_cost(item, name, cost) for name, cost in MARKED_COST.items()
              if name in item.keywords]  # fmt: skip
    if marked:
        return max(marked)
    return SERVICE_COST if SERVICES & set(getattr(item, "fixturenames", ())) else PLAIN_COST


def _marked_cost(item: pytest.Item, name: str, default: float) -> float:
    """The seconds a marker names (``slow(50)``), else its kind's."""
    marker = item.get_closest_marker(name)
    return float(marker.args[0]) if marker is not None and marker.args else default


def group_and_order(
    config: pytest.Config, items: list[pytest.Item], unbuilt: Iterable[str] = ()
) -> dict[str, str]:
    """Join the modules that share a costly fixture into one unit (named ``@fixture``),
    sort the items so the costliest units come first (modules keep their own order; ties
    keep the collection's) and return module -> unit for the modules joined (published to
    the controller when this is an xdist worker of ``--dist loadgroup``).
    ``unbuilt``: costly fixtures that skip here (../shared absent) and so cost nothing."""
    units = _Units()
    fixtures_of: dict[str, set[str]] = {}
    for item in items:
        module = _module(item.nodeid)
        used = set(getattr(item, "fixturenames", ())) & COSTLY_FIXTURES.keys()
        fixtures_of.setdefault(module, set()).update(used)
        for name in used:
            units.join(module, f"@{name}")
    cost = {units.find(module): 0.0 for module in fixtures_of}
    for name, built in COSTLY_FIXTURES.items():
        if name not in unbuilt and any(name in used for used in fixtures_of.values()):
            cost[units.find(f"@{name}")] += built
    for item in items:
        cost[units.find(_module(item.nodeid))] += _item_cost(item)
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(units.find(_module(item.nodeid)), index)

    def rank(item: pytest.Item) -> tuple[float, int]:
        unit = units.find(_module(item.nodeid))
        return (-round(cost[unit], 1), first_seen[unit])

    items.sort(key=rank)  # stable: a module's tests keep their order
    # A unit named after its fixture (``@name``) is a group of modules
    joined = {m: units.find(m) for m in fixtures_of if units.find(m).startswith("@")}
    publish_units(config, joined)
    return joined


# The key of the controller's file in each worker's ``workerinput``.
UNITS_KEY = "metisgraph_units"


def publish_units(config: pytest.Config, joined: dict[str, str]) -> None:
    """In an xdist worker: write module -> unit where the controller said (each worker
    writes the same map; the controller reads it once every worker has collected)."""
    target = getattr(config, "workerinput", {}).get(UNITS_KEY)
    if not target:
        return
    fd, partial = tempfile.mkstemp(dir=Path(target).parent, prefix="units-")
    with os.fdopen(fd, "w") as out:
        json.dump(joined, out)
    os.replace(partial, target)  # whole or absent: never half a file


def units_file(config: pytest.Config) -> Path:
    """The controller's file of units (a folder of its own, removed at the run's end)."""
    path: Path | None = getattr(config, "_metisgraph_units", None)
    if path is None:
        path = Path(tempfile.mkdtemp(prefix="metisgraph-units-")) / "units.json"
        config._metisgraph_units = path  # type: ignore[attr-defined]
        config.add_cleanup(lambda: _remove(path))
    return path


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)
    for stray in path.parent.glob("units-*"):
        stray.unlink(missing_ok=True)
    path.parent.rmdir()


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with whole modules: see the module's docstring."""
    from xdist.scheduler import LoadScopeScheduling

    published = units_file(config)

    class ModuleGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # the collection's order: costliest first
            self.unit_of: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.unit_of is None:  # first asked once every worker has collected
                self.unit_of = read_units(published)
            module = _module(nodeid)
            return self.unit_of.get(module, module)

    return ModuleGroupScheduling(config, log)


def read_units(path: Path) -> dict[str, str]:
    """Module -> unit as the workers published it ({} when none did: modules alone)."""
    try:
        units: dict[str, str] = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return units
