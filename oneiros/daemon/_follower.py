"""The log follower a daemon keeps running: the validation sweep, the health process and every
projection, up with the log on a thread of their own (``daemon.follow``).

In a deployment nothing else may read the log continuously: without this thread, an outcome
promotes nothing and a health alarm reaches no observer until someone runs a reading command. It
runs :func:`oneiros.daemon._catch_up.follow`, the same subscription the server's follower and
``oneiros follow`` run, so any number of them may run side by side on one store (a stretch decided
by another process is left to it). Its own thread, not the heartbeat's: a long catch-up never
delays a tick, and a tick of a minute never delays a promotion.
"""

from __future__ import annotations

import logging
import os
import threading

from oneiros.daemon._catch_up import follow
from oneiros.projections._db import default_projection_url, open_projection_db
from oneiros.projections._service import Projections
from oneiros.settings._health import HealthSettings
from oneiros.store._store import EventStore
from oneiros.validation._staged import StagingSettings

__all__ = ["LogFollower", "projection_url"]

_log = logging.getLogger("oneiros.daemon")


def projection_url(store: EventStore) -> str:
    """Where the projections live, as every command finds them: ``ONEIROS_PROJECTIONS``, else beside
    the store."""
    return os.environ.get("ONEIROS_PROJECTIONS") or default_projection_url(store.url)


class LogFollower:
    """:func:`oneiros.daemon._catch_up.follow` on a thread, restarted after ``retry_seconds`` if it fails
    (a database that went away comes back), stopped by :meth:`stop`."""

    def __init__(
        self,
        store: EventStore,
        staging: StagingSettings,
        health: HealthSettings,
        *,
        url: str | None = None,
        retry_seconds: float = 5.0,
    ) -> None:
        self.store = store
        self.staging = staging
        self.health = health
        self.url = url or projection_url(store)
        self.retry_seconds = retry_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="oneiros-follower", daemon=True)
        self._thread.start()
        # No URL here: a PostgreSQL one may carry a password.
        _log.info("following the log: validation sweep, health alarms and projections")

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop following; False if the thread did not end within ``timeout``."""
        self._stop.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                # Opened on this thread: a SQLite connection belongs to the thread that made it.
                with Projections(self.store, open_projection_db(self.url)) as projections:
                    follow(projections, self._stop, self.staging, self.health)
            except Exception:  # the heartbeat goes on; following resumes from the recorded positions
                _log.exception("following the log failed; retrying in %ss", self.retry_seconds)
                self._stop.wait(self.retry_seconds)
