"""Error families: signatures that differ only where the project has seen many values.

An error's key is its signature, and a signature reads one line only, so that keys never
move. But no shape of a single line tells an account name (``session opened for user
cyrus``) or an empty alias (``connection from <*> () at <*>``) from a word of the template.
The store can: across many lines, the account takes many values where the template words
take one. A family is that second, corpus-statistical level (the frequency idea of Brain,
Yu et al. 2023, and the token similarity of Drain, He et al. 2017), over the keys.

Signatures are compared within a bucket: same kind, same own frames, same number of
tokens. Two of them are linked when they differ at exactly one position and

* **many values**: the signatures that agree with both everywhere else show at least
  ``min_values`` distinct tokens at that position, and at least ``similarity`` of the
  other tokens are constant words (no placeholder): the position is a slot; or
* **instance**: one token is covered by the other read as a pattern (``()`` and ``(x)``
  by ``(<*>)``, ``uucp`` by ``<*>``), and at least one other token is a constant word.

A family is a connected set of linked signatures. Links depend on the set of signatures
only, never on the order they came in, and more signatures only add links: families only
merge, never split. Nothing here names a log source; ``FAMILY_SETTINGS`` are what the
development systems choose (``metisgraph eval signatures`` chooses them leave-one-out).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from metisgraph.ingest.errors.logtemplate import PLACEHOLDER, template_key

__all__ = [
    "FAMILY_SETTINGS",
    "FamilyIndex",
    "FamilySettings",
    "FamilyShape",
    "covers",
    "family_template",
]


@dataclass(frozen=True)
class FamilySettings:
    """How much evidence joins two signatures; ``min_values=None`` turns slots off."""

    min_values: int | None = 3
    similarity: float = 0.6
    instances: bool = True

    def __post_init__(self) -> None:
        if self.min_values is not None and self.min_values < 2:
            raise ValueError(f"min_values must be at least 2, got {self.min_values}")
        if not 0.0 <= self.similarity <= 1.0:
            raise ValueError(f"similarity must be in [0, 1], got {self.similarity}")

    @property
    def name(self) -> str:
        values = "off" if self.min_values is None else str(self.min_values)
        return f"values={values},similarity={self.similarity:g},instances={self.instances}"


FAMILY_SETTINGS = FamilySettings()


@dataclass(frozen=True)
class FamilyShape:
    """What families compare of a signature: its bucket and its template's tokens."""

    kind: str
    frames: tuple[str, ...]
    tokens: tuple[str, ...]

    @classmethod
    def of(cls, kind: str, template: str, frames: Iterable[str] = ()) -> FamilyShape:
        return cls(kind, tuple(frames), tuple(template_key(template).split()))

    @property
    def bucket(self) -> str:
        """Signatures can join only within a bucket (16 hex characters)."""
        text = "\n".join([self.kind, " ".join(self.frames), str(len(self.tokens))])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def covers(pattern: str, token: str) -> bool:
    """Whether ``pattern``'s placeholders can stand for the parts of ``token`` it lacks.

    A placeholder may stand for nothing: ``(<*>)`` covers ``()``. Segments are matched left
    to right at their first place, which is exact for patterns whose only wildcard is ``<*>``
    and linear in the token (no backtracking).
    """
    parts = pattern.split(PLACEHOLDER)
    if len(parts) == 1:
        return False
    first, *middle, last = parts
    end = len(token) - len(last)
    if end < len(first) or not token.startswith(first) or not token.endswith(last):
        return False
    at = len(first)
    for part in middle:
        found = token.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


def family_template(shapes: Sequence[Sequence[str]]) -> str:
    """The tokens all members share, a placeholder where they differ."""
    if not shapes:
        return ""
    shared = [
        token if all(s[i] == token for s in shapes) else PLACEHOLDER
        for i, token in enumerate(shapes[0])
    ]
    return " ".join(shared)


def _is_constant(token: str) -> bool:
    return PLACEHOLDER not in token


@dataclass
class _Slot:
    """The signatures that agree everywhere but at one position, by their token there."""

    by_value: dict[str, str] = field(default_factory=dict)  # token -> the key with it
    patterns: list[str] = field(default_factory=list)  # the tokens holding a placeholder
    open: bool = False  # enough values: every member is one family


class FamilyIndex:
    """Families of the signatures added so far; the same whatever the order they came in.

    ``family(key)`` is the key of the family's first member (in the order added): the
    store adds its members oldest first, so a family keeps its id when others join it.
    """

    def __init__(self, settings: FamilySettings = FAMILY_SETTINGS) -> None:
        self.settings = settings
        self._order: dict[str, int] = {}
        self._parent: dict[str, str] = {}
        self._slots: dict[tuple[str, int, tuple[str, ...]], _Slot] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._order

    def __len__(self) -> int:
        return len(self._order)

    def family(self, key: str) -> str:
        root = key
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[key] != root:  # path compression
            self._parent[key], key = root, self._parent[key]
        return root

    def join(self, a: str, b: str) -> None:
        """One family from here on (the store knows they already are)."""
        ra, rb = self.family(a), self.family(b)
        if ra != rb:
            older, younger = sorted((ra, rb), key=self._order.__getitem__)
            self._parent[younger] = older

    def add(self, key: str, shape: FamilyShape) -> None:
        """Add a signature; adding the same key again changes nothing."""
        if key in self._order:
            return
        self._order[key] = len(self._order)
        self._parent[key] = key
        tokens, size = shape.tokens, len(shape.tokens)
        # A slot needs this share of constant words around it (a hair of slack so that 3 of
        # 5 is 0.6, whatever the float).
        needed = self.settings.similarity * size - 1e-9
        for position, token in enumerate(tokens):
            context = tokens[:position] + tokens[position + 1 :]
            constants = sum(map(_is_constant, context))
            if constants == 0:
                continue  # nothing fixed around it: any two such signatures would join
            slot = self._slots.setdefault((shape.bucket, position, context), _Slot())
            self._place(key, token, slot, slot_ok=constants >= needed)

    def _place(self, key: str, token: str, slot: _Slot, *, slot_ok: bool) -> None:
        if token in slot.by_value:  # the same tokens under another key: one family
            self.join(key, slot.by_value[token])
            return
        slot.by_value[token] = key
        threshold = self.settings.min_values
        if slot_ok and threshold is not None and len(slot.by_value) >= threshold:
            anchor = next(iter(slot.by_value.values()))
            for member in [key] if slot.open else list(slot.by_value.values()):
                self.join(anchor, member)
            slot.open = True
        elif self.settings.instances:
            # Only a token with a placeholder covers another: compare with those, or, when
            # the new token is one, with every value.
            candidates = slot.by_value if not _is_constant(token) else slot.patterns
            for value in list(candidates):
                if value != token and (covers(value, token) or covers(token, value)):
                    self.join(key, slot.by_value[value])
        if not _is_constant(token):
            slot.patterns.append(token)

    def families(self) -> list[list[str]]:
        """Every family's keys in the order they were added, families by their first member."""
        found: dict[str, list[str]] = {}
        for key in self._order:
            found.setdefault(self.family(key), []).append(key)
        return list(found.values())
