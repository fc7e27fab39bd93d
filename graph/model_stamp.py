"""Which embedding model made the store's vectors, recorded in the store itself.

The ledger node of the migrations (``(:Metisgraph {name})``) keeps the model's name, its
dimension and a digest of its weights. A process whose model differs must not add vectors
of its own beside the stored ones (two models' vectors are not comparable: recall would
rank nonsense without an error): it refuses to start, or re-embeds everything first
(``metisgraph.ingest.reembed``). A re-embedding under way is recorded as the ``target``,
so one that was interrupted is finished before anything else is served.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from metisgraph.graph.migrations import LEDGER
from metisgraph.graph.store import GraphStore

__all__ = [
    "ModelChanged",
    "ModelCheck",
    "ModelStamp",
    "StoreStamp",
    "begin_reembedding",
    "check_model",
    "drop_vector_indexes",
    "read_stamp",
    "stamp_store",
]


@dataclass(frozen=True)
class ModelStamp:
    """An embedding model: its name, dimension and a digest of its weights."""

    model: str
    dimension: int
    fingerprint: str

    def makes_same_vectors(self, other: ModelStamp) -> bool:
        """Same weights and dimension: the same vectors, whatever the model is called."""
        return (self.fingerprint, self.dimension) == (other.fingerprint, other.dimension)

    def describe(self) -> str:
        return f"{self.model} ({self.dimension} dimensions, weights {self.fingerprint[:12]})"


@dataclass(frozen=True)
class StoreStamp:
    current: ModelStamp | None  # the model every stored vector was made by
    target: ModelStamp | None  # a re-embedding begun and not finished


class ModelCheck(StrEnum):
    same = "same"  # the store's model: go on
    stamped = "stamped"  # the store had no stamp: it now has this model's
    changed = "changed"  # another model made the stored vectors
    interrupted = "interrupted"  # a re-embedding was left unfinished


class ModelChanged(RuntimeError):
    """The store's vectors were made by another model than this process's."""

    def __init__(self, check: ModelCheck, stored: StoreStamp, ours: ModelStamp) -> None:
        if check is ModelCheck.interrupted:
            assert stored.target is not None
            what = f"a re-embedding to {stored.target.describe()} was left unfinished"
        else:
            assert stored.current is not None
            what = f"the store's vectors were made by {stored.current.describe()}"
        super().__init__(
            f"{what}; this process embeds with {ours.describe()}. Vectors of two models are "
            "never mixed: run 'metisgraph schema reembed' (resumable), or start with "
            "METISGRAPH_EMBEDDING_ON_CHANGE=reembed, or go back to the store's model"
        )
        self.check = check
        self.stored = stored
        self.ours = ours


def _stamp(row: dict[str, object], prefix: str) -> ModelStamp | None:
    model, dimension = row.get(f"{prefix}model"), row.get(f"{prefix}dimension")
    fingerprint = row.get(f"{prefix}fingerprint")
    if not isinstance(model, str) or not isinstance(fingerprint, str):
        return None
    assert isinstance(dimension, int)
    return ModelStamp(model, dimension, fingerprint)


async def read_stamp(store: GraphStore, ledger: str = LEDGER) -> StoreStamp:
    rows = await store.run("embedding_stamp", ledger=ledger)
    if not rows:
        return StoreStamp(None, None)
    return StoreStamp(_stamp(rows[0], ""), _stamp(rows[0], "target_"))


async def _write(store: GraphStore, name: str, stamp: ModelStamp, ledger: str) -> None:
    fields = {"model": stamp.model, "dimension": stamp.dimension, "fingerprint": stamp.fingerprint}
    await store.run(name, ledger=ledger, **fields)


async def stamp_store(store: GraphStore, stamp: ModelStamp, ledger: str = LEDGER) -> None:
    """Record ``stamp`` as the model of every stored vector (and end a re-embedding)."""
    await _write(store, "set_embedding_stamp", stamp, ledger)


async def begin_reembedding(store: GraphStore, stamp: ModelStamp, ledger: str = LEDGER) -> None:
    """Record ``stamp`` as the model a re-embedding goes to, before it starts."""
    await _write(store, "begin_reembedding", stamp, ledger)


async def check_model(store: GraphStore, ours: ModelStamp, ledger: str = LEDGER) -> ModelCheck:
    """Compare the store's stamp with this process's model; stamp a store that has none.

    A store written before stamps existed is taken to hold this model's vectors (the
    dimension check of ``apply_schema`` still stands guard over a different dimension).
    """
    stored = await read_stamp(store, ledger)
    if stored.target is not None:
        return ModelCheck.interrupted
    if stored.current is None:
        await stamp_store(store, ours, ledger)
        return ModelCheck.stamped
    if stored.current.makes_same_vectors(ours):
        return ModelCheck.same
    return ModelCheck.changed


async def drop_vector_indexes(store: GraphStore, *, keep_dimension: int) -> list[str]:
    """Drop the vector indexes built for another dimension (a re-embedding to a model of
    ``keep_dimension``); ``apply_schema`` builds them again. Returns their names."""
    rows = await store.run("vector_indexes")
    dropped = [r["name"] for r in rows if r["dimensions"] not in (None, keep_dimension)]
    for name in dropped:
        await store.run("drop_index", index=name)
    return dropped
