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

from oneiros.app._oneiros import Oneiros
from oneiros.server._background import BackgroundCycles

__all__ = ["ServerReconciler"]

_log = logging.getLogger("oneiros.server")


class ServerReconciler:
    """A :class:`~oneiros.runtime._reconcile.Reconciler` on a thread of the server, resuming
    stranded cycles on ``cycles``."""

    def __init__(self, app: Oneiros, cycles: BackgroundCycles) -> None:
        self.app, self.cycles = app, cycles
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """A pass now, then one every ``recovery.interval_seconds`` until :meth:`close`; a stranded
        cycle resumes on a cycle thread of the server, with the generator the cycle recorded."""
        reconciler = self.app.reconciler(resume_on=self.cycles.resume, own=self.cycles.running)
        self._thread = threading.Thread(
            target=reconciler.watch, args=(self._stop.wait,), name="oneiros-reconciler", daemon=True
        )
        self._thread.start()
        _log.info("reconciling the cycles this server runs every %gs", self.app.config.recovery.interval_seconds)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
