"""What every use case of the application layer stands on: the store, the config, the projections
and how they are kept up with the log, and the golems' commands. One :class:`Core` per
:class:`~oneiros.app.Oneiros`, shared by the parts it composes (never a base class: the parts call
it, and the concerns they declare, ``oneiros.app._concerns``, call it for them)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, TypeVar

from oneiros._deps import Deps
from oneiros._errors import CycleNotFound, GolemNotFound, ProjectionBehind, ProjectionConflict
from oneiros.config._load import OneirosConfig, load_config
from oneiros.daemon._catch_up import follow, update
from oneiros.fsm._service import Golems
from oneiros.health._health import PROCESS_NAME as HEALTH_PROCESS
from oneiros.health._health import HealthProcess
from oneiros.projections._db import default_projection_url, open_projection_db
from oneiros.projections._index import golem_dreams, journal_entry, staged_entries
from oneiros.projections._journal import JournalEntry
from oneiros.projections._service import Projections, ProjectionSettings, VerifyResult
from oneiros.projections._staging import StagedEntry
from oneiros.store._store import EventStore, open_store
from oneiros.store._unit import UnitOfWork
from oneiros.validation._review import Feedback
from oneiros.validation._sweep import PROCESS_NAME as STAGING_PROCESS
from oneiros.validation._sweep import StagingProcess

if TYPE_CHECKING:  # the cycle runtime loads NumPy: on first use only
    from oneiros.runtime._golem_log import GolemLogs

__all__ = ["Consistency", "Core", "Progress"]

Progress = Callable[[], AbstractContextManager[Callable[[str, int], None] | None]]
"""Made around each catch-up: a context that gives what hears each step (what is moving, and the
log position it reached), or None. ``oneiros`` draws its progress bar with one."""

_T = TypeVar("_T")
_SETTLE_ATTEMPTS = 20
"""How many times a catch-up starts again from where another process left the read models before
it gives up (ProjectionConflict): a follower that keeps committing first is not caught up with."""
# A follower of another process moves shared projections without waking this one: look again this
# often while a read waits for a position.
_LOOK_AGAIN_SECONDS = 0.02


class Consistency:
    """What one call (a request) asked to see and what it wrote: ``floor``, the log position its
    reads must include (a consistency token; raised by its own writes, so it reads them), and
    ``written``, the position of its last append (0 when it appended nothing)."""

    __slots__ = ("floor", "written")

    def __init__(self, floor: int = 0) -> None:
        self.floor = floor
        self.written = 0

    def wrote(self, position: int) -> None:
        self.written = max(self.written, position)
        self.floor = max(self.floor, position)


class Core:
    """The store and config an application works on, the read models beside the store, and each
    thread's golem commands.

    ``catch_up`` says who keeps the read models up with the log: with True (the default; the
    command line, a script) each read first brings the validation sweep and the projections it
    reads to the log head; with False a follower does (the server's own thread, ``oneiros
    follow``) and reads answer from the projections as they are. Either way a write answers once
    the projections include it, so a caller reads its own writes.

    With False, a write answers once its events are committed, without waiting for any read model,
    and a read waits only for the projections it reads, and only up to the position its call
    asked for (:meth:`consistent`): at least its own writes.
    """

    def __init__(  # noqa: PLR0913 - built by the facade alone, from its own options; the facade is being recomposed (issue 35)
        self,
        store: str | EventStore | None,
        config: OneirosConfig | None,
        *,
        deps: Deps | None,
        projections: str | None,
        catch_up: bool,
        progress: Progress | None,
        golems: Callable[[EventStore], Golems],
    ) -> None:
        self.config = config if config is not None else load_config()
        self._owned = not isinstance(store, EventStore)
        self.store = store if isinstance(store, EventStore) else open_store(store or self.config.store or None)
        self.deps = deps if deps is not None else Deps(seed=self.config.cycle.seed or 0)
        self.catch_up = catch_up
        self.progress = progress
        self._make_golems = golems
        self._projections_url = projections
        self._projections: Projections | None = None
        # One thread of this process settles the projections at a time.
        self._moving = threading.Lock()
        # Notified when this process's follower has applied a batch: reads waiting for a position.
        self._moved = threading.Condition()
        self._opening = threading.Lock()
        # Each thread its own golems and folds: they cache what they read, and are not shared.
        self._local = threading.local()

    def close(self) -> None:
        """Close the projections, and the store if this application opened it."""
        if self._projections is not None:
            self._projections.close()
            self._projections = None
        if self._owned:
            self.store.close()

    # -- the read models ----------------------------------------------------------------------

    @property
    def projections(self) -> Projections:
        """The projections beside the store (or at ``projections``, the config's
        ``server.projections``, ``$ONEIROS_PROJECTIONS``), opened on first use."""
        with self._opening:
            if self._projections is None:
                url = (
                    self._projections_url
                    or self.config.server.projections
                    or os.environ.get("ONEIROS_PROJECTIONS")
                    or default_projection_url(self.store.url)
                )
                self._projections = Projections(
                    self.store, open_projection_db(url), ProjectionSettings(recall=self.config.recall)
                )
            return self._projections

    def settle(
        self, reads: Sequence[str] = (), *, sweep: bool = True, on_progress: Callable[[str, int], None] | None = None
    ) -> None:
        """Bring the validation sweep and health alarms (unless ``sweep`` is False) and the
        projections ``reads`` (every one if none) to the log head. The one place writes and reads
        wait for the read models; ``on_progress`` hears what is moving and the position it reached."""
        with self._moving, self._progress(on_progress) as hear:
            if sweep:
                _settled(lambda: update(self.projections, self.config.staging, self.config.health, reads, hear))
            else:
                _settled(lambda: self.projections.update(reads, hear))

    def health_process(self) -> HealthProcess:
        """The staging and health processes brought to the head (each decision once, as every
        reading command does); the health process, which holds what the alarms judge."""

        def validated() -> HealthProcess:
            StagingProcess(self.store, self.config.staging).catch_up()
            process = HealthProcess(self.store, self.config.health)
            process.catch_up()
            return process.loaded()

        with self._moving:
            return _settled(validated)

    @contextmanager
    def _progress(self, given: Callable[[str, int], None] | None) -> Iterator[Callable[[str, int], None] | None]:
        if given is not None or self.progress is None:
            yield given
            return
        with self.progress() as hear:
            yield hear

    def follow(self, stop: threading.Event) -> None:
        """Keep the sweep, the health alarms and every projection up with the log until ``stop``
        (``oneiros follow``, the server's follower thread). A conflict with another follower leaves
        the stretch to whichever is ahead. Each batch applied wakes the reads waiting for it."""
        follow(self.projections, stop, self.config.staging, self.config.health, on_batch=self._wake)

    def _wake(self) -> None:
        with self._moved:
            self._moved.notify_all()

    # -- consistency ------------------------------------------------------------------------------

    @contextmanager
    def consistent(self, floor: int = 0) -> Iterator[Consistency]:
        """Calls made in this thread inside the block read the log at least up to position
        ``floor`` (and up to their own writes); the :class:`Consistency` yielded says the position
        of the last write made. Without a follower serving reads (``catch_up``), every read
        catches up to the head anyway."""
        outer: Consistency | None = getattr(self._local, "consistency", None)
        held = Consistency(max(floor, outer.floor if outer is not None else 0))
        self._local.consistency = held
        try:
            yield held
        finally:
            self._local.consistency = outer
            if outer is not None:
                outer.wrote(held.written)

    def _await(self, reads: Sequence[str], position: int, *, sweep: bool = True) -> None:
        """Until the projections ``reads`` (every one if none) include log position ``position``,
        and, with ``sweep``, what the validation sweep and health process decided on it; at most
        ``server.consistency_seconds``, then ProjectionBehind."""
        if position <= 0:
            return
        limit = self.config.server.consistency_seconds
        deadline = time.monotonic() + limit
        names = reads or self.projections.names
        target = position
        processes = (STAGING_PROCESS, HEALTH_PROCESS) if sweep else ()
        while True:
            lag = self._lagging(processes, names, position, target)
            if lag is None:
                return
            name, at, wanted = lag
            if processes and name not in processes:
                # The processes decided on ``position``: their decisions lie below the head read
                # then, and the projections must include those too (an outcome's moves, a promotion).
                processes, target = (), wanted
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ProjectionBehind(name, at, wanted, limit)
            with self._moved:
                self._moved.wait(min(remaining, _LOOK_AGAIN_SECONDS))

    def _lagging(
        self, processes: Sequence[str], names: Sequence[str], position: int, target: int
    ) -> tuple[str, int, int] | None:
        """The first process behind ``position`` or projection behind ``target``: its name, the
        position it is at, and the one wanted; None when none is."""
        recorder = self.store.backend.recorder
        for name in processes:
            at = recorder.max_tracking_id(name) or 0
            if at < position:
                return name, at, position
        if processes:
            target = max(target, self.store.head())
        positions = self.projections.db.positions(names)
        for name in names:
            if (reached := positions.get(name, 0)) < target:
                return name, reached, target
        return None

    def rebuild(self, name: str | None = None, until: int | None = None) -> dict[str, int]:
        """Drop projection ``name`` (every one if None) and build it again from the log, to the head
        or as of position ``until``; the position each reached."""
        StagingProcess(self.store, self.config.staging, runner=self.projections.settings.runner).catch_up()
        return self.projections.rebuild(name, until)

    def verify(self) -> list[VerifyResult]:
        """Bring every projection to the log head, then rebuild each into a scratch store and compare
        digests. Without the catch-up a projection nothing had read yet was compared at position 0,
        empty with empty, and said to match having verified nothing."""
        self.settle()
        return self.projections.verify()

    def fresh(self, *reads: str, sweep: bool = True) -> None:
        """Before a read of ``reads``: caught up here, unless a follower keeps them up; then up to
        the position the call asked for."""
        if self.catch_up:
            self.settle(reads, sweep=sweep)
            return
        held: Consistency | None = getattr(self._local, "consistency", None)
        if held is not None:
            self._await(reads, held.floor, sweep=sweep)

    def written(self, position: int, *reads: str, shown: bool = True) -> None:
        """After a write that reached log position ``position``: the projections ``reads`` (every
        one if none) caught up to it, or, where a follower serves reads, the call's reads to come
        will include it, and those the answer shows (``shown``) have reached it."""
        self._wrote(position)
        if self.catch_up:
            self.settle(reads)
        elif shown:
            self._await(reads, position)

    def _wrote(self, position: int) -> None:
        held: Consistency | None = getattr(self._local, "consistency", None)
        if held is not None:
            held.wrote(position)

    @contextmanager
    def writing(self, unit: UnitOfWork, reads: Sequence[str], *, shown: bool = True) -> Iterator[None]:
        """A write through ``unit`` inside the block: each transaction the unit commits raises what
        this call's reads to come must include, as it commits (a read the write makes for its
        answer waits for it); once the block ends, :meth:`written` on the last position it reached."""
        with self.consistent() as held:
            unit.listen(held.wrote)
            yield
        self.written(held.written, *reads, shown=shown)

    # -- commands -----------------------------------------------------------------------------

    def golems(self, unit: UnitOfWork | None = None) -> Golems:
        """This thread's golems: the commands, with the state each golem had when last read; with
        a ``unit``, the same commands appending through it."""
        held: Golems | None = getattr(self._local, "golems", None)
        if held is None:
            held = self._make_golems(self.store)
            self._local.golems = held
        return held if unit is None else held.through(unit)

    def logs(self) -> GolemLogs:
        """This thread's folds of the golems' logs (what a cycle reads), shared with its golems."""
        from oneiros.runtime._golem_log import GolemLogs  # noqa: PLC0415 - NumPy, on first use

        held: GolemLogs | None = getattr(self._local, "logs", None)
        if held is None:
            held = GolemLogs.of(self.golems())
            self._local.logs = held
        return held

    def feedback(self, unit: UnitOfWork | None = None) -> Feedback:
        """Outcomes, reviews and MEMORY.md's versions over the store (appending through ``unit``, if given)."""
        return Feedback(self.store if unit is None else unit, deps=self.deps, golems=self.golems(unit))

    # -- lookups the use cases share ----------------------------------------------------------

    def require_golem(self, golem_id: str) -> None:
        """GolemNotFound, naming the nearest known golem, unless ``golem_id`` was created: what each
        use case naming a golem checks before it writes, so a typo creates and records nothing.
        Nothing read for a golem this thread's commands already hold, else one indexed lookup."""
        if not self.golems().created(golem_id):
            raise self.unknown(golem_id)

    def unknown(self, golem_id: str) -> GolemNotFound:
        """The error for a golem that does not exist, with the known golem nearest to its id."""
        self.fresh("golems", sweep=False)
        return GolemNotFound.among(golem_id, (state.golem_id for state in self.projections.golems()))

    def exists(self, golem_id: str) -> None:
        """GolemNotFound unless ``golem_id`` was created: an empty list would say a golem that
        never was has no dreams, where every other read says it does not exist."""
        if self.projections.golem(golem_id) is None:
            raise self.unknown(golem_id)

    def staged(self, golem_id: str, statuses: Sequence[str] = ()) -> list[StagedEntry]:
        """The golem's staged entries in ``statuses`` (all if empty), in staging order, from the
        index (one golem's rows, not the buffer's)."""
        db = self.projections.db
        return staged_entries(db, [entry_id for _key, entry_id in golem_dreams(db, golem_id, statuses)])

    def journal_entry(self, golem_id: str, cycle_id: str) -> JournalEntry:
        found = journal_entry(self.projections.db, cycle_id)
        if found is None or found.golem_id != golem_id:
            raise CycleNotFound(golem_id, cycle_id)
        return found


def _settled(step: Callable[[], _T]) -> _T:
    """``step()``, run again from where another process left the read models each time it moved
    them first (a ProjectionConflict), at most ``_SETTLE_ATTEMPTS`` times; then the last conflict
    is raised: an answer from read models this process could not bring up would be stale unsaid."""
    for _attempt in range(_SETTLE_ATTEMPTS - 1):
        try:
            return step()
        except ProjectionConflict:
            continue  # another process moved them first; catch up from where it got
    return step()
