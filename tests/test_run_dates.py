"""A run that carries no step times is dated from what it does carry, its steps kept in
order and marked estimated; only with nothing known is it dated at ingest (and said so)."""

from __future__ import annotations

from datetime import UTC, datetime

from metisgraph.ingest.adapters import Parsed, SourceRef
from metisgraph.ingest.adapters.run import Run, Step, run_records
from metisgraph.ingest.prepare.episode import prepare_episode
from metisgraph.ingest.records import EpisodeRecord


def _run(file: str, **times: datetime) -> Run:
    steps: list[Step | object] = [
        Step(f"trajectory[{i}]", "command", command=f"ls {i}", observation="x", executed=True)
        for i in range(3)
    ]
    return Run(
        format="swe-agent",
        ref=SourceRef(file),
        content=file,
        instance_id="acme__ledger-7",
        goal="Fix the ledger",
        agent="swe-agent",
        steps=steps,  # type: ignore[arg-type]
        **times,  # type: ignore[arg-type]
    )


def _episodes(run: Run) -> list[EpisodeRecord]:
    out = []
    for item in run_records(run):
        assert isinstance(item, Parsed)
        if isinstance(item.record, EpisodeRecord):
            out.append(item.record)
    return out


def test_a_folder_named_by_its_date_dates_the_run_and_keeps_the_step_order() -> None:
    steps = _episodes(_run("runs/20240825_120000_java/acme__ledger-7.traj"))
    times = [s.created_at for s in steps]
    assert times[0] == datetime(2024, 8, 25, tzinfo=UTC)
    assert times == sorted(times) and len(set(times)) == 3
    assert {s.facts["time_estimated"] for s in steps} == {"name 20240825_120000_java"}
    assert all(prepare_episode(s).props["time_estimated"] for s in steps)


def test_the_runs_own_start_wins_over_its_folder() -> None:
    start = datetime(2024, 9, 1, 10, 0, tzinfo=UTC)
    steps = _episodes(_run("runs/20240825_java/a.traj", started_at=start))
    assert steps[0].created_at == start and steps[0].facts["time_estimated"] == "run start"


def test_with_nothing_known_it_is_dated_at_ingest_and_says_so() -> None:
    steps = _episodes(_run("runs/java/a.traj"))
    assert all(s.created_at is None for s in steps)
    assert {s.facts["time_estimated"] for s in steps} == {"ingest time"}
    assert prepare_episode(steps[0]).props["time_estimated"] is True


def test_a_step_with_its_own_time_is_not_estimated() -> None:
    run = _run("runs/20240825_java/a.traj")
    own = datetime(2024, 8, 26, 9, 0, tzinfo=UTC)
    for step in run.steps:
        assert isinstance(step, Step)
        step.created_at = own
    steps = _episodes(run)
    assert all(s.created_at == own and "time_estimated" not in s.facts for s in steps)
    assert not prepare_episode(steps[0]).props["time_estimated"]
