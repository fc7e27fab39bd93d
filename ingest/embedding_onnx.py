"""The embedding model on ONNX Runtime: documents in batches, questions one by one.

The model's graph is built from its own weights (``bert_graph``: nothing is downloaded or
exported through torch) and kept on disk under a name made of the weights' digest, so a
changed model never meets a stale graph. Its vectors are those of sentence-transformers
(within 1e-6 on the packaged model: tests/test_bert_graph.py); pooling and normalisation
are applied here as sentence-transformers applies them.

Questions have a lane of their own (tokenizer and lock), so a recall never waits for an
ingest batch; a long question (a pasted issue or trace) may go to the graph's int8 twin,
about half the time, checked by direction against the float graph at start.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from metisgraph.ingest.bert_graph import INPUTS, ModelFiles, UnsupportedModel, bert_graph
from metisgraph.ingest.bert_graph import read_model as read_model

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "INT8_MIN_COSINE",
    "OnnxModel",
    "OnnxUnavailable",
    "UnsupportedModel",
    "read_model",
    "runs_by_length",
]

log = logging.getLogger(__name__)

# The int8 graph (weights quantised after the build, onnxruntime's dynamic quantisation)
# cannot give the float vector exactly; it must point the same way: every probe's cosine
# with the float graph's vector at least this. It serves long questions only: on every text
# it cost locomo's short questions 3 of 996 at R@5, and there it saves little.
INT8_MIN_COSINE = 0.98
# Bumped when what is written changes: files of another format are then ignored.
# 1: torch's export of the transformer; 2: built from the weights (bert_graph).
_FORMAT = "2"
_PROBES = (
    "why does the ledger worker use more and more memory the longer it runs",
    "ModuleNotFoundError: No module named 'numpy'",
    "x",
    "pip install -r requirements.txt failed on python 3.12 " * 40,
)


def runs_by_length(lengths: Sequence[int], rows: int, tokens: int) -> list[list[int]]:
    """The texts (by their token counts) in runs of the model: longest first, each run at
    most ``rows`` texts and at most ``tokens`` tokens once padded to its longest (a run
    always takes at least one text).

    Small runs are the fast ones: a run's attention holds rows × heads × length² scores
    (64 rows of 256 tokens: ~200 MB, far past the caches), and texts of like length waste
    little on padding. On the ingest benchmark's texts, one thread, the same vectors: runs
    of 64 rows 95 s, of at most 1,024 padded tokens 50 s (docs/benchmarks.md).
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    runs: list[list[int]] = []
    start = 0
    while start < len(order):
        longest = max(1, lengths[order[start]])
        size = max(1, min(rows, tokens // longest))
        runs.append(order[start : start + size])
        start += size
    return runs


class OnnxUnavailable(RuntimeError):
    """Part of the ONNX path cannot serve; the message says why."""


class _Lane:
    """A tokenizer and a lock: a fast tokenizer used from two threads at once fails
    ("Already borrowed"), and a lane runs one call at a time."""

    def __init__(self, files: ModelFiles) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(files.tokenizer_file))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=files.max_tokens)
        self.lower_case = files.lower_case
        self.lock = threading.Lock()

    def tokens(self, texts: Sequence[str]) -> list[Any]:
        if self.lower_case:
            texts = [t.lower() for t in texts]
        return list(self.tokenizer.encode_batch(list(texts)))


def _feed(encodings: Sequence[Any]) -> dict[str, NDArray[np.int64]]:
    """Right-padded id, mask and type arrays of a batch (padding ids are masked out)."""
    width = max(len(e.ids) for e in encodings)
    feed = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUTS}
    for row, e in enumerate(encodings):
        n = len(e.ids)
        feed["input_ids"][row, :n] = e.ids
        feed["attention_mask"][row, :n] = e.attention_mask
        feed["token_type_ids"][row, :n] = e.type_ids
    return feed


