"""The JSON Schema of the input format, generated from the record models."""

from __future__ import annotations

import json
from importlib import resources
from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from metisgraph.ingest.records import (
    SCHEMA_VERSION,
    EpisodeRecord,
    SnippetRecord,
    TaskRecord,
    VerdictRecord,
)

__all__ = ["SCHEMA_FILE", "input_schema", "shipped_schema"]

SCHEMA_FILE = f"memory-record.v{SCHEMA_VERSION}.json"

AnyRecord = Annotated[
    TaskRecord | EpisodeRecord | SnippetRecord | VerdictRecord, Field(discriminator="record_type")
]


def input_schema() -> dict[str, Any]:
    """One record per JSONL line: a task, an episode (the default), a snippet or a verdict."""
    schema = TypeAdapter(AnyRecord).json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"metisgraph/memory-record/v{SCHEMA_VERSION}",
        "title": f"metisgraph memory record, version {SCHEMA_VERSION}",
        "description": (
            "One line of a metisgraph ingest file (JSONL). `record_type` says what the line "
            "is: 'task', 'episode' (the default when absent), 'snippet' or 'verdict' (an "
            "evaluation harness's verdict on one instance of one run). Unknown fields are "
            "refused. Text is redacted and abstracted before it is stored or embedded."
        ),
        **schema,
    }


def shipped_schema() -> dict[str, Any]:
    text = resources.files("metisgraph.ingest.schemas").joinpath(SCHEMA_FILE).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
