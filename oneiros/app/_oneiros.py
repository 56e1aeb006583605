"""The class a user holds: every use case of oneiros, once, for the CLI, REST, MCP and Python.

One flat facade (as temporalio's ``Client`` or eventsourcing's ``Application``): it owns its
collaborators, built once here (the store and read models in a :class:`~oneiros.app._core.Core`,
the golems, executors, reconcilers and daemon by its :class:`~oneiros.app._factory.Factory`), and
composes the parts whose methods are the use cases (reads, records, dreams, the lab). Each use case
is a method of one part, reached here by name; no part is a base class of another, or of this one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from oneiros._deps import Deps
from oneiros.app._core import Consistency, Core, Progress
from oneiros.app._dreams import Dreams
from oneiros.app._factory import Factory
from oneiros.app._lab import Lab
from oneiros.app._reads import Reads
from oneiros.app._records import Records
from oneiros.app._shapes import Machine
from oneiros.config._load import OneirosConfig, load_config
from oneiros.projections._service import Projections, VerifyResult
from oneiros.store._store import EventStore

__all__ = ["Oneiros"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Use(Generic[_P, _R]):
    """A use case of a part, as a method of the facade: ``app.<name>(...)`` calls
    ``app.<part>.<name>(...)``, with the part method's signature, type and docstring."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, _P], _R]) -> None:
        self.part = part
        self.name = method.__name__
        self.method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, app: None, owner: type) -> Self: ...
    @overload
    def __get__(self, app: object, owner: type) -> Callable[_P, _R]: ...
    def __get__(self, app: object, owner: type) -> Self | Callable[_P, _R]:
        if app is None:
            return self
        found: Callable[_P, _R] = getattr(getattr(app, self.part), self.name)
        return found


