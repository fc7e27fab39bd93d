"""GraphQL types derived from the graph layer's views, never restated.

The graph layer's frozen dataclasses (``StepView``, ``ErrorRow``, ``TaskChain`` …) are the
views: a row becomes one in the graph, once. A GraphQL type of one is a class decorated with
``derived(View)``: its fields are the view's, in the view's order, typed from the view's
annotations (a field holding another derived view is typed as that view's GraphQL type), and
``Type.of(view)`` makes the GraphQL value. The class body holds only what GraphQL shows
otherwise: a field of its own (read from the view's attribute of that name, a property
included, or given to ``of``), or a view field typed otherwise (in its place). Where GraphQL
differs, the decorator says how:

* ``node=Node("Episode", key="id", local="episode_id")``: a global id ``id`` first (from the
  view's project and ``key``), the local key shown as ``local`` (None: not shown);
* ``refs={"task_id": "Task"}``: a field holding a local key (or a list of them) shown as the
  global id of that kind in the view's project;
* ``rename={"command": "action_command"}``: a GraphQL field read from another attribute;
* ``spread="error"``: a view field holding a view shown flat, its fields in its place (the
  global id and ``refs`` then read that view's project and key);
* ``skip``: view fields GraphQL does not show; ``about``: field descriptions;
* ``computed``: a value made from the view for a body field; ``order``: where the body's own
  fields stand, when not last.

``graph`` knows nothing of strawberry: the derivation lives here.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import date, datetime
from typing import Any, ClassVar, Generic, Optional, Self, TypeVar, get_args, get_origin

import strawberry
from strawberry.scalars import JSON

from metisgraph.graph import NodeRef

__all__ = ["Node", "View", "derived"]

V = TypeVar("V")
T = TypeVar("T", bound="View[Any]")

Convert = Callable[[Any], Any]
_PLAIN = (str, int, float, bool, datetime, date)
_DERIVED: dict[type, type[View[Any]]] = {}  # a graph view -> its GraphQL type


@dataclasses.dataclass(frozen=True)
class Node:
    """The global id of a node view: ``kind``, the view's project and its ``key`` field."""

    kind: str
    key: str = "id"
    local: str | None = None  # the GraphQL name of the local key; None: not shown


class View(Generic[V]):
    """A GraphQL type derived from the graph view ``V`` (see ``derived``)."""

    __view__: ClassVar[type]
    __view_values__: ClassVar[tuple[tuple[str, Convert], ...]]

    if typing.TYPE_CHECKING:

        def __init__(self, **values: Any) -> None: ...

    @classmethod
    def of(cls, view: V, **given: Any) -> Self:
        """The GraphQL value of ``view``; ``given``: values of the body's own fields."""
        values = {
            name: given[name] if name in given else value(view)
            for name, value in cls.__view_values__
        }
        return cls(**values)

    @classmethod
    def maybe(cls, view: V | None) -> Self | None:
        return None if view is None else cls.of(view)


def _ref(kind: str, local: Convert, holder: Convert) -> Convert:
    def value(view: Any) -> Any:
        key = local(view)
        if key is None:
            return None
        project = holder(view).project
        if isinstance(key, list):
            return [strawberry.ID(NodeRef(kind, project, k).id) for k in key]
        return strawberry.ID(NodeRef(kind, project, key).id)

    return value


def _typed(hint: Any, where: str) -> tuple[Any, Convert | None]:
    """The GraphQL annotation for a view field's type, and how a value converts (None: as is)."""
    if hint in _DERIVED:
        return _DERIVED[hint], _DERIVED[hint].of
    origin, args = get_origin(hint), get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        if len(kept) != 1:
            raise TypeError(f"{where}: a union GraphQL cannot show ({hint})")
        inner, convert = _typed(kept[0], where)
        if convert is None:
            return Optional[inner], None  # noqa: UP045 - built at run time
        step = convert
        return Optional[inner], lambda v: None if v is None else step(v)  # noqa: UP045
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]: a list
        inner, convert = _typed(args[0], where)
        each_of = convert or (lambda x: x)
        return list[inner], lambda v: [each_of(x) for x in v]  # type: ignore[valid-type]
    if origin is list:
        inner, convert = _typed(args[0], where)
        if convert is None:
            return list[inner], None  # type: ignore[valid-type]
        each = convert
        return list[inner], lambda v: [each(x) for x in v]  # type: ignore[valid-type]
    if hint is Any:  # anything, None included
        return Optional[JSON], None  # noqa: UP045
    if hint is dict or origin is dict:
        return JSON, None
    if hint in _PLAIN:
        return hint, None
    raise TypeError(f"{where}: no GraphQL type for {hint!r} (derive its view first)")


