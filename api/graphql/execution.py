"""GraphQL execution with a fast path for plain fields.

graphql-core executes every field the same way: it builds a ``GraphQLResolveInfo`` (strawberry
adds its operation extensions to it), calls the field's resolver with it, then completes the
value through the general ``complete_value``. For a field that only reads an attribute (a
strawberry field without a resolver, permission classes or field extensions: strawberry gives
it a resolver that ignores ``info``) whose type is a scalar, an enum or an object type without
an ``is_type_of`` check (each maybe non-null), none of that is needed: the resolve info is
never read. Large answers are mostly such fields (a lineage of 70 sightings is ~1,700 of
them), and the per-field work was most of their time.

``PlainFieldsExecutionContext`` reads the attribute as strawberry's resolver does
(``getattr(source, python_name)``) and completes the value with graphql-core's own steps
(``complete_leaf_value``, ``collect_and_execute_subfields``), in the same order and with the
same errors: an attribute that raises, a value that does not serialise, ``null`` for a
non-null field (same message, same propagation through ``handle_field_error``). A leaf's
response path is built only when it fails (graphql-core builds one per field). Every other
field (resolvers, arguments, lists, interfaces and unions, awaitables, any request with resolve
middleware) goes through graphql-core unchanged. Aliases, fragments and ``@skip``/``@include``
are settled before a field is executed (field collection), so they behave as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import (
    GraphQLField,
    GraphQLLeafType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    is_leaf_type,
    is_object_type,
)
from graphql.pyutils import Path, Undefined, gather_with_cancel
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.types.field import StrawberryField

__all__ = ["PlainField", "PlainFieldsExecutionContext", "plain_field"]

# strawberry's resolver for a field that only reads its attribute: it ignores ``info`` and
# takes no arguments (strawberry.schema.schema_converter, ``from_resolver``). Matched by name:
# if strawberry renames it, every field takes graphql-core's general path again.
_BASIC_RESOLVER = "_get_basic_result"
_DEFINITION = "strawberry-definition"  # GraphQLField.extensions: strawberry's field
_NOT_AWAITABLE = frozenset({str, int, float, bool})
_UNREAD = object()  # not a plain leaf: graphql-core executes the field


@dataclass(frozen=True, slots=True)
class PlainField:
    """How a plain field is read and completed: ``leaf`` (scalar or enum) or ``object`` (an
    object type without ``is_type_of``: its selection is executed on the value)."""

    field: GraphQLField
    attribute: str
    named: GraphQLLeafType | GraphQLObjectType
    non_null: bool
    leaf: bool


_plans: dict[int, tuple[GraphQLField, PlainField | None]] = {}
_by_parent: dict[tuple[int, str], tuple[GraphQLObjectType, PlainField | None]] = {}


def plain_field(field: GraphQLField) -> PlainField | None:
    """The field's plan when it can take the fast path, else None (computed once a field)."""
    known = _plans.get(id(field))
    if known is not None and known[0] is field:
        return known[1]
    plan = _plan_of(field)
    _plans[id(field)] = (field, plan)  # the field is kept, so its id is never reused
    return plan


def _plan_of(field: GraphQLField) -> PlainField | None:
    resolve = field.resolve
    definition = (field.extensions or {}).get(_DEFINITION)
    if (
        resolve is None
        or getattr(resolve, "__name__", None) != _BASIC_RESOLVER
        or field.args
        or not isinstance(definition, StrawberryField)
        or definition.base_resolver is not None
        or definition.default_resolver is not getattr
    ):
        return None
    named: GraphQLOutputType = field.type
    non_null = isinstance(named, GraphQLNonNull)
    if isinstance(named, GraphQLNonNull):
        named = named.of_type
    if is_leaf_type(named):
        return PlainField(field, definition.python_name, named, non_null, leaf=True)
    if is_object_type(named) and named.is_type_of is None:
        return PlainField(field, definition.python_name, named, non_null, leaf=False)
    return None


