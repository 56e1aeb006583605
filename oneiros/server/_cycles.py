"""Starting a cycle through the API: Dense-Mem 002_*'s ``run_dreaming_cycle`` on oneiros's phases.

Dense-Mem runs reflect, re_evaluate and dream in that order, each switchable, and caps new dreams at
``max_outputs``. In oneiros:

* ``reevaluate_enabled`` runs the re_evaluate command (``oneiros reevaluate``) before the cycle;
* ``reflect_enabled`` off means NREM replays no batch (the cycle still passes through every phase,
  as the machine requires, and records it);
* ``dream_enabled`` off means REM imagines nothing (no counterfactuals, creative sessions or
  threats) and integration stages no new entry;
* ``max_outputs`` caps the entries integration stages this cycle.

With reflect and dream both off no cycle starts: only re-evaluation runs. A cycle the server runs
itself runs off the request thread (``_background``): the answer names it as ``dreaming``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from oneiros._deps import Deps
from oneiros._errors import ConfigError, IllegalCommand, masked_url
from oneiros.config._load import OneirosConfig
from oneiros.fsm._machine import destination
from oneiros.fsm._observers import Observers
from oneiros.fsm._service import Golems
from oneiros.server._background import BackgroundCycles
from oneiros.server._models import CycleIn
from oneiros.settings._cycle import CycleSettings
from oneiros.store._store import EventStore
from oneiros.validation._review import Feedback

if TYPE_CHECKING:  # annotations only: the workers load RQ and OpenTelemetry on first use
    from redis import Redis

    from oneiros.generators._protocol import Generator
    from oneiros.runtime._executor import CycleResult

__all__ = ["cycle_settings", "start_cycle"]


def cycle_settings(base: CycleSettings, body: CycleIn) -> CycleSettings:
    """``base`` with the run's toggles and output cap applied."""
    engines = base.engines
    if not body.reflect_enabled:
        engines = msgspec.structs.replace(engines, max_batches=0)
    rem = engines.rem
    staged = body.max_outputs
    if not body.dream_enabled:
        rem = msgspec.structs.replace(rem, counterfactual_seeds=0, creative_sessions=0, threat_scenarios=0)
        staged = 0
    integration = msgspec.structs.replace(engines.integration, max_staged=staged)
    engines = msgspec.structs.replace(engines, rem=rem, integration=integration)
    return msgspec.structs.replace(base, engines=engines)


def start_cycle(
    store: EventStore, config: OneirosConfig, deps: Deps, golem_id: str, body: CycleIn, *, background: BackgroundCycles
) -> dict[str, Any]:
    """Start (or enqueue) one cycle of ``golem_id`` now; what to answer the caller. Without a queue
    the cycle runs on ``background``'s thread and this returns once it started."""
    from oneiros.generators._factory import check_api_key  # noqa: PLC0415 - with the workers, on the first cycle
    from oneiros.runtime._executor import InProcessExecutor, cycle_result  # noqa: PLC0415
    from oneiros.runtime._golem_log import GolemLogs  # noqa: PLC0415
    from oneiros.runtime._process import load_generator  # noqa: PLC0415
    from oneiros.workers._dispatch import RqExecutor  # noqa: PLC0415

    golems = Golems(store, deps=deps)
    state = golems.state(golem_id)  # GolemNotFound before anything is written
    dreams = body.reflect_enabled or body.dream_enabled
    queue = config.server.queue
    generator: Generator | None = None
    connection: Redis | None = None
    # server.generator names only the kind: where and how to reach an OpenAI-compatible server
    # (base URL, key variable, models) stay the config's cycle.generator.openai, as for dream.
    chosen = msgspec.structs.replace(config.cycle.generator, kind=config.server.generator)
    if dreams:
        # What would stop the cycle before its DreamStart stops the request before re-evaluation
        # writes: a 4xx leaves the log as it was.
        if queue:
            connection = _redis(queue)
        else:  # on a queue the workers' environment holds the key
            check_api_key(chosen, "dream")
            generator = load_generator(chosen, deps.seed)
        if destination(state.machine_state, "fall_asleep") is None:
            raise IllegalCommand(golem_id, state.machine_state, "fall_asleep")
        GolemLogs.of(golems).read(golem_id)  # a stored episode the engines cannot fold: InvalidEvent
    reevaluated = len(Feedback(store, deps=deps).reevaluate(golem_id)) if body.reevaluate_enabled else 0
    out: dict[str, Any] = {"golem_id": golem_id, "reevaluated": reevaluated, "cycle_id": None}
    if not dreams:
        return out | {"status": "reevaluated"}
    settings = cycle_settings(config.cycle, body)
    if connection is None:  # the cycle's recorded settings name the generator that writes it
        settings = msgspec.structs.replace(settings, generator=chosen)
    if connection is not None:
        executor = RqExecutor(golems, connection, cycle_settings=settings)
        cycle_id = executor.start_cycle(golem_id)
        if not body.wait:
            return out | {"cycle_id": cycle_id, "status": "enqueued"}
        return out | _ended(executor.wait(golem_id, cycle_id, timeout=config.server.cycle_wait_seconds))
    assert generator is not None  # loaded above: no queue

    def run(observers: Observers) -> object:
        return InProcessExecutor(Golems(store, deps=deps, observers=observers), generator, settings).run_cycle(golem_id)

    cycle_id = background.start(golem_id, run)
    if not body.wait:
        return out | {"cycle_id": cycle_id, "status": "dreaming"}
    background.wait(cycle_id, config.server.cycle_wait_seconds)
    return out | _ended(cycle_result(golems, golem_id, cycle_id))


def _redis(queue: str) -> Redis:
    from redis import Redis  # noqa: PLC0415 - only with a queue

    try:
        return Redis.from_url(queue)
    except ValueError as exc:
        raise ConfigError(f"server.queue {masked_url(queue)!r}: {exc}") from None


def _ended(result: CycleResult) -> dict[str, Any]:
    """What a caller that waited is told of its cycle: how it ended, or that it still runs."""
    status = (
        "interrupted"
        if result.interrupted
        else "empty"
        if result.empty
        else "complete"
        if result.complete is not None
        else "dreaming"
    )
    return {"cycle_id": result.cycle_id, "status": status, "interrupted": result.interrupted, "empty": result.empty}
