"""Re-running a past cycle from its starting position, every generator response read from the log.

Like Temporal's replayer for a workflow: the cycle is executed again by today's engines, prompts
and settings, in a scratch store that holds a copy of the golem's log up to the cycle's start (the
live golem is never written), and each generator call is answered by the response recorded for the
same ``call_key`` *and* the same request hash. The re-run's events are then compared with the
recorded ones: identical, or the exact place and reason they diverge (which call and phase, and
what changed in its request: prompt, system prompt, model, temperature, max_tokens...).

:func:`rerun_cycle` takes a ``live`` generator for the calls the recording cannot answer, which
is all a fork needs: the same re-run with other settings, calling a model only where the request
differs from the recorded one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Literal

import msgspec

from oneiros._deps import Deps, FixedClock, SequentialIds
from oneiros._errors import GenerationError, GeneratorUnavailable, InputError, OneirosError, masked_url
from oneiros.events._content import BudgetExhausted, BudgetOverrun, BudgetReserved, GenerationFailed
from oneiros.events._types import (
    CycleEvent,
    DreamInterrupted,
    DreamPhase,
    DreamPhaseName,
    DreamStart,
    Event,
    GenerationRecorded,
    ModeChanged,
)
from oneiros.generators._factory import make_generator
from oneiros.generators._protocol import (
    Generation,
    GenerationRequest,
    Generator,
    RequestShape,
    request_hash,
    request_shape,
)
from oneiros.lab._diff import cycle_start
from oneiros.runtime._builds import Builder, Plain
from oneiros.runtime._metered import generation_of, matches
from oneiros.runtime._phase import run_phase
from oneiros.settings._cycle import CycleSettings
from oneiros.store._store import EventStore, Recorded, open_store

__all__ = ["Divergence", "RecordedGenerator", "RerunReport", "fork_cycle", "rerun_cycle"]

DivergenceKind = Literal["request", "unrecorded_call", "event", "missing_event", "extra_event", "phase_failed"]
Ended = Literal["complete", "interrupted", "in_progress"]
_LEGACY_FIELDS = ("request_hash", "requested_model", "task", "system")


class Divergence(msgspec.Struct, frozen=True, kw_only=True):
    """Where a re-run left the recorded cycle, and why."""

    kind: DivergenceKind
    """``request``: a recorded call whose request changed; ``unrecorded_call``: a call the original
    never made; ``event``/``missing_event``/``extra_event``: the cycle's events differ;
    ``phase_failed``: a phase raised in the re-run."""
    phase: DreamPhaseName | None
    reason: str
    call_key: str | None = None
    index: int | None = None
    """Position of the event among the cycle's events (0 = DreamStart)."""
    recorded: str = ""
    rerun: str = ""


class RerunReport(msgspec.Struct, frozen=True, kw_only=True):
    golem_id: str
    cycle_id: str
    identical: bool
    ended: Ended
    """How the recorded cycle ended; an interrupted cycle is re-run up to its interrupt."""
    phases: tuple[DreamPhaseName, ...]
    """The phases re-executed."""
    events_compared: int
    recorded_calls: int
    """Generator calls answered from the log."""
    model_calls: int
    """Generator calls made to a live model (always 0 for a plain re-run)."""
    divergences: tuple[Divergence, ...] = ()

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None


class _Recording:
    """A cycle's recorded generator answers, by call key, and the overruns their servers claimed."""

    def __init__(self, records: Sequence[Recorded], cycle_id: str) -> None:
        self.answers: dict[str, list[GenerationRecorded | GenerationFailed]] = {}
        self.overruns: dict[str, BudgetOverrun] = {}
        for record in records:
            match record.event:
                case GenerationRecorded() | GenerationFailed() as answer if answer.cycle_id == cycle_id:
                    self.answers.setdefault(answer.call_key, []).append(answer)
                case BudgetOverrun() as overrun if overrun.cycle_id == cycle_id:
                    self.overruns[overrun.call_key] = overrun


