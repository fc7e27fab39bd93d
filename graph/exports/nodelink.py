"""Read a node-link JSON document as a stream of its parts, never the whole at once.

Yields ("graph", {...}) for the graph attributes, ("node", {...}) for each node and
("edge", {...}) for each edge ("edges" or networkx's older "links"), in document order;
other top-level keys come as ("other", (key, value)). Works on any node-link JSON, ours
(one element a line) or ``json.dump(nx.node_link_data(g))``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["NodeLinkError", "read_node_link"]

_BLOCK = 1 << 20
_DECODER = json.JSONDecoder()
_ARRAYS = {"nodes": "node", "edges": "edge", "links": "edge"}


class NodeLinkError(ValueError):
    """Not a node-link JSON document; the message says where."""


class _Stream:
    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle
        self.buffer = ""
        self.pos = 0
        self.offset = 0  # characters consumed before `buffer`
        self.eof = False

    def _more(self) -> bool:
        if self.eof:
            return False
        block = self.handle.read(_BLOCK)
        if not block:
            self.eof = True
            return False
        self.offset += self.pos
        self.buffer = self.buffer[self.pos :] + block
        self.pos = 0
        return True

    def peek(self) -> str:
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise NodeLinkError(
                f"at character {self.offset + self.pos}: expected {char!r}, "
                f"found {found or 'the end'!r}"
            )
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                raise NodeLinkError(f"at character {self.offset + exc.pos}: {exc.msg}") from None
            # A number at the very end of the buffer may continue in the next block.
            if end == len(self.buffer) and not self.eof and self._more():
                continue
            self.pos = end
            return value


def read_node_link(handle: IO[str]) -> Iterator[tuple[str, Any]]:
    stream = _Stream(handle)
    stream.expect("{")
    if stream.peek() == "}":
        return
    while True:
        key = stream.value()
        if not isinstance(key, str):
            raise NodeLinkError("expected a key of the top-level object")
        stream.expect(":")
        if key in _ARRAYS:
            yield from _elements(stream, _ARRAYS[key])
        elif key == "graph":
            value = stream.value()
            yield "graph", value if isinstance(value, dict) else {}
        else:
            yield "other", (key, stream.value())
        if stream.peek() == ",":
            stream.pos += 1
            continue
        stream.expect("}")
        return


def _elements(stream: _Stream, kind: str) -> Iterator[tuple[str, Any]]:
    stream.expect("[")
    if stream.peek() == "]":
        stream.pos += 1
        return
    while True:
        yield kind, stream.value()
        if stream.peek() == ",":
            stream.pos += 1
            continue
        stream.expect("]")
        return
