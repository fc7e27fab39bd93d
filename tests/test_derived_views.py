"""A GraphQL type of a graph view is derived from it (api/graphql/views.py), never restated.

Walks every strawberry output type of the API and every dataclass of the graph layer: a type
written by hand whose fields (a global id aside) are all fields of one graph dataclass — at
least three of them and at least half of the dataclass's — restates that view and must be
derived from it instead.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any

import metisgraph.api.graphql as api_graphql
import metisgraph.graph as graph_pkg
from metisgraph.api.graphql.schema import build_schema
from metisgraph.api.graphql.views import View
from metisgraph.api.settings import ApiSettings


def _modules(package: Any) -> list[Any]:
    prefix = package.__name__ + "."
    return [
        importlib.import_module(m.name)
        for m in pkgutil.walk_packages(package.__path__, prefix)
        if not m.name.rsplit(".", 1)[-1].startswith("_")
    ]


def _graph_views() -> dict[str, frozenset[str]]:
    found = {}
    for module in _modules(graph_pkg):
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = frozenset(
                    f.name for f in dataclasses.fields(value)
                )
    return found


def _output_types() -> dict[str, type]:
    build_schema(ApiSettings())  # every area's types loaded
    found = {}
    for module in _modules(api_graphql):
        for value in vars(module).values():
            definition = getattr(value, "__strawberry_definition__", None)
            if not hasattr(definition, "is_input") or definition.is_input:
                continue
            if value.__module__ != module.__name__:
                continue
            found[f"{module.__name__}.{value.__name__}"] = value
    return found


def test_no_graphql_type_restates_a_graph_view() -> None:
    views = _graph_views()
    restated = []
    for name, cls in _output_types().items():
        if issubclass(cls, View):
            continue
        fields = {f.python_name for f in cls.__strawberry_definition__.fields} - {"id"}
        if len(fields) < 3:
            continue
        for view, view_fields in views.items():
            if fields <= view_fields and 2 * len(fields) >= len(view_fields):
                restated.append(f"{name} restates {view}")
    assert not restated, "derive these with api/graphql/views.py:\n" + "\n".join(restated)


def test_a_derived_type_shows_its_view() -> None:
    """Every field of a derived type comes from its view (or the class says where from)."""
    from metisgraph.api.graphql.graph_types import Step
    from metisgraph.graph.lineage import StepView

    view = StepView.of(
        {"project": "p", "id": "e1", "task_id": "t1", "step": 3, "action_command": "ls"}
    )
    shown = Step.of(view)
    assert shown.episode_id == "e1" and shown.command == "ls" and shown.step == 3
    assert shown.id != "e1" and shown.task_id not in (None, "t1")
    assert [f.python_name for f in Step.__strawberry_definition__.fields] == [
        "id",
        "project",
        "episode_id",
        "task_id",
        "step",
        "created_at",
        "summary",
        "outcome",
        "kind",
        "command",
        "time_estimated",
    ]
