"""Evaluation harnesses: how well signatures group log lines and how well recall ranks.

`metisgraph eval …` (api/cli_eval.py) runs them on labelled sets.
"""