class RecordedGenerator:
    """Answers from the generator calls ``records`` hold for ``cycle_id``. ``shape_of`` (the
    generator the settings name) says what a request looks like as sent (model, temperature,
    input count); ``live``, if given, answers what the recording cannot. Every miss is kept as a
    :class:`Divergence`."""

    def __init__(
        self, records: Sequence[Recorded], cycle_id: str, shape_of: Generator, live: Generator | None = None
    ) -> None:
        self.recording = _Recording(records, cycle_id)
        self.shape_of = shape_of
        self.live = live
        self.divergences: list[Divergence] = []
        self.recorded_calls = 0
        self.model_calls = 0

    def __getattr__(self, name: str) -> Any:
        # model_for, max_tokens_in, temperature_for: budgets and hashes read them from the settings' generator.
        return getattr(self.shape_of, name)

    def generate(self, request: GenerationRequest) -> Generation:
        shape = request_shape(self.shape_of, request)
        digest = request_hash(shape)
        candidates = self.recording.answers.get(request.call_key, [])
        for old in reversed(candidates):
            if matches(old, shape, digest):
                self.recorded_calls += 1
                return self._answer(old)
        if candidates:
            divergence = _request_divergence(request, candidates[-1], shape)
        else:
            divergence = Divergence(
                kind="unrecorded_call",
                phase=request.phase,
                call_key=request.call_key,
                reason=f"the recorded cycle made no call {request.call_key!r}",
                rerun=_clip(request.prompt),
            )
        self.divergences.append(divergence)
        if self.live is not None:
            self.model_calls += 1
            return self.live.generate(request)
        raise GeneratorUnavailable(request.call_key, shape.model, 0, f"not in the recording: {divergence.reason}")

    def _answer(self, old: GenerationRecorded | GenerationFailed) -> Generation:
        if isinstance(old, GenerationFailed):
            raise GenerationError(old.call_key, old.reason)  # recorded again with the very same reason
        # An overrun's claims too, so the budget sees the same overrun and stops the phase the same way.
        return generation_of(old, self.recording.overruns.get(old.call_key))


def _clip(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _first_difference(a: str, b: str) -> str:
    i = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, i - 30)
    return f"at character {i}: {a[start : i + 30]!r} became {b[start : i + 30]!r}"


def _request_divergence(
    request: GenerationRequest, old: GenerationRecorded | GenerationFailed, shape: RequestShape
) -> Divergence:
    changes: list[str] = []
    if isinstance(old, GenerationRecorded):
        if old.prompt != shape.prompt:
            changes.append(f"prompt changed {_first_difference(old.prompt, shape.prompt)}")
        if old.requested_model and old.requested_model != shape.model:
            changes.append(f"model changed from {old.requested_model!r} to {shape.model!r}")
        if old.temperature != shape.temperature:
            changes.append(f"temperature changed from {old.temperature:g} to {shape.temperature:g}")
        if old.max_tokens != shape.max_tokens:
            changes.append(f"max_tokens changed from {old.max_tokens} to {shape.max_tokens}")
        if old.request_hash and old.system != shape.system:
            changes.append("system prompt changed")
        if old.request_hash and old.task != shape.task:
            changes.append(f"task changed from {old.task!r} to {shape.task!r}")
        if not changes:
            changes.append("fragments changed")  # the one hashed field a record does not keep
    else:
        changes.append("the request of a recorded failure changed")
    return Divergence(
        kind="request",
        phase=request.phase,
        call_key=request.call_key,
        reason="request hash changed: " + "; ".join(changes),
        recorded=_clip(old.prompt) if isinstance(old, GenerationRecorded) else old.reason,
        rerun=_clip(request.prompt),
    )


class _Cycle(msgspec.Struct, kw_only=True):
    golem_id: str
    start: DreamStart
    start_index: int
    records: list[Recorded]
    """The golem's records from DreamStart to the end of the cycle (host facts included)."""
    ended: Ended = "in_progress"
    interrupted: DreamInterrupted | None = None


def _find_cycle(store: EventStore, cycle_id: str) -> tuple[list[Recorded], _Cycle]:
    start = cycle_start(store, cycle_id)
    assert isinstance(start.event, DreamStart)
    history = store.read_stream(start.golem_id)
    index = next(i for i, r in enumerate(history) if r.position == start.position)
    cycle = _Cycle(golem_id=start.golem_id, start=start.event, start_index=index, records=[])
    for record in history[index:]:
        cycle.records.append(record)
        match record.event:
            case DreamInterrupted(cycle_id=interrupted) as event if interrupted == cycle_id:
                cycle.interrupted = event
            case ModeChanged(from_mode="Dreaming") if record.meta.cycle_id == cycle_id:
                cycle.ended = "interrupted" if cycle.interrupted is not None else "complete"
                break
    return history, cycle


def _phase_plan(cycle: _Cycle) -> list[tuple[DreamPhaseName, list[Recorded]]]:
    """The phases the recorded cycle finished, each with the host facts recorded since the phase
    before it first wrote, up to its own first write (what it could have read), in log order."""
    cycle_id = cycle.start.cycle_id
    records = cycle.records
    entered = [
        (i, r.event.phase)
        for i, r in enumerate(records)
        if isinstance(r.event, DreamPhase) and r.event.cycle_id == cycle_id
    ]
    plan: list[tuple[DreamPhaseName, list[Recorded]]] = []
    since = 0
    for n, (at, phase) in enumerate(entered):
        # A phase finished when another followed it; the last one, when the cycle woke from it.
        finished = n + 1 < len(entered) or cycle.ended == "complete"
        if not finished:
            break
        first_write = next(
            (i for i in range(at + 1, len(records)) if isinstance(records[i].event, CycleEvent | ModeChanged)),
            len(records),
        )
        host = [r for r in records[since:first_write] if not isinstance(r.event, CycleEvent | ModeChanged)]
        plan.append((phase, host))
        since = first_write
    return plan


