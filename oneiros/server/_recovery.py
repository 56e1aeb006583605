"""The server's reconciler: cycles the server runs itself are as crash-safe as the workers'.

A cycle the server runs (no ``server.queue``) holds the golem's lease on the whole cycle while it
runs, as ``oneiros dream`` does (the in-process executor takes it). A server killed mid-cycle stops
renewing it; on this host its lease is moot at once (its pid is gone), elsewhere once it lapses.
This reconciler, the one the workers and the daemon run, looks at start and every
``recovery.interval_seconds``: a cycle that nothing runs is resumed on one of this server's cycle
threads (phases are idempotent, so recorded generator answers are reused), or ended interrupted
with the reason once its resumes are spent. With a queue the workers' reconcilers do this, and the
server runs none.
"""

from __future__ import annotations

import logging
import threading

from oneiros._deps import Deps
from oneiros.config._load import OneirosConfig
from oneiros.fsm._service import Golems
from oneiros.runtime._reconcile import Reconciler
from oneiros.server._background import BackgroundCycles
from oneiros.store._store import EventStore

__all__ = ["ServerReconciler"]

_log = logging.getLogger("oneiros.server")


class ServerReconciler:
    """A :class:`~oneiros.runtime._reconcile.Reconciler` on a thread of the server, resuming
    stranded cycles on ``cycles``."""

    def __init__(self, store: EventStore, config: OneirosConfig, cycles: BackgroundCycles, deps: Deps) -> None:
        self.store, self.config, self.cycles, self.deps = store, config, cycles, deps
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _golems(self) -> Golems:
        return Golems(self.store, deps=self.deps, snapshots=self.config.snapshots, races=self.config.races)

    def _resume(self, golem_id: str, cycle_id: str) -> None:
        """Run the rest of the cycle on a cycle thread of the server (the reconciler recorded the
        resume already), with the generator the cycle recorded."""
        from oneiros.runtime._executor import InProcessExecutor  # noqa: PLC0415 - NumPy, when a cycle is resumed

        config = self.config

        def run() -> object:
            executor = InProcessExecutor(self._golems(), settings=config.cycle, recovery=config.recovery)
            return executor.resume_cycle(golem_id, cycle_id)

        self.cycles.resume(golem_id, cycle_id, run)

    def start(self) -> None:
        """A pass now, then one every ``recovery.interval_seconds`` until :meth:`close`."""
        reconciler = Reconciler(self._golems(), self.config.recovery, run=self._resume, own=self.cycles.running)
        self._thread = threading.Thread(
            target=reconciler.watch, args=(self._stop.wait,), name="oneiros-reconciler", daemon=True
        )
        self._thread.start()
        _log.info("reconciling the cycles this server runs every %gs", self.config.recovery.interval_seconds)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
