"""How `make test`'s two workers share the suite (pytest-xdist, ``--dist loadgroup``).

A worker takes a whole test module at a time (a module's tests share its fixtures and some
count what the store holds), except that modules using one costly session fixture go to ONE
worker together: each worker builds session fixtures for itself, so the mini-swe-agent run
ingested with the real model (``shared_run``), ../shared/trajectories (``shared_trajectories``)
or the scratch Neo4j (``scratch_neo4j``) were built twice whenever their modules landed on
both workers (measured on d8189e5, .ci/run's set: the run's ingest 104.8 s on the second
worker). And the costliest units go first: a run ends when its last unit does, so a
one-minute module handed out last left the other worker idle for that minute.

``group_and_order`` runs where the tests are collected (in each worker, the same on both);
``ModuleGroupScheduling`` in the controller, which sees only the test ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

# Session fixtures worth a worker of their own, and roughly what building one costs (s, on
# this 2-core machine under the suite's own load, d8189e5): the units are ordered by these.
COSTLY_FIXTURES: dict[str, float] = {
    "shared_run": 100.0,  # 16 real agent runs ingested with the real model
    "shared_trajectories": 40.0,  # every run of ../shared/trajectories, stand-in model
    "scratch_neo4j": 20.0,  # a JVM started for the tests that kill, stop or wipe it
}
# A test's own cost by what it is marked (s): a JVM or a CLI process of its own, a
# sandboxed run, a browser page; else a call on the warm store and the model, else (no
# store, no model) hundredths of a second.
MARKED_COST: dict[str, float] = {"slow": 15.0, "browser": 2.0, "sandbox": 1.5}
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
    marked = [cost for name, cost in MARKED_COST.items() if name in item.keywords]
    if marked:
        return max(marked)
    return SERVICE_COST if SERVICES & set(getattr(item, "fixturenames", ())) else PLAIN_COST


def group_and_order(
    config: pytest.Config, items: list[pytest.Item], unbuilt: Iterable[str] = ()
) -> None:
    """Mark each test of a module that shares a costly fixture with the fixture's group
    (``xdist_group``: its module goes with the group) and sort the items so the costliest
    units come first (modules keep their own order; ties keep the collection's).
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
    grouped = _xdist_groups(config)
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        unit = units.find(_module(item.nodeid))
        first_seen.setdefault(unit, index)
        if grouped and unit.startswith("@"):  # a unit named after its fixture: a group
            item.add_marker(pytest.mark.xdist_group(unit[1:]))

    def rank(item: pytest.Item) -> tuple[float, int]:
        unit = units.find(_module(item.nodeid))
        return (-round(cost[unit], 1), first_seen[unit])

    items.sort(key=rank)  # stable: a module's tests keep their order


def _xdist_groups(config: pytest.Config) -> bool:
    """Whether groups are read (``--dist loadgroup``): the mark is xdist's own. A worker
    is told ``dist = "no"`` and ``loadgroup`` instead."""
    if not config.pluginmanager.hasplugin("xdist"):
        return False
    return bool(getattr(config.option, "loadgroup", False)) or (
        config.getoption("dist", "no") == "loadgroup"
    )


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with whole modules: see the module's docstring."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            config.option.loadscopereorder = False  # the collection's order: costliest first
            self.unit_of: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.unit_of is None:
                self.unit_of = units_of(self.collection or [])
            return self.unit_of.get(_module(nodeid), _module(nodeid))

    return ModuleGroupScheduling(config, log)


def units_of(nodeids: Iterable[str]) -> dict[str, str]:
    """Module -> its unit: the group one of its tests carries (``id@group``), else itself."""
    unit: dict[str, str] = {}
    for nodeid in nodeids:
        head, at, group = nodeid.rpartition("@")
        if at and group and "]" not in group and "::" in head:
            unit[_module(head)] = group
    return unit
