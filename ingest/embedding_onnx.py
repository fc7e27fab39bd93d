"""The question path of the embedder on ONNX Runtime: the same vectors, half the time.

A question is one short text, embedded while a caller waits. torch spends most of that
time in per-call overhead (autograd bookkeeping, the module tree, thread hand-offs), not in
arithmetic; ONNX Runtime runs the same graph with little of it. The graph is exported once
from the loaded sentence-transformers model (its own weights: nothing is downloaded) and
kept on disk under a name made of the weights' digest, so a changed model never meets a
stale graph. Before it is used, the exported graph must give the torch vectors again within
``TOLERANCE`` on a few probe texts; otherwise the question path stays on torch and the
reason is logged. Only models of the usual shape are exported (a transformer, mean or CLS
pooling, optional normalisation); any other model keeps torch.
"""

from __future__ import annotations

import copy
import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["INT8_MIN_COSINE", "TOLERANCE", "OnnxQueryEncoder", "OnnxUnavailable"]

log = logging.getLogger(__name__)

TOLERANCE = 1e-5
# The int8 graph (weights quantised after the export, onnxruntime's dynamic quantisation)
# cannot give the torch vector within TOLERANCE; it must point the same way: every probe's
# cosine with the torch vector at least this. It serves long texts only: on every text it
# cost locomo's short questions 3 of 996 at R@5, and there it saves little.
INT8_MIN_COSINE = 0.98
# Bumped when the export below changes what it writes: old files are then ignored.
_FORMAT = "1"
_OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PROBES = (
    "why does the ledger worker use more and more memory the longer it runs",
    "ModuleNotFoundError: No module named 'numpy'",
    "x",
    "pip install -r requirements.txt failed on python 3.12 " * 40,
)


class OnnxUnavailable(RuntimeError):
    """The question path cannot run on ONNX Runtime; the message says why."""


