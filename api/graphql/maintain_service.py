"""Consolidation as a service: `metisgraph maintain`, and the opt-in periodic run in `serve`."""

from __future__ import annotations

import logging

import anyio

from metisgraph.api.services import Services
from metisgraph.graph import (
    ConsolidationSettings,
    MaintainReport,
    calibrate_abstention,
    consolidate,
    projects_to_maintain,
    relate_situations,
)

__all__ = ["maintain", "maintain_periodically"]

log = logging.getLogger("metisgraph.maintain")


async def maintain(
    services: Services,
    projects: list[str] | None = None,
    settings: ConsolidationSettings | None = None,
) -> list[MaintainReport]:
    """Consolidate the given projects, or every project with something to do; the
    episodes a run sees as new or changed get their conflicts and supersessions again
    (ingest writes them too: this catches episodes stored before that existed), and each
    project's abstention threshold is measured again."""
    chosen = settings or services.settings.maintain.consolidation()
    names = projects if projects is not None else await projects_to_maintain(services.store)
    reports = []
    for name in names:
        report = await consolidate(services.store, name, chosen, reconcile=relate_situations)
        # The project's abstention threshold, measured again on what it holds now.
        gate = await calibrate_abstention(
            services.store, name, services.embedder.aencode, in_index=services.vector_filters
        )
        report.abstain_below = gate.threshold
        reports.append(report)
    return reports


async def maintain_periodically(services: Services, every_s: float) -> None:
    """Maintain every project with something to do, every ``every_s`` seconds, for ever.

    A failing run is logged (without its data) and the next one comes on time.
    """
    while True:
        await anyio.sleep(every_s)
        if not services.readiness.ready:
            continue
        try:
            for report in await maintain(services):
                log.info("maintain %s: %s", report.project, report.as_dict())
        except Exception as error:  # the server stays up; the next run tries again
            log.warning("maintain failed: %s", type(error).__name__)
