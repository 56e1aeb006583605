"""What the server adds to the application layer, once for REST and MCP: who may do what (a
token's scopes and golems), the projections kept up by a follower thread of its own, and the
cycles it runs itself on threads (``_background``).

The application (:class:`~oneiros.app.Oneiros`) holds every use case; reads answer from the
projections as the follower keeps them (or ``oneiros follow`` elsewhere). A write answers once its
events are committed, with their log position; a read waits for the projections it reads to reach
the position its request names (``_consistency``) and every write this server has answered, so a
client reads its own writes through one server, and through several by passing the position on.
No lock is held across a request: any number of servers can run side by side on one store.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TypeVar

import msgspec

from oneiros._deps import Deps
from oneiros._errors import EntryNotFound
from oneiros.app._oneiros import Oneiros
from oneiros.app._shapes import CycleRun, Entry
from oneiros.config._load import OneirosConfig
from oneiros.server._auth import Principal, Scope
from oneiros.server._background import BackgroundCycles
from oneiros.server._models import CycleIn
from oneiros.server._recovery import ServerReconciler
from oneiros.store._store import EventStore
from oneiros.telemetry._spans import current_span

__all__ = ["Service", "served_config"]

_T = TypeVar("_T")


def served_config(config: OneirosConfig) -> OneirosConfig:
    """``config`` as the server's cycles run with it: on ``server.queue`` when it names one, else in
    the server with the generator ``server.generator`` names, else ``cycle.generator``'s (reaching an
    OpenAI-compatible server as ``[cycle.generator.openai]`` says, as for ``oneiros dream``)."""
    server = config.server
    if server.queue:
        return msgspec.structs.replace(config, queue=server.queue)
    if server.generator is None:
        return msgspec.structs.replace(config, queue="")
    generator = msgspec.structs.replace(config.cycle.generator, kind=server.generator)
    cycle = msgspec.structs.replace(config.cycle, generator=generator)
    return msgspec.structs.replace(config, queue="", cycle=cycle)


class Service:
    """The application over one store, as the server serves it."""

    def __init__(
        self, store: EventStore, config: OneirosConfig, *, deps: Deps | None = None, reconcile: bool = True
    ) -> None:
        self.config = config
        self.settings = config.server
        self.app = Oneiros(store, served_config(config), deps=deps, catch_up=False)
        self._stop = threading.Event()
        self._follower: threading.Thread | None = None
        # The highest log position a write of this server answered with: every read includes it.
        self._acknowledged = 0
        self._acknowledging = threading.Lock()
        self.cycles = BackgroundCycles(
            functools.partial(self.app.factory.golems, store),
            self.settings.max_cycles,
            self.settings.shutdown_grace_seconds,
            on_end=self.app.settle,
        )
        served = self.app.config
        # With a queue the workers reconcile; without one the server runs cycles, so it does (unless
        # it may not write: `oneiros mcp --read-only`).
        recovers = reconcile and not served.queue
        self.reconciler = ServerReconciler(self.app, self.cycles) if recovers else None

    # -- keeping the projections up ---------------------------------------------------------

    def start(self) -> None:
        self.app.settle()
        if self.reconciler is not None:
            self.reconciler.start()
        if self.settings.follow:
            self._follower = threading.Thread(target=self.app.follow, args=(self._stop,), daemon=True)
            self._follower.name = "oneiros-projections"
            self._follower.start()

    def close(self) -> None:
        if self.reconciler is not None:
            self.reconciler.close()  # resumes nothing more: the cycles are stopping
        self.cycles.close()  # then: a cycle's last events still reach the projections
        self._stop.set()
        if self._follower is not None:
            self._follower.join(timeout=5)
        self.app.close()

    def settle(self, on_progress: Callable[[str, int], None] | None = None) -> None:
        """Bring the sweep and every projection to the head (``oneiros serve`` shows the progress
        before it listens)."""
        self.app.settle(on_progress=on_progress)

    # -- consistency ------------------------------------------------------------------------

    def call(self, run: Callable[[], _T], floor: int = 0) -> tuple[_T, int]:
        """``run()`` (one request's use case) with reads that include log position ``floor`` and
        every write this server answered; its answer, and the position it wrote (0: none)."""
        with self.app.consistent(max(floor, self._acknowledged)) as held:
            answer = run()
        if held.written:
            with self._acknowledging:
                self._acknowledged = max(self._acknowledged, held.written)
        return answer, held.written

    # -- who may do what --------------------------------------------------------------------

    def golem(self, who: Principal, scope: Scope, named: str | None) -> str:
        """The golem a call works on (``named``, else the token's one golem, else the config's),
        once ``who`` may use ``scope`` on it."""
        golem_id = named or (who.golems[0] if len(who.golems) == 1 else self.config.golem)
        who.require(scope, golem_id)
        return golem_id

    def entry(self, who: Principal, entry_id: str, scope: Scope = "read") -> Entry:
        """A staged entry ``who`` may use ``scope`` on; another golem's is as absent as a missing one."""
        who.require("read")
        entry = self.app.entry(entry_id)
        if not who.sees(entry.golem_id):
            raise EntryNotFound(entry_id)
        who.require(scope, entry.golem_id)
        return entry

    def dream(self, who: Principal, golem_id: str, body: CycleIn, idempotency_key: str | None = None) -> CycleRun:
        """Dense-Mem's ``run_dreaming_cycle``: the cycle on the queue, or on a thread of this server
        (answered once it started, unless the body asks to wait, at most ``server.cycle_wait_seconds``)."""
        who.require("write", golem_id)
        with current_span("dream", {"oneiros.golem_id": golem_id}) as span:
            options = body.options(self.settings.cycle_wait_seconds)
            run = self.app.dream(golem_id, options, background=self.cycles, idempotency_key=idempotency_key)
            # The request's trace names the cycle, whose own trace starts at its root span.
            span.set_attribute("oneiros.request.cycle_id", run.cycle_id or "")
        # The server does not say where it stores its log or finds its queue.
        return msgspec.structs.replace(run, store=None, queue=None)