class OnnxModel:
    """A BERT-family sentence-transformers model run by ONNX Runtime."""

    runtime = "onnx"

    def __init__(
        self,
        files: ModelFiles,
        graph: Path | bytes,
        *,
        threads: int,
        digest: str,
        question_lanes: int = 1,
    ) -> None:
        import onnxruntime as ort

        # The session holds the weights now: the arrays are not kept twice (~90 MB).
        self.files = replace(files, weights={})
        self.graph_file = graph if isinstance(graph, Path) else None
        self._digest = digest
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._options = options
        self._session = self._open(graph)
        self._documents = _Lane(files)
        # Questions run on as many lanes at once (each its tokenizer, one run at a time; the
        # session serves concurrent runs): one lane kept every question of a busy server in
        # one queue while the other core waited (docs/benchmarks.md).
        self._lanes = max(1, question_lanes)
        self._questions: queue.SimpleQueue[_Lane] = queue.SimpleQueue()
        for _ in range(self._lanes):
            self._questions.put(_Lane(files))
        # (bound, the int8 graph): a question of more than ``bound`` tokens runs on it (None:
        # none). One tuple, so a lane never reads one's bound with another's graph.
        self._long: tuple[int, Any] | None = None

    @property
    def long_from(self) -> int | None:
        return None if self._long is None else self._long[0]

    def _open(self, graph: Path | bytes) -> Any:
        import onnxruntime as ort

        source = str(graph) if isinstance(graph, Path) else graph
        return ort.InferenceSession(source, self._options, providers=["CPUExecutionProvider"])

    @classmethod
    def open(
        cls, path: Path, *, cache_dir: Path, threads: int, question_lanes: int = 1
    ) -> OnnxModel:
        """The model in the directory ``path`` (``UnsupportedModel`` when it is not of a
        shape ``bert_graph`` builds); its graph built once and kept under ``cache_dir``."""
        files = read_model(path)
        digest = files.digest()
        target = cache_dir.expanduser() / f"{digest}-{_FORMAT}.onnx"
        kept: Path | bytes = target
        if not target.exists():
            built = bert_graph(files).SerializeToString()
            try:
                _write(target, built)
            except OSError as exc:  # a read-only home: the graph lives in memory only
                log.warning("the model's graph is not kept at %s: %s", target, exc)
                kept = built
        return cls(files, kept, threads=threads, digest=digest, question_lanes=question_lanes)

    @property
    def question_lanes(self) -> int:
        return self._lanes

    @contextlib.contextmanager
    def _question_lane(self) -> Iterator[_Lane]:
        """A free question lane, for one call (waits while every lane is busy)."""
        lane = self._questions.get()
        try:
            yield lane
        finally:
            self._questions.put(lane)

    @property
    def dimension(self) -> int:
        return self.files.dimension

    @property
    def max_tokens(self) -> int:
        return self.files.max_tokens

    def digest(self) -> str:
        return self._digest

    def encode(
        self, texts: Sequence[str], batch_size: int = 32, batch_tokens: int = 1024
    ) -> NDArray[np.float32]:
        """Documents: tokenised once, run longest first in small runs of like length, rows in
        the order given. A run holds at most ``batch_size`` texts and ``batch_tokens`` tokens
        once padded, unless it is one longer text (`runs_by_length`)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        lane = self._documents
        with lane.lock:
            encodings = lane.tokens(texts)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        lengths = [len(e.ids) for e in encodings]
        for rows in runs_by_length(lengths, batch_size, batch_tokens):
            out[rows] = self._run([encodings[i] for i in rows], self._session)
        return out

    def encode_questions(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Questions, each alone: in one batch a question's first line and its error's
        template were padded to the length of the pasted issue or trace beside them and
        cost as much as it. A text longer than ``long_from`` tokens runs on the int8 graph."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows = []
        long = self._long
        with self._question_lane() as lane:
            for encoding in lane.tokens(texts):
                if long is not None and len(encoding.ids) > long[0]:
                    rows.append(self._run([encoding], long[1]))
                else:
                    rows.append(self._run([encoding], self._session))
        return np.concatenate(rows)

    def _run(self, encodings: Sequence[Any], graph: Any) -> NDArray[np.float32]:
        feed = _feed(encodings)
        (hidden,) = graph.run(["hidden"], feed)
        if self.files.pooling == "cls":
            vectors = hidden[:, 0, :]
        else:
            mask = feed["attention_mask"][..., None].astype(np.float32)
            vectors = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        if self.files.normalize:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.clip(norms, 1e-12, None)
        return np.asarray(vectors, dtype=np.float32)

    def use_int8_from(self, tokens: int) -> None:
        """Questions of more than ``tokens`` tokens go to the graph's int8 twin (weights
        quantised to 8-bit integers, kept beside it) when its vectors keep the float
        graph's direction (INT8_MIN_COSINE on each probe, run alone as questions are);
        otherwise every question stays on the float graph and the reason is logged."""
        try:
            if self.graph_file is None:
                raise OnnxUnavailable("the float graph is not on disk to be quantised")
            session = self._open(_quantised(self.graph_file))
            with self._question_lane() as lane:
                encodings = lane.tokens(_PROBES)
            expected = np.concatenate([self._run([e], self._session) for e in encodings])
            got = np.concatenate([self._run([e], session) for e in encodings])
            cosine = float(np.min(np.sum(got * expected, axis=1) / _norms(got, expected)))
            if cosine < INT8_MIN_COSINE:
                raise OnnxUnavailable(
                    f"its vectors are off the float graph's (cosine {cosine:.4f} "
                    f"< {INT8_MIN_COSINE})"
                )
        except OnnxUnavailable as exc:
            log.warning("long questions are not embedded by the int8 graph: %s", exc)
            return
        self._long = (tokens, session)


def _norms(a: NDArray[np.float32], b: NDArray[np.float32]) -> NDArray[np.float32]:
    out = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.asarray(np.clip(out, 1e-12, None), dtype=np.float32)


def _write(target: Path, data: bytes) -> None:
    """``data`` at ``target`` atomically (a rename when complete): a process stopped half
    way leaves no graph another would load."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=target.parent, suffix=".onnx.part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(scratch, target)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
    log.info("the model's graph is kept at %s", target)


def _quantised(path: Path) -> Path:
    """The int8 twin of a graph, written once beside it, atomically: its MatMul weights as
    8-bit integers, one scale per output channel (one scale per tensor bent MiniLM's vectors
    to a cosine of 0.89 with the float ones; per channel keeps >= 0.987 on the dev sets'
    questions), activations quantised per call."""
    target = path.with_name(f"{path.stem}-int8pc.onnx")
    if target.exists():
        return target
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:  # pragma: no cover - part of onnxruntime
        raise OnnxUnavailable(f"onnxruntime's quantisation is missing ({exc})") from exc
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".onnx.part")
    os.close(handle)
    log.info("quantising the question model to int8 at %s", target)
    try:
        quantize_dynamic(
            str(path),
            scratch,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
        os.replace(scratch, target)
    except Exception as exc:
        Path(scratch).unlink(missing_ok=True)
        raise OnnxUnavailable(f"quantising the ONNX graph to int8 failed: {exc}") from exc
    return target
