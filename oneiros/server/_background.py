"""Cycles the server runs itself (no ``server.queue``), off the request thread.

A request that starts a cycle waits only until the golem has fallen asleep (its ``DreamStart`` is
in the log, so the cycle id is known and the status, journal and event routes show it), then
answers ``202``; the phases go on on a thread of their own. What stops a cycle from starting (no
such golem, a golem already dreaming) is still the request's error. At most
``server.max_cycles`` run at once; one more is refused with ``503``, not queued, so every accepted
cycle is running. When a cycle ends the projections are brought to the head (``on_end``), so they
show it ended even where no follower runs. On shutdown each running cycle gets
``server.shutdown_grace_seconds`` to finish, then is recorded as interrupted (by its owner, "server
stopped"), as ``oneiros run`` does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from oneiros._errors import WorkerError
from oneiros.events._types import DreamStart
from oneiros.fsm._observers import Observers
from oneiros.fsm._service import Golems
from oneiros.store._store import Recorded

__all__ = ["BackgroundCycles"]

_log = logging.getLogger("oneiros.server")


class BackgroundCycles:
    """The cycles this server is running, each on a thread, at most ``limit`` at once."""

    def __init__(
        self, golems: Callable[[], Golems], limit: int, grace_seconds: float, on_end: Callable[[], None] | None = None
    ) -> None:
        self.golems = golems  # the application's (its factory's), to end the cycles still running at close
        self.on_end = on_end
        self.limit = limit
        self.grace_seconds = grace_seconds
        self._lock = threading.Lock()
        self._slots = 0
        self._running: dict[str, tuple[str, threading.Thread]] = {}
        self._closed = False

    def running(self) -> list[str]:
        """The ids of the cycles running now."""
        with self._lock:
            return [cycle for cycle, (_golem, thread) in self._running.items() if thread.is_alive()]

    def start(self, golem_id: str, run: Callable[[Observers], object]) -> str:
        """Call ``run`` (one cycle of ``golem_id``, made with the observers given) on a thread of
        its own; return the cycle's id once its ``DreamStart`` is committed, or raise what stopped
        it before then."""
        with self._lock:
            if self._closed:
                raise WorkerError("the server is stopping; start the cycle again once it is back")
            if self._slots >= self.limit:
                raise WorkerError(
                    f"{self._slots} cycles already running in this server (server.max_cycles = {self.limit}); "
                    "retry when one has ended, or run cycles on workers (server.queue)"
                )
            self._slots += 1
        started = threading.Event()
        found: dict[str, str] = {}
        failed: list[Exception] = []

        def on_start(record: Recorded) -> None:
            event = record.event
            if isinstance(event, DreamStart) and not started.is_set():
                found["cycle_id"] = event.cycle_id
                started.set()

        observers = Observers()
        observers.on_event(DreamStart, on_start)

        def body() -> None:
            try:
                run(observers)
            except Exception as exc:  # before the start: the request's error; after: logged
                failed.append(exc)
                if started.is_set():
                    _log.exception("cycle %s of %s failed", found.get("cycle_id"), golem_id)
            finally:
                # The cycle has ended: its slot is free before the projections catch up, so a client
                # that reads it complete (a read settles too) may start the next one at once.
                with self._lock:
                    self._slots -= 1
                if self.on_end is not None and started.is_set():
                    try:
                        self.on_end()
                    except Exception:  # the cycle is in the log; the projections catch up later
                        _log.exception("bringing the projections up after cycle %s failed", found.get("cycle_id"))
                with self._lock:
                    self._running.pop(found.get("cycle_id", ""), None)
                started.set()

        thread = threading.Thread(target=body, name=f"oneiros-cycle-{golem_id}", daemon=True)
        thread.start()
        started.wait()
        if "cycle_id" not in found:
            raise failed[0] if failed else WorkerError(f"the cycle of {golem_id!r} ended before it started")
        cycle_id = found["cycle_id"]
        with self._lock:
            if thread.is_alive():
                self._running[cycle_id] = (golem_id, thread)
        return cycle_id

    def resume(self, golem_id: str, cycle_id: str, run: Callable[[], object]) -> None:
        """Run ``run`` (the rest of stranded cycle ``cycle_id``, as the reconciler resumes it) on a
        thread of its own. It takes a slot but is never refused: the reconciler has recorded the
        resume, and the cycle must go on (or end) somewhere. Shutdown treats it as any other."""
        with self._lock:
            if self._closed:
                return  # the next server's reconciler resumes it
            self._slots += 1

        def body() -> None:
            try:
                run()
            except Exception:
                _log.exception("resumed cycle %s of %s failed", cycle_id, golem_id)
            finally:
                with self._lock:
                    self._slots -= 1
                if self.on_end is not None:
                    try:
                        self.on_end()
                    except Exception:  # the cycle is in the log; the projections catch up later
                        _log.exception("bringing the projections up after cycle %s failed", cycle_id)
                with self._lock:
                    self._running.pop(cycle_id, None)

        thread = threading.Thread(target=body, name=f"oneiros-resume-{golem_id}", daemon=True)
        with self._lock:
            self._running[cycle_id] = (golem_id, thread)
        thread.start()

    def wait(self, cycle_id: str, timeout: float | None) -> None:
        """Until cycle ``cycle_id`` (one this server runs) has ended, or ``timeout`` seconds."""
        with self._lock:
            running = self._running.get(cycle_id)
        if running is not None:
            running[1].join(timeout)

    def close(self) -> None:
        """Refuse new cycles; give the running ones the grace period, then interrupt them."""
        with self._lock:
            self._closed = True
            running = dict(self._running)
        if not running:
            return
        deadline = time.monotonic() + self.grace_seconds
        for _golem, thread in running.values():
            thread.join(max(0.0, deadline - time.monotonic()))
        late = {cycle: golem for cycle, (golem, thread) in running.items() if thread.is_alive()}
        golems = self.golems()
        for cycle_id, golem_id in late.items():
            _log.warning("cycle %s still running after %ss; interrupting it", cycle_id, self.grace_seconds)
            golems.end_cycle(golem_id, cycle_id, "owner", "server stopped")
        # The log is closed to those cycles now; a generator call that never returns must not hold the exit.
        deadline = time.monotonic() + self.grace_seconds
        for cycle_id in late:
            running[cycle_id][1].join(max(0.0, deadline - time.monotonic()))
