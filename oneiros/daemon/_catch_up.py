"""The staging process and the read models together: what ``oneiros follow`` and every reading
command run, so a read sees the sweep's decisions on everything logged before it."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence

from oneiros.health._health import HealthProcess
from oneiros.projections._follow import follow_log
from oneiros.projections._service import Projections
from oneiros.settings._health import HealthSettings
from oneiros.validation._staged import StagingSettings
from oneiros.validation._sweep import StagingProcess

__all__ = ["follow", "update"]


def update(
    projections: Projections,
    settings: StagingSettings | None = None,
    health: HealthSettings | None = None,
    names: Sequence[str] = (),
    on_progress: Callable[[str, int], None] | None = None,
) -> dict[str, int]:
    """Run the staging process, then the health process, to the head, then bring the projections
    ``names`` (every one if none) there. ``on_progress`` hears what is moving (``"sweep"``,
    ``"health"`` or a projection's name) and the log position it reached, as it goes."""
    runner = projections.settings.runner
    for name, process in (
        ("sweep", StagingProcess(projections.store, settings, runner=runner)),
        ("health", HealthProcess(projections.store, health, runner=runner)),
    ):
        if on_progress is not None:
            process.on_progress = functools.partial(on_progress, name)
        process.catch_up()
    return projections.update(names, on_progress)


def follow(
    projections: Projections,
    stop: threading.Event,
    settings: StagingSettings | None = None,
    health: HealthSettings | None = None,
    *,
    on_batch: Callable[[], None] | None = None,
) -> None:
    """Keep the staging process, the health process and every projection up with the log until
    ``stop``, on one subscription: the sweep's decisions reach the others in the next batch.
    ``on_batch`` hears each batch once all of them have applied it."""
    runner = projections.settings.runner
    follow_log(
        projections.store,
        [
            StagingProcess(projections.store, settings, runner=runner),
            HealthProcess(projections.store, health, runner=runner),
            projections.runner(),
        ],
        stop,
        batch_events=runner.batch_events,
        poll_interval_s=runner.poll_interval_s,
        on_batch=on_batch,
    )
