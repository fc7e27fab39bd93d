"""The fast path for plain fields (api/graphql/execution.py) answers exactly as graphql-core does.

Each document runs on two schemas built from the same types: strawberry's own execution
context and ours. The data, and every error's message, path and locations, must be equal,
for aliases, fragments, directives, variables, nullability (a null non-null field, and its
propagation), attributes that raise, values that do not serialise, interfaces and unions
(which take graphql-core's path), awaitables, and a resolve hook. Then the fast path is shown
to be taken: graphql-core builds no resolve info for plain fields.
"""

from __future__ import annotations

import asyncio
import enum
from typing import Any, ClassVar

import pytest
import strawberry
from graphql import GraphQLResolveInfo
from strawberry.extensions import SchemaExtension

from metisgraph.api.graphql.execution import PlainFieldsExecutionContext, plain_field


@strawberry.enum
class Outcome(enum.Enum):
    OK = "ok"
    FAILED = "failed"


@strawberry.interface
class Named:
    name: str


@strawberry.type
class Tool(Named):
    version: str | None


@strawberry.type
class Package(Named):
    pinned: bool


@strawberry.type
class Environment:
    os: str
    runtime: str | None


@strawberry.type
class Step:
    id: str
    position: int
    score: float
    outcome: Outcome
    summary: str | None
    command: str  # non-null: None here is an error that nulls the step
    environment: Environment | None
    required_environment: Environment  # non-null object
    tools: list[str]
    named: list[Named]
    either: Tool | Package | None

    @strawberry.field
    def label(self, upper: bool = False) -> str:
        return self.id.upper() if upper else self.id

    @strawberry.field
    async def later(self) -> str:
        await asyncio.sleep(0)
        return f"later {self.id}"


class _Raising(Step):
    @property
    def summary(self) -> str | None:  # type: ignore[override]
        raise ValueError("summary unavailable")


def _step(index: int, **changes: Any) -> Step:
    values: dict[str, Any] = {
        "id": f"s{index}",
        "position": index,
        "score": index / 4,
        "outcome": Outcome.OK if index % 2 else Outcome.FAILED,
        "summary": None if index % 3 == 0 else f"step {index}",
        "command": f"pytest -k {index}",
        "environment": Environment(os="linux", runtime=None) if index % 2 else None,
        "required_environment": Environment(os="darwin", runtime="3.11"),
        "tools": ["pytest", "git"][: index % 3],
        "named": [Tool(name="git", version=None), Package(name="numpy", pinned=True)],
        "either": Tool(name="ruff", version="0.6")
        if index % 2
        else Package(name="x", pinned=False),
    }
    values.update(changes)
    return Step(**values)


BROKEN: dict[str, Any] = {}


@strawberry.type
class Query:
    @strawberry.field
    def steps(self) -> list[Step]:
        return [_step(i) for i in range(1, 6)]

    @strawberry.field
    def step(self) -> Step | None:
        return _step(7)

    @strawberry.field
    def broken(self, kind: str) -> Step | None:
        if kind == "null-command":
            return _step(1, command=None)
        if kind == "null-required-object":
            return _step(1, required_environment=None)
        if kind == "bad-enum":
            return _step(1, outcome="not an outcome")
        if kind == "bad-int":
            return _step(1, position="seven")
        if kind == "raising":
            step = _step(1)
            step.__class__ = _Raising
            return step
        if kind == "exception-value":
            return _step(1, summary=RuntimeError("an exception as the value"))
        if kind == "awaitable":
            return _step(1, summary=_later_text())
        return None

    @strawberry.field
    def required_broken(self) -> Step:
        return _step(1, command=None)


async def _later_text() -> str:
    await asyncio.sleep(0)
    return "awaited summary"


def _schemas(**options: Any) -> tuple[strawberry.Schema, strawberry.Schema]:
    return (
        strawberry.Schema(query=Query, **options),
        strawberry.Schema(
            query=Query, execution_context_class=PlainFieldsExecutionContext, **options
        ),
    )


PLAIN, FAST = _schemas()

STEP_FIELDS = """
  id position score outcome summary command tools
  environment { os runtime } requiredEnvironment { os runtime }
  named { __typename name ... on Tool { version } ... on Package { pinned } }
  either { __typename ... on Tool { name version } ... on Package { name pinned } }
  label loud: label(upper: true) later
"""

DOCUMENTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("all fields", f"{{ steps {{ {STEP_FIELDS} }} step {{ {STEP_FIELDS} }} }}", None),
    (
        "aliases, the same field twice",
        "{ steps { a: id b: id id pos: position env: environment { o: os } } }",
        None,
    ),
    (
        "fragments, named and inline, merged",
        """
        query {
          steps { ...Ids ... on Step { outcome environment { os } } environment { runtime } }
        }
        fragment Ids on Step { id position }
        """,
        None,
    ),
    (
        "skip and include, with variables",
        """
        query($yes: Boolean!, $no: Boolean!) {
          steps { id @skip(if: $yes) position @include(if: $yes) summary @include(if: $no)
                  environment @skip(if: $no) { os } }
        }
        """,
        {"yes": True, "no": False},
    ),
    ("typename", "{ step { __typename id environment { __typename os } } }", None),
    ("null for a non-null leaf", '{ broken(kind: "null-command") { id command } }', None),
    (
        "null for a non-null object",
        '{ broken(kind: "null-required-object") { id requiredEnvironment { os } } }',
        None,
    ),
    ("propagated to a non-null root", "{ requiredBroken { id command } step { id } }", None),
    ("an enum value that is not one", '{ broken(kind: "bad-enum") { id outcome } }', None),
    ("an Int that is not one", '{ broken(kind: "bad-int") { id position summary } }', None),
    ("an attribute that raises", '{ broken(kind: "raising") { id summary command } }', None),
    ("an exception as the value", '{ broken(kind: "exception-value") { id summary } }', None),
    ("an awaitable attribute", '{ broken(kind: "awaitable") { id summary } }', None),
    ("nothing", '{ broken(kind: "none") { id } }', None),
]


def _answer(result: Any) -> tuple[Any, list[tuple[str, Any, Any]]]:
    errors = [
        (error.message, error.path, [(loc.line, loc.column) for loc in error.locations or []])
        for error in result.errors or []
    ]
    return result.data, sorted(errors, key=repr)


@pytest.mark.parametrize(
    ("name", "document", "variables"), DOCUMENTS, ids=[d[0] for d in DOCUMENTS]
)
def test_the_fast_path_answers_as_graphql_core(
    name: str, document: str, variables: dict[str, Any] | None
) -> None:
    async def both() -> tuple[Any, Any]:
        expected = await PLAIN.execute(document, variable_values=variables)
        got = await FAST.execute(document, variable_values=variables)
        return expected, got

    expected, got = asyncio.run(both())
    assert _answer(got) == _answer(expected)
    assert expected.data is not None or expected.errors, name


def test_the_errors_are_the_ones_graphql_core_gives() -> None:
    """The comparison above is only worth something if the documents do fail."""
    result = asyncio.run(FAST.execute('{ broken(kind: "null-command") { id command } }'))
    assert result.data == {"broken": None}
    assert [(e.message, e.path) for e in result.errors or []] == [
        ("Cannot return null for non-nullable field Step.command.", ["broken", "command"])
    ]
    result = asyncio.run(FAST.execute('{ broken(kind: "raising") { id summary } }'))
    assert result.data == {"broken": {"id": "s1", "summary": None}}
    assert [(e.message, e.path) for e in result.errors or []] == [
        ("summary unavailable", ["broken", "summary"])
    ]


def test_synchronous_execution_answers_the_same() -> None:
    document = f"{{ steps {{ {STEP_FIELDS.replace('later', '')} }} }}"
    assert _answer(FAST.execute_sync(document)) == _answer(PLAIN.execute_sync(document))
    broken = '{ broken(kind: "bad-enum") { id outcome command } }'
    assert _answer(FAST.execute_sync(broken)) == _answer(PLAIN.execute_sync(broken))


class _Counting(PlainFieldsExecutionContext):
    infos: ClassVar[list[str]] = []

    def build_resolve_info(
        self, field_def: Any, field_nodes: Any, *rest: Any
    ) -> GraphQLResolveInfo:
        self.infos.append(field_nodes[0].name.value)
        return super().build_resolve_info(field_def, field_nodes, *rest)


def test_plain_fields_build_no_resolve_info() -> None:
    schema = strawberry.Schema(query=Query, execution_context_class=_Counting)
    _Counting.infos.clear()
    result = schema.execute_sync(
        "{ steps { id position outcome summary environment { os runtime } label } }"
    )
    assert not result.errors
    # the root field and the five steps' `label` have resolvers; the rest are plain
    assert sorted(_Counting.infos) == ["label"] * 5 + ["steps"]


def test_which_fields_are_plain() -> None:
    step = FAST._schema.get_type("Step")
    plan = {name: plain_field(field) for name, field in step.fields.items()}  # type: ignore[union-attr]
    plain = {name for name, found in plan.items() if found is not None}
    assert plain == {
        "id",
        "position",
        "score",
        "outcome",
        "summary",
        "command",
        "environment",
        "requiredEnvironment",
    }  # lists, an interface, a union and resolvers take graphql-core's path
    assert plan["requiredEnvironment"] is not None and plan["requiredEnvironment"].non_null
    assert plan["environment"] is not None and not plan["environment"].leaf


class _SeesEveryField(SchemaExtension):
    seen: ClassVar[list[str]] = []

    def resolve(self, _next: Any, root: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(info.field_name)
        return _next(root, info, *args, **kwargs)


def test_a_resolve_hook_still_sees_every_field() -> None:
    plain, fast = _schemas(extensions=[_SeesEveryField])
    document = "{ step { id outcome environment { os } } }"
    _SeesEveryField.seen.clear()
    expected = plain.execute_sync(document)
    seen_before = list(_SeesEveryField.seen)
    _SeesEveryField.seen.clear()
    got = fast.execute_sync(document)
    assert _answer(got) == _answer(expected)
    assert _SeesEveryField.seen == seen_before
    assert set(seen_before) == {"step", "id", "outcome", "environment", "os"}