class Oneiros:
    """oneiros over one store: record what a golem lives through, dream, read what dreaming
    produced, decide on it, and look into how dreaming goes.

    ``store`` is a store URL (opened here, closed by :meth:`close`), an open
    :class:`~oneiros.EventStore` (left to its owner) or None (``$ONEIROS_STORE``, the
    config's ``store``, else ``sqlite:///.oneiros/events.db``); ``config`` the settings every
    process reads (default: ``oneiros.toml`` and ``ONEIROS_*``, as ``load_config()`` gives them);
    ``deps`` the clock, ids and seed. Each method returns a Struct of :mod:`oneiros.app` (the
    shape ``oneiros ... --json``, the REST API and the MCP tools answer with) and raises an error
    of the :class:`~oneiros.OneirosError` tree for a mistake.

    ``catch_up`` says who keeps the read models up with the log: with True (the default; the
    command line, a script) each read first brings the validation sweep and the projections it
    reads to the log head; with False a follower does (the server's own thread, ``oneiros
    follow``), and a read waits only for what its call asked to see (:meth:`consistent`).

    >>> with Oneiros("memory://") as app:
    ...     app.create_golem("g1").mode
    'Waking'
    """

    def __init__(
        self,
        store: str | EventStore | None = None,
        config: OneirosConfig | None = None,
        *,
        deps: Deps | None = None,
        projections: str | None = None,
        catch_up: bool = True,
        progress: Progress | None = None,
    ) -> None:
        config = config if config is not None else load_config()
        deps = deps if deps is not None else Deps(seed=config.cycle.seed or 0)
        self.factory = Factory(config, deps)
        self.core = Core(
            store,
            config,
            deps=deps,
            projections=projections,
            catch_up=catch_up,
            progress=progress,
            golems=self.factory.golems,
        )
        self.reads = Reads(self.core)
        self.records = Records(self.core, self.reads)
        self.dreams = Dreams(self.core, self.factory)
        self.lab = Lab(self.core)

    # -- what it works on ---------------------------------------------------------------------

    @property
    def store(self) -> EventStore:
        return self.core.store

    @property
    def config(self) -> OneirosConfig:
        return self.core.config

    @property
    def deps(self) -> Deps:
        return self.core.deps

    @property
    def catch_up(self) -> bool:
        return self.core.catch_up

    @property
    def projections(self) -> Projections:
        """The projections beside the store, opened on first use."""
        return self.core.projections

    # -- lifetime -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the projections, and the store if this application opened it."""
        self.core.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- the read models ----------------------------------------------------------------------

    def settle(
        self, reads: Sequence[str] = (), *, sweep: bool = True, on_progress: Callable[[str, int], None] | None = None
    ) -> None:
        """Bring the validation sweep and health alarms (unless ``sweep`` is False) and the
        projections ``reads`` (every one if none) to the log head; ProjectionConflict if other
        processes kept moving them first, attempt after attempt."""
        self.core.settle(reads, sweep=sweep, on_progress=on_progress)

    def follow(self, stop: threading.Event) -> None:
        """Keep the sweep, the health alarms and every projection up with the log until ``stop``."""
        self.core.follow(stop)

    @contextmanager
    def consistent(self, floor: int = 0) -> Iterator[Consistency]:
        """Calls made in this thread inside the block read the log at least up to position
        ``floor`` (and up to their own writes); the :class:`~oneiros.app._core.Consistency`
        yielded says the position of the last write made."""
        with self.core.consistent(floor) as held:
            yield held

    def rebuild(self, name: str | None = None, until: int | None = None) -> dict[str, int]:
        """Drop projection ``name`` (every one if None) and build it again from the log, to the head
        or as of position ``until``; the position each reached."""
        return self.core.rebuild(name, until)

    def verify(self) -> list[VerifyResult]:
        """Bring every projection to the log head, then rebuild each into a scratch store and compare digests."""
        return self.core.verify()

    def require_golem(self, golem_id: str) -> None:
        """GolemNotFound, naming the nearest known golem, unless ``golem_id`` was created."""
        self.core.require_golem(golem_id)

    # -- the use cases, each a method of one part ---------------------------------------------

    golem = _Use("reads", Reads.golem)
    golem_exists = _Use("reads", Reads.golem_exists)
    golems = _Use("reads", Reads.golems)
    status = _Use("reads", Reads.status)
    entry = _Use("reads", Reads.entry)
    entries = _Use("reads", Reads.entries)
    entry_history = _Use("reads", Reads.entry_history)
    runs = _Use("reads", Reads.runs)
    journal = _Use("reads", Reads.journal)
    journal_markdown = _Use("reads", Reads.journal_markdown)
    cycle = _Use("reads", Reads.cycle)
    cycle_events = _Use("reads", Reads.cycle_events)
    report = _Use("reads", Reads.report)
    budget = _Use("reads", Reads.budget)
    trace = _Use("reads", Reads.trace)
    beliefs = _Use("reads", Reads.beliefs)
    noise = _Use("reads", Reads.noise)
    observations = _Use("reads", Reads.observations)
    memory = _Use("reads", Reads.memory)
    memory_versions = _Use("reads", Reads.memory_versions)
    memory_diff = _Use("reads", Reads.memory_diff)
    write_memory = _Use("reads", Reads.write_memory)
    should_dream = _Use("reads", Reads.should_dream)
    events = _Use("reads", Reads.events)
    replay = _Use("reads", Reads.replay)

    create_golem = _Use("records", Records.create_golem)
    record_episodes = _Use("records", Records.record_episodes)
    import_episodes = _Use("records", Records.import_episodes)
    record_activity = _Use("records", Records.record_activity)
    record_outcome = _Use("records", Records.record_outcome)
    recall = _Use("records", Records.recall)
    review = _Use("records", Records.review)
    reevaluate = _Use("records", Records.reevaluate)
    rollback_memory = _Use("records", Records.rollback_memory)

    state = _Use("dreams", Dreams.state)
    dream = _Use("dreams", Dreams.dream)
    interrupt = _Use("dreams", Dreams.interrupt)
    overview = _Use("dreams", Dreams.overview)
    reconciler = _Use("dreams", Dreams.reconciler)
    recover = _Use("dreams", Dreams.recover)
    heartbeat = _Use("dreams", Dreams.heartbeat)

    health = _Use("lab", Lab.health)
    lineage = _Use("lab", Lab.lineage)
    pairs = _Use("lab", Lab.pairs)
    rerun = _Use("lab", Lab.rerun)
    fork = _Use("lab", Lab.fork)
    diff = _Use("lab", Lab.diff)

    @staticmethod
    def machine() -> Machine:
        """The GolemMode/DreamPhase machine as it declares itself: its state tree, the transitions
        each state declares and the phase table."""
        return Reads.machine()