_SPEND = (BudgetReserved, GenerationRecorded, GenerationFailed)
_PHASE_CALLS = (*_SPEND, BudgetExhausted, BudgetOverrun)


def _compared(cycle: _Cycle, records: Sequence[Recorded]) -> list[Event]:
    """The cycle's own events, without the generator calls of a phase the interrupt cut short
    (a re-run stops at the interrupt, before that phase)."""
    cycle_id = cycle.start.cycle_id
    events: list[Event] = [r.event for r in records if isinstance(r.event, CycleEvent) and r.event.cycle_id == cycle_id]
    if cycle.interrupted is None:
        return events
    last_entry = max((i for i, e in enumerate(events) if isinstance(e, DreamPhase)), default=0)
    return [e for i, e in enumerate(events) if i <= last_entry or not isinstance(e, _PHASE_CALLS)]


def _as_data(event: Event, legacy: bool) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(event)
    if legacy:
        for name in _LEGACY_FIELDS:
            data.pop(name, None)
    if isinstance(event, DreamStart):
        # The settings are what a re-run or fork is given, not what the cycle made: a fork under
        # other settings diverges where those settings first change an output, not at its start.
        data.pop("settings", None)
    return data


def _compare(recorded: Sequence[Event], rerun: Sequence[Event]) -> Divergence | None:
    phase: DreamPhaseName | None = None
    for index, (old, new) in enumerate(zip(recorded, rerun, strict=False)):
        if isinstance(old, DreamPhase):
            phase = old.phase
        legacy = isinstance(old, GenerationRecorded | GenerationFailed) and not old.request_hash
        a, b = _as_data(old, legacy), _as_data(new, legacy)
        if type(old) is not type(new) or a != b:
            fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            what = (
                f"{type(old).type_name} became {type(new).type_name}"
                if type(old) is not type(new)
                else f"{type(old).type_name} differs in {', '.join(fields)}"
            )
            return Divergence(
                kind="event",
                phase=getattr(old, "phase", None) or phase,
                call_key=getattr(old, "call_key", None),
                index=index,
                reason=what,
                recorded=_clip(str(a)),
                rerun=_clip(str(b)),
            )
    if len(recorded) != len(rerun):
        index = min(len(recorded), len(rerun))
        longer = recorded if len(recorded) > len(rerun) else rerun
        kind: DivergenceKind = "missing_event" if len(recorded) > len(rerun) else "extra_event"
        event = longer[index]
        side = "the recording has" if kind == "missing_event" else "the re-run adds"
        return Divergence(
            kind=kind,
            phase=getattr(event, "phase", None) or phase,
            call_key=getattr(event, "call_key", None),
            index=index,
            reason=f"{side} {type(event).type_name} (and {len(longer) - index - 1} more events) the other lacks",
        )
    return None


def _live_spend(history: Sequence[Recorded], cycle: _Cycle) -> list[Recorded]:
    """What the live golem spent from the recorded cycle on: the cycle's own calls under another
    cycle id (so the fork's cycle and phase caps stay its own), then everything after it."""
    cycle_id = cycle.start.cycle_id
    own = [
        msgspec.structs.replace(r, event=msgspec.structs.replace(r.event, cycle_id=f"{cycle_id}@recorded"))
        for r in cycle.records
        if isinstance(r.event, _SPEND) and r.event.cycle_id == cycle_id
    ]
    return [*own, *history[cycle.start_index + len(cycle.records) :]]


def _placed(divergences: Sequence[Divergence], rerun: Sequence[Event]) -> list[Divergence]:
    """Request divergences with the index of their call's first event in the re-run."""
    first: dict[str, int] = {}
    for index, event in enumerate(rerun):
        key = getattr(event, "call_key", None)
        if isinstance(key, str):
            first.setdefault(key, index)
    return [msgspec.structs.replace(d, index=first.get(d.call_key or "")) for d in divergences]


