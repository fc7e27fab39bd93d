"""Reading a file or a whole folder of sources into validated records or refusals."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from metisgraph.ingest.adapters.base import (
    FORMATS,
    Parsed,
    Refused,
    SourceRef,
    UnknownFormatError,
    refuse,
)
from metisgraph.ingest.adapters.corpus import read_corpus
from metisgraph.ingest.adapters.detect import detect_format, guess_format
from metisgraph.ingest.adapters.harness import read_harness_report
from metisgraph.ingest.adapters.mini_swe_agent import read_mini_swe_agent
from metisgraph.ingest.adapters.native import read_native
from metisgraph.ingest.adapters.openhands import read_openhands
from metisgraph.ingest.adapters.swe_agent import read_swe_agent

__all__ = ["READERS", "SourceFile", "list_sources", "read_path"]

Reader = Callable[[Path, str | None], Iterator[Parsed | Refused]]

READERS: dict[str, Reader] = {
    "native": read_native,
    "corpus": read_corpus,
    "swe-agent": read_swe_agent,
    "mini-swe-agent": read_mini_swe_agent,
    "openhands": read_openhands,
    "harness-report": read_harness_report,
}


@dataclass(frozen=True)
class SourceFile:
    """A file found under the path, and the format it will be read as (None: skipped)."""

    path: Path
    format: str | None


def list_sources(path: Path, *, format: str | None = None) -> list[SourceFile]:
    """What ``read_path`` would read: one file, or every file under a folder, sorted.

    For a single file ``format`` overrides detection; under a folder it selects the
    files detected as that format. Hidden files and folders are not looked at.
    """
    _check_format(format)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if not path.is_dir():
        return [SourceFile(path, format or detect_format(path))]
    found = []
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        if any(part.startswith(".") for part in file.relative_to(path).parts):
            continue
        guessed = guess_format(file)
        found.append(SourceFile(file, guessed if format in (None, guessed) else None))
    return found


def read_path(
    path: Path, *, format: str | None = None, project: str | None = None
) -> Iterator[Parsed | Refused]:
    """Validated records (tasks before their episodes) and refusals from a file or folder.

    ``project`` decides the project of trajectory runs; for native and corpus
    records, which name their own, it only fills in where a record names none.
    """
    for source in list_sources(path, format=format):
        if source.format is not None:
            yield from _read_file(source.path, source.format, project)


def _read_file(path: Path, format: str, project: str | None) -> Iterator[Parsed | Refused]:
    try:
        yield from READERS[format](path, project)
    except OSError as exc:
        # An unreadable file is a refusal like any other; the other files go on.
        yield refuse(SourceRef(str(path)), None, "", f"cannot read: {exc}")


def _check_format(format: str | None) -> None:
    if format is not None and format not in FORMATS:
        raise UnknownFormatError(
            f"unknown format {format!r}; expected one of: {', '.join(FORMATS)}"
        )