class OnnxQueryEncoder:
    """Embeds short texts with an ONNX export of a loaded sentence-transformers model."""

    def __init__(
        self,
        session: Any,
        tokenizer: Any,
        *,
        max_tokens: int,
        pooling: str,
        normalize: bool,
        inputs: tuple[str, ...],
    ) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._max_tokens = max_tokens
        self._pooling = pooling
        self._normalize = normalize
        self._inputs = inputs
        self._lock = threading.Lock()
        # The int8 graph, for texts of more than ``long_from`` tokens (None: none).
        self._long_session: Any = None
        self.long_from: int | None = None

    @classmethod
    def build(
        cls,
        model: Any,
        *,
        fingerprint: Callable[[], str],
        cache_dir: Path,
        threads: int,
        int8_from: int | None = None,
    ) -> OnnxQueryEncoder:
        """Export (or reuse) the graph of ``model`` and check it against torch.

        ``fingerprint``: the digest of the model's weights (the store's model stamp), which
        names the export, so other weights never meet a stale graph. ``int8_from``: texts
        of more than that many tokens go to the export's int8 twin (weights quantised to
        8-bit integers, kept beside it), checked by direction (INT8_MIN_COSINE); when it
        cannot serve, every text stays on the float graph and the reason is logged.
        """
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise OnnxUnavailable(f"onnxruntime is not installed ({exc})") from exc
        transformer, pooling, normalize = _shape(model)
        inputs = tuple(n for n in _INPUTS if n in model.tokenizer.model_input_names)
        path = cache_dir.expanduser() / f"{fingerprint()}-{_FORMAT}.onnx"
        if not path.exists():
            _export(transformer, model.tokenizer, inputs, path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL

        def session(graph: Path) -> Any:
            return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

        encoder = cls(
            session(path),
            # A copy: a fast tokenizer used from two threads at once fails ("Already
            # borrowed"), and ingest batches use the model's own on their threads.
            copy.deepcopy(model.tokenizer),
            max_tokens=int(model.max_seq_length),
            pooling=pooling,
            normalize=normalize,
            inputs=inputs,
        )
        expected = np.asarray(
            model.encode(list(_PROBES), normalize_embeddings=normalize, convert_to_numpy=True),
            dtype=np.float32,
        )
        drift = float(np.abs(encoder.encode(_PROBES) - expected).max())
        if drift > TOLERANCE:
            raise OnnxUnavailable(
                f"the ONNX export differs from torch by {drift:.2e} (> {TOLERANCE:.0e})"
            )
        if int8_from is not None:
            try:
                encoder._long_session = session(_quantised(path))
                # Each probe alone, as questions run (activations are quantised per call:
                # padding in a batch moves their scale)
                got = np.concatenate(
                    [encoder._encode_batch([p], encoder._long_session) for p in _PROBES]
                )
                cosine = float(np.min(np.sum(got * expected, axis=1) / _norms(got, expected)))
                if cosine < INT8_MIN_COSINE:
                    raise OnnxUnavailable(
                        f"its vectors are off torch's (cosine {cosine:.4f} < {INT8_MIN_COSINE})"
                    )
            except OnnxUnavailable as exc:
                encoder._long_session = None
                log.warning("long questions are not embedded by the int8 graph: %s", exc)
            else:
                encoder.long_from = int8_from
        return encoder

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of ``texts``, pooled and normalised as the sentence-transformers model.

        Each text runs alone: in one batch a question's first line and its error's template
        were padded to the length of the pasted issue or trace beside them and cost as much
        as it (the model's cost grows with the padded length; the vectors are the same). A
        text longer than ``long_from`` tokens runs on the int8 graph."""
        if len(texts) < 2:
            return self._encode_batch(texts)
        return np.concatenate([self._encode_batch([text]) for text in texts])

    def _encode_batch(self, texts: Sequence[str], graph: Any = None) -> NDArray[np.float32]:
        with self._lock:  # one at a time: the tokenizer is not shared, the cores are few
            batch = self._tokenizer(
                list(texts),
                padding=True,
                truncation=True,
                max_length=self._max_tokens,
                return_tensors="np",
            )
            feed = {name: np.asarray(batch[name], dtype=np.int64) for name in self._inputs}
            if graph is None:
                long = self.long_from is not None and feed["input_ids"].shape[1] > self.long_from
                graph = self._long_session if long else self._session
            (hidden,) = graph.run(["hidden"], feed)
        if self._pooling == "cls":
            vectors = hidden[:, 0, :]
        else:
            mask = feed["attention_mask"][..., None].astype(np.float32)
            vectors = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        if self._normalize:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.clip(norms, 1e-12, None)
        return np.asarray(vectors, dtype=np.float32)


def _norms(a: NDArray[np.float32], b: NDArray[np.float32]) -> NDArray[np.float32]:
    out = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.asarray(np.clip(out, 1e-12, None), dtype=np.float32)


def _quantised(path: Path) -> Path:
    """The int8 twin of an exported graph, written once beside it, atomically: its MatMul
    weights as 8-bit integers, one scale per output channel (one scale per tensor bent
    MiniLM's vectors to a cosine of 0.89 with torch's; per channel keeps >= 0.987 on the
    dev sets' questions), activations quantised per call."""
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


def _shape(model: Any) -> tuple[Any, str, bool]:
    """(transformer module, pooling, normalise) of a model of the usual shape."""
    try:
        modules = list(model)
    except TypeError:
        raise OnnxUnavailable(
            f"{type(model).__name__} is not a sentence-transformers model"
        ) from None
    names = [type(m).__name__ for m in modules]
    if len(modules) not in (2, 3) or names[0] != "Transformer" or names[1] != "Pooling":
        raise OnnxUnavailable(f"model modules {names} are not Transformer, Pooling[, Normalize]")
    if len(modules) == 3 and names[2] != "Normalize":
        raise OnnxUnavailable(f"model modules {names} end in {names[2]}, not Normalize")
    mode = _pooling_mode(modules[1].get_config_dict())
    if mode not in ("mean", "cls"):
        raise OnnxUnavailable(f"pooling {mode!r} is not mean or cls")
    return modules[0], mode, len(modules) == 3


def _pooling_mode(config: dict[str, Any]) -> str:
    """sentence-transformers 6 names the mode; earlier versions set one flag per mode."""
    if isinstance(config.get("pooling_mode"), str):
        return str(config["pooling_mode"])
    flags = [
        k.removeprefix("pooling_mode_")
        for k, v in config.items()
        if k.startswith("pooling_mode_") and v is True
    ]
    names = {"mean_tokens": "mean", "cls_token": "cls"}
    return names.get(flags[0], flags[0]) if len(flags) == 1 else "+".join(flags) or "none"


def _export(transformer: Any, tokenizer: Any, inputs: tuple[str, ...], path: Path) -> None:
    """Write the transformer's graph to ``path`` atomically (a rename when complete)."""
    import torch

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *tensors: Any) -> Any:
            return self.inner(**dict(zip(inputs, tensors, strict=True))).last_hidden_state

    sample = tokenizer(
        ["an example", "a longer example sentence"], padding=True, return_tensors="pt"
    )
    axes = {name: {0: "batch", 1: "tokens"} for name in inputs}
    axes["hidden"] = {0: "batch", 1: "tokens"}
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".onnx.part")
    os.close(handle)
    log.info("exporting the question model to ONNX at %s", path)
    try:
        # The tracer warns about every Python branch it freezes (none matters for a
        # fixed architecture: the probe check after the export is the proof).
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Hidden(transformer.auto_model.eval()),
                tuple(sample[name] for name in inputs),
                scratch,
                input_names=list(inputs),
                output_names=["hidden"],
                dynamic_axes=axes,
                opset_version=_OPSET,
                dynamo=False,
            )
        os.replace(scratch, path)
    except Exception as exc:
        Path(scratch).unlink(missing_ok=True)
        raise OnnxUnavailable(f"exporting the model to ONNX failed: {exc}") from exc
