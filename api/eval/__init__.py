"""Evaluation harnesses: how well signatures group log lines and how well recall ranks.

`metisgraph eval …` (api/cli/eval.py) runs them on labelled sets.
"""

__all__: list[str] = []  # the harnesses are imported from their modules: signatures, retrieval
