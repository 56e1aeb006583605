"""The class a user holds: every use case of oneiros, once, for the CLI, REST, MCP and Python.

One flat facade (as temporalio's ``Client`` or eventsourcing's ``Application``): it owns its
collaborators, built once here (the store and read models in a :class:`~oneiros.app._core.Core`,
the golems, executors, reconcilers and daemon by its :class:`~oneiros.app._factory.Factory`), and
composes the parts whose methods are the use cases (reads, records, dreams, the lab). Each use case
is a method of one part, reached here by name; no part is a base class of another, or of this one.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from oneiros._deps import Deps
from oneiros.app._core import Consistency, Core, Progress
from oneiros.app._dreams import Dreams
from oneiros.app._factory import Factory
from oneiros.app._items import Items
from oneiros.app._knowledge import Knowledge
from oneiros.app._lab import Lab
from oneiros.app._reads import Reads
from oneiros.app._records import Records
from oneiros.app._sessions import Sessions
from oneiros.app._shapes import Machine
from oneiros.config._load import OneirosConfig, load_config
from oneiros.projections._service import Projections, VerifyResult
from oneiros.store._store import EventStore

__all__ = ["Oneiros"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _shown(part: str, method: Callable[..., Any]) -> Callable[..., Any]:
    name = method.__name__

    def shown(app: Oneiros, /, *args: Any, **kwargs: Any) -> Any:
        return getattr(getattr(app, part), name)(*args, **kwargs)

    functools.update_wrapper(shown, method)
    shown.__module__ = __name__
    shown.__qualname__ = f"Oneiros.{name}"
    return shown


class _Use(Generic[_P, _R]):
    """A use case of a part, as a method of the facade: ``app.<name>(...)`` calls
    ``app.<part>.<name>(...)``, with the part method's signature, type and docstring (read on the
    class, it is the part's method: what ``help()`` and the API reference show)."""

    def __init__(self, part: str, method: Callable[Concatenate[Any, _P], _R]) -> None:
        self.part = part
        self.name = method.__name__
        self.method = method
        self.__doc__ = method.__doc__
        # What the class shows: the part's method, named as the facade's own (as numpy's set_module
        # does), so help() and the API reference list it among the facade's methods.
        self.shown = _shown(part, method)

    @overload
    def __get__(self, app: None, owner: type) -> Callable[Concatenate[Any, _P], _R]: ...
    @overload
    def __get__(self, app: object, owner: type) -> Callable[_P, _R]: ...
    def __get__(self, app: object, owner: type) -> Callable[Concatenate[Any, _P], _R] | Callable[_P, _R]:
        if app is None:
            return self.shown
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

    def __init__(  # noqa: PLR0913 - the public constructor's options, keyword-only, each defaulted
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
        self.knowledge = Knowledge(self.core)
        self.item_store = Items(self.core)
        self.sessions = Sessions(self.core)

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
    """The golem's state at the log head, or rebuilt as of log position ``at``."""
    golem_exists = _Use("reads", Reads.golem_exists)
    """Whether ``golem_id`` was created, from its own stream."""
    golems = _Use("reads", Reads.golems)
    """Every golem (only those ``within``, if given), by id."""
    status = _Use("reads", Reads.status)
    """Dense-Mem's dreaming status: the golem, the effective config, its latest run, how many entries await review."""
    entry = _Use("reads", Reads.entry)
    """One staged entry by its exact id (EntryNotFound if there is none)."""
    entries = _Use("reads", Reads.entries)
    """Staged entries in ``statuses`` (all if empty) of ``golem_id`` (every golem's if None), in staging order or newest
    first."""
    entry_history = _Use("reads", Reads.entry_history)
    """A staged entry's events in order; each confidence step carries the outcome behind it."""
    runs = _Use("reads", Reads.runs)
    """The golem's cycles, newest first, as Dense-Mem's runs list shows them."""
    journal = _Use("reads", Reads.journal)
    """One entry per dream cycle of ``golem_id`` (every golem's if None), newest first."""
    journal_markdown = _Use("reads", Reads.journal_markdown)
    """The journal as journal.md (Bumblebee's shape): the latest ``limit`` cycles, oldest first."""
    cycle = _Use("reads", Reads.cycle)
    """One cycle's journal entry: phases, fragments and thread, counts, tokens and cost."""
    cycle_events = _Use("reads", Reads.cycle_events)
    """A cycle's events in log order, after log position ``after``."""
    report = _Use("reads", Reads.report)
    """What the golem woke up with after cycle ``cycle_id`` (default: its latest that made a report): the DreamReport,
    the wake-up summary and the staged outputs."""
    budget = _Use("reads", Reads.budget)
    """What dreaming spent against each cap, judged by the caps the cycle ran with (as its DreamStart recorded them),
    else this config's."""
    trace = _Use("reads", Reads.trace)
    """A cycle's OpenTelemetry spans across every process that ran it, from the span file (``tracing.spans_path``,
    ``$ONEIROS_SPANS``)."""
    beliefs = _Use("reads", Reads.beliefs)
    """Dream beliefs (Bumblebee), in the order the sink keeps them."""
    noise = _Use("reads", Reads.noise)
    """``[dream]`` noise fragments (Bumblebee)."""
    observations = _Use("reads", Reads.observations)
    """Observations with RED/YLW/GRN priority (OpenSeed)."""
    memory = _Use("reads", Reads.memory)
    """MEMORY.md at ``version`` (the newest if None); None when nothing was promoted yet."""
    memory_versions = _Use("reads", Reads.memory_versions)
    """Every MEMORY.md version, newest first."""
    memory_diff = _Use("reads", Reads.memory_diff)
    """A unified diff of two MEMORY.md versions."""
    write_memory = _Use("reads", Reads.write_memory)
    """Write the newest MEMORY.md into ``directory`` (keeping the one it replaces as ``MEMORY.md.v<N>``); None when
    there is none yet."""
    should_dream = _Use("reads", Reads.should_dream)
    """Whether the golem would dream at ``at`` (now if None): every gate and trigger with the values it compared."""
    events = _Use("reads", Reads.events)
    """The first ``limit`` events of the log (or of ``golem_id``'s stream) after position ``after``."""
    replay = _Use("reads", Reads.replay)
    """Every golem's state rebuilt from the log (as of position ``until``), with no side effects; ``on_progress`` hears
    the position reached."""

    create_golem = _Use("records", Records.create_golem)
    """Create ``golem_id`` (GolemExists if it is there already; with an ``idempotency_key`` it came with before, the
    golem as that call answered)."""
    record_episodes = _Use("records", Records.record_episodes)
    """Record waking episodes in one transaction; a tick recorded before is replaced."""
    import_episodes = _Use("records", Records.import_episodes)
    """Create ``golem_id`` if it is new and record the episodes of ``batches`` (checked whole already:
    ``count_episodes``, an importer's plan) whose ticks it does not have yet, a batch a transaction, so an import cut
    short is finished by running it again."""
    record_activity = _Use("records", Records.record_activity)
    """The golem was busy (a message in, an action, a turn): silence and fatigue count these."""
    record_outcome = _Use("records", Records.record_outcome)
    """Record a waking outcome; the sweep moves the staged entries it is relevant to, and the answer lists those it
    moved, with ``explain`` why, and why the nearest others did not."""
    recall = _Use("records", Records.recall)
    """What the golem knows that matches ``query``: episodes, beliefs, promoted insights and MEMORY.md lines; matching
    dreams come back apart, in ``related_dreams``."""
    review = _Use("records", Records.review)
    """Decide on a staged entry (Dense-Mem's feedback): reinforce, stale, reject or promote_candidate, or revoke a
    promoted one (MEMORY.md's next version drops its line)."""
    reevaluate = _Use("records", Records.reevaluate)
    """Dense-Mem's re_evaluate: active entries whose source episodes are all gone become stale, proposed ones whose
    sources are intact reinforced; the decisions made."""
    rollback_memory = _Use("records", Records.rollback_memory)
    """Restore MEMORY.md ``version`` as a new, newest version."""

    state = _Use("dreams", Dreams.state)
    """The golem's whole state, folded from its stream (a snapshot and what came since)."""
    dream = _Use("dreams", Dreams.dream)
    """Dream one cycle of ``golem_id`` now, with the config's settings and ``options``."""
    interrupt = _Use("dreams", Dreams.interrupt)
    """End the golem's cycle now, interrupted by its owner with ``reason`` (kept in the log): what it produced stays, a
    phase running anywhere finds its next append refused."""
    overview = _Use("dreams", Dreams.overview)
    """Every golem's state at the log head, the log's position, and each cycle under way with its phase, where that
    phase runs and how long the cycle has run."""
    reconciler = _Use("dreams", Dreams.reconciler)
    """What finds the cycles nothing runs any more: with a queue it re-enqueues their phase's job; else it resumes each
    in this process, on ``resume_on`` if given (golem, cycle, and the resume to run: the server's cycle threads), else
    in the caller's thread."""
    recover = _Use("dreams", Dreams.recover)
    """One pass of :meth:`reconciler` over every dreaming golem: what it found and did; ``resumed`` hears how each cycle
    it resumed here ended."""
    heartbeat = _Use("dreams", Dreams.heartbeat)
    """The daemon of ``golem_id`` (``oneiros run``): each tick decides whether it dreams, and runs the cycle on the
    queue's workers, or in this process without one."""

    health = _Use("lab", Lab.health)
    """The dreaming health of ``golem_id`` (every golem's if None): the alarms raised now, and every one raised and
    cleared, with ``metrics`` what the health process holds of each (the cycles, the empty run, cycles and cost since a
    promotion, the hit rate)."""
    lineage = _Use("lab", Lab.lineage)
    """Where a staged entry came from, exactly: its source episodes, the output and generator call it came from, the
    prompt template, model, tokens and cost, and every move since."""
    pairs = _Use("lab", Lab.pairs)
    """The distant memory pairs a dream of ``golem_id`` would draw now, with seed ``seed``."""
    rerun = _Use("lab", Lab.rerun)
    """Re-execute a past cycle from its starting position in a scratch copy, every generator response read from the log
    (no model is called, the live golem is never written): identical, or exactly where and why it diverges."""
    fork = _Use("lab", Lab.fork)
    """Re-run a cycle with other ``settings`` in the new, empty branch store ``into``: recorded answers are reused where
    the request is unchanged, the model is called only where it differs, and this store is only read."""
    diff = _Use("lab", Lab.diff)
    """Two cycles side by side (``b`` in ``other``, a fork's branch, if given): what each produced that the other did
    not, and quality, tokens, cost, calls and models."""

    memory_block = _Use("knowledge", Knowledge.memory_block)
    """What the golem knows, as a prompt section of at most ``budget_tokens`` tokens: its profile, MEMORY.md's lines,
    then what recall ranks for ``query``, each line whole, dated and naming its turns. A read: records no recall."""
    profile = _Use("knowledge", Knowledge.profile)
    """The golem's profile (core memory): the user's standing instructions, preferences and facts about themselves the
    dreams found, each naming its turns; with ``history``, the entries later ones replaced too."""

    items = _Use("item_store", Items.items)
    """The golem's items (an agent framework's key-value store) as the log holds them now, in the order first kept."""
    item = _Use("item_store", Items.item)
    """The item under ``key`` in ``namespace``, or None."""
    keep_item = _Use("item_store", Items.keep_item)
    """Keep ``value`` under ``key`` in ``namespace`` for ``golem_id`` (created if it is new); ``text`` is recorded as
    the item's episode, which recall finds and dreams replay."""
    forget_item = _Use("item_store", Items.forget_item)
    """Forget the item under ``key`` in ``namespace`` (an event; its episode stays); False when there is none."""

    session_items = _Use("sessions", Sessions.session_items)
    """The newest ``limit`` items of the session of ``golem_id`` (an agent framework's session), oldest first."""
    session_entries = _Use("sessions", Sessions.session_entries)
    """The session's newest ``limit`` items with the tick of each item's episode, oldest first."""
    append_session_items = _Use("sessions", Sessions.append_session_items)
    """Record episodes carrying session items at the golem's next free ticks, in one transaction; the ticks taken."""
    pop_session_item = _Use("sessions", Sessions.pop_session_item)
    """Take the newest item out of the session and return it; None when it shows none."""
    clear_session = _Use("sessions", Sessions.clear_session)
    """Take every item out of the session; how many it showed."""

    @staticmethod
    def machine() -> Machine:
        """The GolemMode/DreamPhase machine as it declares itself: its state tree, the transitions
        each state declares and the phase table."""
        return Reads.machine()
