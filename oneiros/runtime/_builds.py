"""What the layers below the application take to build golems, executors and reconcilers: a
:class:`Builder`, injected. The application's factory (``oneiros.app._factory.Factory``, the
composition root) is one; :class:`Plain` is this layer's default, for a caller that has no
application (a worker process, a lab run on a scratch store, a test), and the one other place
those constructors are called."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Protocol

from oneiros._deps import Deps
from oneiros.fsm._observers import Observers
from oneiros.fsm._service import Golems
from oneiros.runtime._reconcile import PhaseJobs, Reconciler
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._races import RaceSettings
from oneiros.settings._recovery import RecoverySettings
from oneiros.settings._runtime import SnapshotSettings
from oneiros.store._store import EventStore

if TYPE_CHECKING:  # the executor imports this layer's process module, which imports this one
    from oneiros.generators._protocol import Generator
    from oneiros.runtime._executor import InProcessExecutor, PhaseListener

__all__ = ["Builder", "Plain"]


class Builder(Protocol):
    """Builds the golems' commands, an in-process executor and a reconciler, each with the
    settings of whoever made the builder."""

    def golems(
        self,
        store: EventStore,
        *,
        observers: Observers | None = None,
        trace_context: Callable[[], dict[str, str]] | None = None,
        deps: Deps | None = None,
    ) -> Golems: ...

    def in_process(
        self,
        golems: Golems,
        generator: Generator | None = None,
        settings: CycleSettings | None = None,
        on_phase: PhaseListener | None = None,
    ) -> InProcessExecutor: ...

    def reconciler(
        self,
        golems: Golems,
        *,
        jobs: PhaseJobs | None = None,
        run: Callable[[str, str], object] | None = None,
        own: Callable[[], Collection[str]] | None = None,
    ) -> Reconciler: ...


class Plain:
    """The default :class:`Builder`: the settings given here, else each one's defaults."""

    def __init__(
        self,
        *,
        snapshots: SnapshotSettings | None = None,
        races: RaceSettings | None = None,
        recovery: RecoverySettings | None = None,
        deps: Deps | None = None,
    ) -> None:
        self.snapshots = snapshots
        self.races = races
        self.recovery = recovery
        self.deps = deps

    def golems(
        self,
        store: EventStore,
        *,
        observers: Observers | None = None,
        trace_context: Callable[[], dict[str, str]] | None = None,
        deps: Deps | None = None,
    ) -> Golems:
        return Golems(
            store,
            deps=deps or self.deps,
            observers=observers,
            trace_context=trace_context,
            snapshots=self.snapshots,
            races=self.races,
        )

    def in_process(
        self,
        golems: Golems,
        generator: Generator | None = None,
        settings: CycleSettings | None = None,
        on_phase: PhaseListener | None = None,
    ) -> InProcessExecutor:
        from oneiros.runtime._executor import InProcessExecutor  # noqa: PLC0415 - it imports this module's importers

        return InProcessExecutor(golems, generator, settings, on_phase, self.recovery)

    def reconciler(
        self,
        golems: Golems,
        *,
        jobs: PhaseJobs | None = None,
        run: Callable[[str, str], object] | None = None,
        own: Callable[[], Collection[str]] | None = None,
    ) -> Reconciler:
        return Reconciler(golems, self.recovery, jobs=jobs, run=run, own=own)