class PlainFieldsExecutionContext(StrawberryGraphQLCoreExecutionContext):
    """strawberry's execution context, with plain fields read and completed directly."""

    def _plain(self, parent_type: GraphQLObjectType, name: str) -> PlainField | None:
        middleware = self.middleware_manager
        if middleware is not None and middleware.middlewares:
            return None  # a resolve hook must see every field
        key = (id(parent_type), name)
        known = _by_parent.get(key)
        if known is not None and known[0] is parent_type:
            return known[1]
        field = self.schema.get_field(parent_type, name)
        plan = None if field is None else plain_field(field)
        _by_parent[key] = (parent_type, plan)  # the type is kept, so its id is never reused
        return plan

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: Any,
        position_context: Any,
    ) -> Any:
        """graphql-core's ``execute_fields``, with plain leaves completed in the loop (their
        path is built only if they fail)."""
        results: dict[str, Any] = {}
        is_awaitable = self.is_awaitable
        awaitable_fields: list[str] = []
        try:
            for response_name, field_details_list in grouped_field_set.items():
                plan = self._plain(parent_type, field_details_list[0].node.name.value)
                if plan is not None and plan.leaf:
                    result = self._execute_leaf(
                        plan, parent_type, source_value, field_details_list, path, response_name
                    )
                else:
                    result = self.execute_field(
                        parent_type,
                        source_value,
                        field_details_list,
                        Path(path, response_name, parent_type.name),
                        position_context,
                    )
                if result is not Undefined:
                    results[response_name] = result
                    if result.__class__ not in _NOT_AWAITABLE and is_awaitable(result):
                        awaitable_fields.append(response_name)
        except Exception:
            if awaitable_fields:
                self.settle_in_background([results[field] for field in awaitable_fields])
            raise
        if not awaitable_fields:
            return results
        return _gathered(results, awaitable_fields)

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: Any,
        path: Path,
        position_context: Any,
    ) -> Any:
        plan = self._plain(parent_type, field_details_list[0].node.name.value)
        if plan is None:
            return super().execute_field(
                parent_type, source, field_details_list, path, position_context
            )
        try:
            result = getattr(source, plan.attribute)
            if result.__class__ not in _NOT_AWAITABLE and self.is_awaitable(result):
                return self._complete_awaitable(
                    plan, parent_type, field_details_list, path, result, position_context
                )
            return self._complete_plain(
                plan, parent_type, field_details_list, result, path, position_context
            )
        except Exception as raw_error:
            self.handle_field_error(raw_error, plan.field.type, field_details_list, path)
            return None

    def _execute_leaf(
        self,
        plan: PlainField,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: Any,
        parent_path: Path | None,
        response_name: str,
    ) -> Any:
        """A plain leaf: its path is built only if it fails or is awaited."""
        try:
            value = getattr(source, plan.attribute)
            if value.__class__ in _NOT_AWAITABLE or not self.is_awaitable(value):
                return self._complete_plain(
                    plan, parent_type, field_details_list, value, None, None
                )
            field_path = Path(parent_path, response_name, parent_type.name)
            return self._complete_awaitable(
                plan, parent_type, field_details_list, field_path, value, None
            )
        except Exception as raw_error:
            field_path = Path(parent_path, response_name, parent_type.name)
            self.handle_field_error(raw_error, plan.field.type, field_details_list, field_path)
            return None

    def _complete_awaitable(
        self,
        plan: PlainField,
        parent_type: GraphQLObjectType,
        field_details_list: Any,
        path: Path,
        result: Any,
        position_context: Any,
    ) -> Any:
        """An attribute holding an awaitable: graphql-core's completion, with its info."""
        info = self.build_resolve_info(
            plan.field, [item.node for item in field_details_list], parent_type, path
        )
        return self.complete_awaitable_value(
            plan.field.type, field_details_list, info, path, result, position_context
        )

    def _complete_plain(
        self,
        plan: PlainField,
        parent_type: GraphQLObjectType,
        field_details_list: Any,
        result: Any,
        path: Path | None,
        position_context: Any,
    ) -> Any:
        """graphql-core's ``complete_value`` for a plain field's value, not awaitable
        (``path`` is None for a leaf: the caller builds it if this raises)."""
        if isinstance(result, Exception):
            raise result
        if result is None or result is Undefined:
            if plan.non_null:
                msg = (
                    "Cannot return null for non-nullable field"
                    f" {parent_type}.{field_details_list[0].node.name.value}."
                )
                raise TypeError(msg)
            return None
        if plan.leaf:
            return self.complete_leaf_value(plan.named, result)  # type: ignore[arg-type]
        assert path is not None
        completed = self.collect_and_execute_subfields(
            plan.named,  # type: ignore[arg-type]
            field_details_list,
            path,
            result,
            position_context,
        )
        if self.is_awaitable(completed):
            return self._await_completed(completed, plan.field.type, field_details_list, path)
        return completed

    async def _await_completed(
        self, completed: Any, return_type: GraphQLOutputType, field_details_list: Any, path: Path
    ) -> Any:
        try:
            return await completed
        except Exception as raw_error:
            self.handle_field_error(raw_error, return_type, field_details_list, path)
            return None


async def _gathered(results: dict[str, Any], awaitable_fields: list[str]) -> dict[str, Any]:
    """graphql-core's gathering of a selection's awaitable fields (``execute_fields``)."""
    if len(awaitable_fields) == 1:
        field = awaitable_fields[0]
        results[field] = await results[field]
    else:
        awaited = await gather_with_cancel(*(results[field] for field in awaitable_fields))
        results.update(zip(awaitable_fields, awaited, strict=True))
    return results