def rerun_cycle(  # noqa: PLR0913 - optional collaborators keyword-only, each defaulted (replay by default)
    store: EventStore,
    cycle_id: str,
    settings: CycleSettings | None = None,
    *,
    shape_of: Generator | None = None,
    seed: int = 0,
    live: Generator | None = None,
    scratch: EventStore | None = None,
    builds: Builder | None = None,
) -> RerunReport:
    """Re-execute ``cycle_id`` from its starting position in ``scratch`` (a fresh in-memory store
    by default) and compare it with the recording in ``store``, which is only read.

    ``settings`` default to those the cycle recorded when it started. ``shape_of`` is the generator
    ``settings`` name (never called: it says which model and temperature a request goes out with,
    so hashes compare like for like; by default made from ``settings``); ``seed`` is the golem
    service's seed the cycle ran with (engines draw from it), unless the settings record one.
    Without ``live`` no model is called: a call the recording cannot answer fails in the re-run and is reported.
    """
    history, cycle = _find_cycle(store, cycle_id)
    golem_id = cycle.golem_id
    # Without settings of its own, a re-run runs with what the cycle recorded when it started (its
    # DreamStart, v3 on), else the defaults a cycle recorded before then ran with.
    settings = settings or cycle.start.settings or CycleSettings()
    seed = seed if settings.seed is None else settings.seed
    if settings.seed is None and cycle.start.settings is not None:
        # As the executors do: a cycle records the seed it ran with when its settings name none.
        settings = msgspec.structs.replace(settings, seed=seed)
    if shape_of is None:
        shape_of = make_generator(settings.generator, seed=seed, env={})
    target = scratch if scratch is not None else open_store("memory://")
    before = history[: cycle.start_index]
    if before:
        target.append(golem_id, 0, [(r.meta, r.event) for r in before])
    start_time = cycle.records[0].meta.time
    # Every event at the cycle's start time: budget windows and days fall where they fell then.
    clock = FixedClock(start_time, timedelta(0))
    golems = (builds or Plain()).golems(target, deps=Deps(clock=clock, ids=SequentialIds("rerun"), seed=seed))
    first_phase = next(r.event for r in cycle.records if isinstance(r.event, DreamPhase))
    assert isinstance(first_phase, DreamPhase)
    golems.fall_asleep(
        golem_id,
        cycle.start.trigger,
        budget_tokens=first_phase.budget_tokens,
        cycle_id=cycle_id,
        detail=cycle.start.detail,
        bardo_trigger=cycle.start.bardo_trigger,
        settings=settings if cycle.start.settings is not None else None,
    )
    generator = RecordedGenerator(cycle.records, cycle_id, shape_of, live)
    # A fork pays for real calls: its window, day and month caps also hold what the recorded cycle
    # and the live golem's later cycles spent (a plain re-run makes the recorded decisions again).
    elsewhere = _live_spend(history, cycle) if live is not None else []
    divergences: list[Divergence] = []
    phases: list[DreamPhaseName] = []
    for phase, host in _phase_plan(cycle):
        if host:
            target.append(golem_id, golems.state(golem_id).version, [(r.meta, r.event) for r in host])
        phases.append(phase)
        try:
            run_phase(golems, golem_id, cycle_id, phase, generator, settings, spent_elsewhere=elsewhere)
        except OneirosError as exc:
            divergences.append(Divergence(kind="phase_failed", phase=phase, reason=f"{phase} failed: {exc}"))
            break
    if cycle.interrupted is not None and golems.state(golem_id).mode == "Dreaming" and not divergences:
        golems.interrupt(golem_id, cycle.interrupted.source, cycle.interrupted.reason)
    recorded = _compared(cycle, cycle.records)
    rerun = _compared(cycle, golems.history(golem_id)[cycle.start_index :])
    event_divergence = _compare(recorded, rerun)
    divergences += _placed(generator.divergences, rerun)
    if event_divergence is not None:
        divergences.append(event_divergence)
    # In cycle order, as a replayer reports: a request miss at the event of its call, ahead of
    # the event difference it causes there; a failed phase (no event) last.
    divergences.sort(key=lambda d: (d.index if d.index is not None else len(rerun), d.kind != "request"))
    return RerunReport(
        golem_id=golem_id,
        cycle_id=cycle_id,
        identical=not divergences,
        ended=cycle.ended,
        phases=tuple(phases),
        events_compared=max(len(recorded), len(rerun)),
        recorded_calls=generator.recorded_calls,
        model_calls=generator.model_calls,
        divergences=tuple(divergences),
    )


def fork_cycle(  # noqa: PLR0913 - a fork's source, its target and the generator, keyword-only past the cycle
    store: EventStore,
    cycle_id: str,
    settings: CycleSettings,
    *,
    generator: Generator,
    into: EventStore,
    seed: int = 0,
) -> RerunReport:
    """Re-run ``cycle_id`` with other ``settings`` (model, prompts, tier...) in the branch store
    ``into``, which must be empty: a recorded answer is reused wherever the request is unchanged,
    and ``generator`` is called only where it differs. ``store`` is only read, so the live golem's
    log, projections, staging and MEMORY.md cannot change."""
    same = into is store or (into.url == store.url and not into.url.startswith("memory:"))
    if same or into.head() != 0:
        raise InputError(f"the branch store {masked_url(into.url)} must be a new, empty store, not the live one")
    return rerun_cycle(store, cycle_id, settings, shape_of=generator, seed=seed, live=generator, scratch=into)