def _reader(name: str, convert: Convert | None = None, holder: str | None = None) -> Convert:
    def read(view: Any) -> Any:
        value = getattr(getattr(view, holder) if holder else view, name)
        return value if convert is None else convert(value)

    return read


def derived(
    view: type,
    *,
    name: str | None = None,
    description: str | None = None,
    node: Node | None = None,
    refs: Mapping[str, str] | None = None,
    rename: Mapping[str, str] | None = None,
    spread: str | None = None,
    skip: Collection[str] = (),
    about: Mapping[str, str] | None = None,
    computed: Mapping[str, Convert] | None = None,
    order: Sequence[str] | None = None,
    register: bool = True,
) -> Callable[[type[T]], type[T]]:
    """The class as the strawberry type of ``view`` (a dataclass of the graph layer)."""
    refs, about, computed = refs or {}, about or {}, computed or {}
    shown_as = {source: shown for shown, source in (rename or {}).items()}
    hints = typing.get_type_hints(view)
    fields: list[tuple[str | None, dataclasses.Field[Any], Any]] = []
    for f in dataclasses.fields(view):
        if f.name != spread:
            fields.append((None, f, hints[f.name]))
            continue
        inner = hints[f.name]
        inner_hints = typing.get_type_hints(inner)
        fields.extend((spread, g, inner_hints[g.name]) for g in dataclasses.fields(inner))

    def holder(view: Any) -> Any:
        return getattr(view, spread) if spread else view

    def build(cls: type[T]) -> type[T]:
        own: dict[str, Any] = dict(inspect.get_annotations(cls))
        annotations: dict[str, Any] = {}
        values: dict[str, Convert] = {}
        if node is not None:
            annotations["id"] = strawberry.ID
            values["id"] = _ref(node.kind, _reader(node.key, holder=spread), holder)
        for inside, f, hint in fields:
            if f.name in skip or (node is not None and f.name == node.key and not node.local):
                continue
            shown = shown_as.get(f.name, f.name)
            if node is not None and f.name == node.key:
                shown = node.local or shown
            where = f"{view.__name__}.{f.name}"
            if f.name in refs:
                many = get_origin(hint) is list
                annotations[shown] = list[strawberry.ID] if many else Optional[strawberry.ID]  # noqa: UP045
                values[shown] = _ref(refs[f.name], _reader(f.name, holder=inside), holder)
            elif shown in own:
                annotations[shown] = own.pop(shown)
                values[shown] = computed.get(shown) or _reader(f.name, holder=inside)
            else:
                annotation, convert = _typed(hint, where)
                annotations[shown] = annotation
                values[shown] = _reader(f.name, convert, inside)
        for field_name, annotation in own.items():  # the body's own fields, last
            annotations[field_name] = annotation
            values[field_name] = computed.get(field_name) or _reader(field_name)
        if order is not None:
            if sorted(order) != sorted(annotations):
                raise TypeError(f"{cls.__name__}: order must name {sorted(annotations)}")
            annotations = {n: annotations[n] for n in order}
        for field_name, text in about.items():
            if field_name not in annotations:
                raise TypeError(f"{cls.__name__}: about names no field {field_name!r}")
            if field_name not in cls.__dict__:
                setattr(cls, field_name, strawberry.field(description=text))
        cls.__annotations__ = annotations
        cls.__view__ = view
        cls.__view_values__ = tuple((n, values[n]) for n in annotations)
        made = strawberry.type(cls, name=name, description=description)
        if register:
            if view in _DERIVED:
                raise TypeError(f"{view.__name__} is shown as {_DERIVED[view].__name__} already")
            _DERIVED[view] = made
        return made

    return build
