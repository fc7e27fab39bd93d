"""The GraphQL schema: each area's queries and mutations merged, with the limits every
request is held to.

Areas: record_types (write memory), memory_types (review, forget), recall_types,
plan_types (planContext), snippet_types, verification_types; the types they share are in
common_types.
"""

from __future__ import annotations

import strawberry
from graphql import ASTValidationRule, GraphQLError, NoSchemaIntrospectionCustomRule
from strawberry.extensions import (
    AddValidationRules,
    MaxAliasesLimiter,
    MaxTokensLimiter,
    ParserCache,
    QueryDepthLimiter,
    ValidationCache,
)
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from metisgraph.api.graphql.analytics_types import AnalyticsQuery
from metisgraph.api.graphql.audit_types import AuditQuery
from metisgraph.api.graphql.compare_types import CompareQuery
from metisgraph.api.graphql.errors import MaskInternalErrors, UnavailableAs503
from metisgraph.api.graphql.execution import PlainFieldsExecutionContext
from metisgraph.api.graphql.explore_types import ExploreQuery
from metisgraph.api.graphql.lineage_types import LineageQuery
from metisgraph.api.graphql.maintain_types import MaintainMutation
from metisgraph.api.graphql.memory_types import MemoryMutation
from metisgraph.api.graphql.plan_types import PlanQuery
from metisgraph.api.graphql.recall_types import RecallQuery
from metisgraph.api.graphql.record_types import RecordMutation
from metisgraph.api.graphql.review_types import ReviewMutation, ReviewQuery
from metisgraph.api.graphql.search_types import SearchQuery
from metisgraph.api.graphql.snippet_types import SnippetMutation, SnippetQuery
from metisgraph.api.graphql.trend_types import TrendQuery
from metisgraph.api.graphql.verdict_types import VerdictQuery
from metisgraph.api.graphql.verification_types import VerificationMutation
from metisgraph.api.metrics import OperationMetrics
from metisgraph.api.settings import ApiSettings

__all__ = ["build_schema", "limit_rules"]

# Each area contributes its own query and mutation fields; the schema merges them.
Query = merge_types(
    "Query",
    (
        RecallQuery,
        PlanQuery,
        SnippetQuery,
        LineageQuery,
        ExploreQuery,
        SearchQuery,
        TrendQuery,
        CompareQuery,
        AnalyticsQuery,
        ReviewQuery,
        AuditQuery,
        VerdictQuery,
    ),
)
Mutation = merge_types(
    "Mutation",
    (
        MemoryMutation,
        RecordMutation,
        SnippetMutation,
        VerificationMutation,
        ReviewMutation,
        MaintainMutation,
    ),
)


_DOCUMENTS_CACHED = 256


class _QuietSchema(strawberry.Schema):
    """strawberry logs every GraphQL error with the document line and the error's text, which
    can hold variable values (memory text, secrets). Errors go to the caller only; internal
    ones are logged by ``MaskInternalErrors`` under a reference, without the request."""

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        return None


def limit_rules(settings: ApiSettings) -> list[type[ASTValidationRule]]:
    """The validation rules that hold every document to the limits (depth, aliases; and no
    introspection unless ``dev``). The token limit holds in the parser."""
    rules: list[type[ASTValidationRule]] = [
        *QueryDepthLimiter(max_depth=settings.max_query_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=settings.max_aliases).validation_rules,
    ]
    if not settings.dev:  # the published SDL is schema.graphql; GraphiQL needs introspection
        rules.append(NoSchemaIntrospectionCustomRule)
    return rules


def build_schema(settings: ApiSettings) -> strawberry.Schema:
    # Clients send the same few documents again and again: parsing and validating one took
    # ~9 ms of a recall. strawberry's caches are bounded LRUs shared by the extension
    # instances it builds per request, keyed by the document text (parse) and by the
    # parsed document with the validation rules (validate). The limiters' rule classes are
    # therefore built once: each limiter makes its own class, and a fresh class per
    # request would never hit the cache. A document over the token limit fails to parse
    # and is not cached; a document too deep or with too many aliases is cached with its
    # errors.
    rules = limit_rules(settings)
    return _QuietSchema(
        query=Query,
        mutation=Mutation,
        # Plain fields (an attribute, a scalar/enum/object type) skip the per-field resolve
        # info: most of a large answer's time was graphql-core's work per field.
        execution_context_class=PlainFieldsExecutionContext,
        extensions=[
            lambda: AddValidationRules(rules),
            lambda: MaxTokensLimiter(max_token_count=settings.max_query_tokens),
            lambda: ParserCache(maxsize=_DOCUMENTS_CACHED),
            lambda: ValidationCache(maxsize=_DOCUMENTS_CACHED),
            MaskInternalErrors,
            UnavailableAs503,
            OperationMetrics,
        ],
    )
