"""Where a file sits in an agent run's folder: the run it belongs to."""

from __future__ import annotations

from pathlib import Path

__all__ = ["run_folder", "run_name"]

# Folders a run keeps its parts in: a run is named by the folder above them.
_LAYOUT = {"trajs", "trajectories", "eval", "evaluation", "results", "logs", "reports", "preds"}


def run_name(path: Path) -> str:
    """The run a file belongs to: the folder above its layout folders (``trajs``, ``eval``,
    ``results``, ``logs`` …) and above its instance's own folder inside one
    (``logs/<id>/report.json``, ``trajs/<id>/<id>.traj.json``)."""
    return run_folder(path).name or "run"


def run_folder(path: Path) -> Path:
    """The folder of the run a file belongs to (``run_name`` is its name)."""
    folder = path.resolve().parent
    own = path.name.startswith(folder.name) or path.name == "report.json"
    if own and folder.parent.name in _LAYOUT and folder.name not in _LAYOUT:
        folder = folder.parent
    while folder.parent != folder and folder.name in _LAYOUT:
        folder = folder.parent
    return folder
