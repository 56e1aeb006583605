"""The sleep-delta evaluation (issue 29): each conversation lived by a golem session by session,
with and without dreaming, then every question asked through recall.

Three arms, each a store of its own (``<directory>/<arm>.db``), each conversation a golem of its own:

* ``none``: the sessions are recorded in order; no dream;
* ``dream``: after each session, the time until the next one (a day after the last) is walked
  every ``step`` on the injected clock, and one cycle runs at the first moment the configured
  schedule (``should_dream``) allows, with the configured generator (offline unless told otherwise);
* ``reference``: after each session, one cycle whose outputs are the conversation's own
  observations of that session (LoCoMo's), recorded as ``DreamObservation`` outputs, so they are
  indexed and ranked as a dream's would be.

Then the staging sweep and the projections are brought to the head and each question is asked as
the REST route and the MCP tool ask it (:func:`~oneiros.projections.recall_golem`, limit the largest
k), and scored by evidence recall@k over the merged ranking. Rerun from the kept stores
(``rescore``), the figures are the same, read from the log with no generator at all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import msgspec

from oneiros._deps import Deps, FixedClock, SequentialIds
from oneiros.config._load import OneirosConfig
from oneiros.events._content import DreamStaged
from oneiros.events._observations import DreamObservation
from oneiros.events._types import DreamComplete, Event, GenerationRecorded
from oneiros.fsm._service import Golems
from oneiros.generators._protocol import Generator
from oneiros.lab._answer import AnswerReport, AnswerSettings, Reader, answers_path
from oneiros.lab._budget_recall import BudgetScores
from oneiros.lab._evidence import Conversation, Question, Session, evidence_recall
from oneiros.lab._quality import TextQuality, text_quality
from oneiros.projections._recall import RecallItem, RecallSettings, recall_golem
from oneiros.projections._service import Projections
from oneiros.runtime._builds import Builder, Plain
from oneiros.runtime._executor import InProcessExecutor
from oneiros.scheduling._schedule_state import ScheduleState
from oneiros.scheduling._scheduler import should_dream
from oneiros.store._store import EventStore, open_store
from oneiros.validation._sweep import StagingProcess

__all__ = ["ARMS", "ArmReport", "EvalSettings", "Progress", "arm_store_url", "build_arm", "evaluate", "score_arm"]

Arm = Literal["none", "dream", "reference"]
ARMS: tuple[Arm, ...] = ("none", "dream", "reference")
OVERALL = "overall"
# What the progress listener hears: the arm, what is happening, done so far, out of.
Progress = Callable[[str, str, int, int], None]


class EvalSettings(msgspec.Struct, frozen=True, kw_only=True):
    ks: tuple[int, ...] = (5, 10)
    step: timedelta = timedelta(minutes=15)
    """How often the schedule is asked while the dream arm's golem waits between sessions."""
    last_night: timedelta = timedelta(days=1)
    """The time after the last session before the questions are asked."""
    recall: RecallSettings = RecallSettings()
    answer: AnswerSettings | None = None
    """The answer step's settings; None: no answers (the default: it needs a model)."""
    budgets: tuple[int, ...] = ()
    """Context budgets in tokens at which evidence recall is scored too (docs/evaluation.md)."""
    tokenizer: str | None = None
    """How a budget's tokens are counted: None for characters / 4, or ``tiktoken:<encoding>``."""
    budget_depth: int = 50
    """How deep the ranking a budget takes its prefix from is (recall's limit for it)."""


class ArmReport(msgspec.Struct, kw_only=True):
    """One arm's figures: evidence recall per category and overall at each k, what dreaming made
    and cost, and how long building the arm took."""

    recall: dict[int, dict[str, float]]
    tokens: int = 0
    usd: float = 0.0
    outputs: int = 0
    cycles: int = 0
    seconds: float = 0.0
    generator_calls: int = 0
    """Generator calls this run made (0 when the figures were read from a kept log)."""
    source_turns: dict[int, float] = {}
    """Mean turns an item of the first k stands for: an item standing for many turns covers more."""
    questions: dict[str, int] = {}
    answer: AnswerReport | None = None
    """Token F1 of answers read from the first items, and what answering cost (apart from dreaming)."""
    budget_recall: dict[int, dict[str, float]] = {}
    """Evidence recall per category and overall of the ranking's prefix that fits each budget."""
    budget_items: dict[int, float] = {}
    """The mean number of items that fit each budget."""
    updates: int = 0
    """Knowledge-update questions whose current and outdated turns are told apart."""
    current_first: float | None = None
    """The share of those where the current fact's turn ranks above the outdated one's."""
    quality: TextQuality = TextQuality()
    """The shares of the arm's dream outputs cut, with markup, or ungrammatical."""


def arm_store_url(directory: Path, arm: str) -> str:
    return f"sqlite:///{directory.resolve() / f'{arm}.db'}"


def _reference_night(golems: Golems, golem: str, session: Session, config: OneirosConfig) -> None:
    """One cycle whose outputs are the session's own observations, each naming its turns' ticks."""
    ticks = {e.ref: e.tick for e in session.episodes if e.ref}
    cycle = golems.fall_asleep(golem, "owner", budget_tokens=0, detail="reference observations", settings=config.cycle)
    outputs: list[Event] = [
        DreamObservation(
            cycle_id=cycle,
            text=text,
            subject=speaker[:128] or None,
            source_episode_ticks=tuple(ticks[r] for r in refs if r in ticks),
        )
        for speaker, text, refs in session.observations
        if text.strip()
    ]
    # From the first phase to the one that closes the cycle's work (the phase table's last but
    # one); complete() then records the outputs and moves to the phase it wakes from.
    for _phase in golems.phases.names[1:-1]:
        golems.advance(golem, budget_tokens=0)
    golems.complete(golem, budget_tokens=0, outputs=outputs)
    golems.wake(golem)


class _Night:
    """Where the dream arm's golem waits, what decides when it dreams, and its schedule state as far
    as the log has been read (folded on, never from the start again)."""

    def __init__(
        self, store: EventStore, golem: str, clock: FixedClock, config: OneirosConfig, step: timedelta
    ) -> None:
        self.store, self.golem, self.clock, self.config, self.step = store, golem, clock, config, step
        self.state = ScheduleState(golem_id=golem)

    def caught_up(self) -> ScheduleState:
        for record in self.store.read_stream(self.golem, after_version=self.state.version):
            self.state.apply(record)
        return self.state


def _dream_night(executor: InProcessExecutor, night: _Night, end: datetime) -> int:
    """Walk the clock towards ``end`` a step at a time and run one cycle at the first moment the
    schedule allows (a night is one cycle: a golem with nothing new since would dream again every
    night of a long gap); how many ran, 0 or 1."""
    clock, step = night.clock, night.step
    state = night.caught_up()
    now = clock()
    while now < end:
        decision = should_dream(night.config.schedule, state, now, tick_seconds=step.total_seconds())
        if decision.dream:
            executor.run_cycle(night.golem)
            return 1
        state.carried_urgency = decision.carried_urgency
        clock.advance(step)
        now = clock()
    return 0


def build_arm(  # noqa: PLR0913 - the eval's phases share one call shape; the lab is being recomposed (issue 35)
    arm: Arm,
    conversations: Sequence[Conversation],
    directory: Path,
    config: OneirosConfig,
    settings: EvalSettings,
    *,
    generator: Generator | None = None,
    progress: Progress | None = None,
    builds: Builder | None = None,
) -> tuple[int, float]:
    """Record every conversation into the arm's store, dreaming as the arm says; (cycles, seconds).
    Golems and executors come from ``builds`` (the application's factory; this layer's default if None)."""
    builds = builds or Plain()
    started = time.perf_counter()
    cycles = 0
    sessions_total = sum(len(c.sessions) for c in conversations)
    done = 0
    with open_store(arm_store_url(directory, arm)) as store:
        for conversation in conversations:
            if not conversation.sessions:
                continue  # nothing was said: its questions were left out when it was read
            first = conversation.sessions[0].when
            clock = FixedClock(first if first.tzinfo else first.replace(tzinfo=UTC), timedelta(milliseconds=1))
            # Ids in sequence, not random: cycle ids seed the dream's draws and ids break ties in
            # recall's ranking, so a fresh run gives the same figures as the last one.
            ids = SequentialIds(conversation.name)
            golems = builds.golems(store, deps=Deps(clock=clock, ids=ids, seed=config.cycle.seed or 0))
            golems.create(conversation.name)
            executor = builds.in_process(golems, generator, config.cycle) if arm == "dream" else None
            night = _Night(store, conversation.name, clock, config, settings.step)
            for n, session in enumerate(conversation.sessions):
                _move_to(clock, session.when)
                golems.record_episodes(conversation.name, session.episodes)
                _move_to(clock, session.ends + timedelta(minutes=1))
                following = conversation.sessions[n + 1] if n + 1 < len(conversation.sessions) else None
                if arm == "reference" and session.observations:
                    _reference_night(golems, conversation.name, session, config)
                    cycles += 1
                elif executor is not None:
                    end = following.when if following is not None else clock() + settings.last_night
                    cycles += _dream_night(executor, night, end)
                done += 1
                if progress is not None:
                    progress(arm, f"recording {conversation.name}", done, sessions_total)
    return cycles, time.perf_counter() - started


def _move_to(clock: FixedClock, when: datetime) -> None:
    now = clock()
    target = when if when.tzinfo else when.replace(tzinfo=UTC)
    if target > now:
        clock.advance(target - now)


def score_arm(  # noqa: PLR0913 - the eval's phases share one call shape; the lab is being recomposed (issue 35)
    arm: Arm,
    conversations: Sequence[Conversation],
    directory: Path,
    config: OneirosConfig,
    settings: EvalSettings,
    *,
    progress: Progress | None = None,
    rebuild: bool = False,
    reader: Generator | None = None,
) -> ArmReport:
    """Bring the arm's sweep and projections to the head (rebuilt from the log if ``rebuild``), ask
    every question, and score it; with ``reader`` and ``settings.answer``, answer each question from
    its first items too."""
    k = max(settings.ks)
    sums: dict[int, dict[str, float]] = {kk: {} for kk in settings.ks}
    counts: dict[str, int] = {}
    turns: dict[int, list[int]] = {kk: [] for kk in settings.ks}
    budgets = BudgetScores(settings.budgets, settings.tokenizer)
    answering = reader is not None and settings.answer is not None
    asked_items: list[tuple[str, Question, list[RecallItem]]] = []
    with open_store(arm_store_url(directory, arm)) as store, Projections(store) as projections:
        if rebuild:
            projections.rebuild("recall")
        StagingProcess(store, config.staging, runner=projections.settings.runner).catch_up()
        projections.update()
        total = sum(len(c.questions) for c in conversations)
        asked = 0
        for conversation in conversations:
            for question in conversation.questions:
                ranked = recall_golem(
                    projections.db, conversation.name, question.question, k, settings=settings.recall
                ).ranking()
                for kk in settings.ks:
                    got = evidence_recall(question.evidence, ranked, kk)
                    for key in (question.category, OVERALL):
                        sums[kk][key] = sums[kk].get(key, 0.0) + got
                    turns[kk] += [len(i.source_refs) for i in ranked[:kk]]
                if budgets.wanted(question):
                    depth = settings.budget_depth
                    deeper = recall_golem(
                        projections.db, conversation.name, question.question, depth, settings=settings.recall
                    )
                    budgets.score(question, deeper.ranking(), (question.category, OVERALL))
                if answering:
                    asked_items.append((f"answer:{conversation.name}:{asked}", question, ranked))
                for key in (question.category, OVERALL):
                    counts[key] = counts.get(key, 0) + 1
                asked += 1
                if progress is not None and (asked % 25 == 0 or asked == total):
                    progress(arm, "asking", asked, total)
        report = ArmReport(
            recall={kk: {key: round(v / counts[key], 4) for key, v in by.items()} for kk, by in sums.items()},
            source_turns={kk: round(sum(t) / len(t), 3) if t else 0.0 for kk, t in turns.items()},
            questions=counts,
        )
        figures = budgets.figures(counts)
        report.budget_recall, report.budget_items = figures.recall, figures.items
        report.updates, report.current_first = figures.updates, figures.current_first
        report.quality = text_quality(store, conversations)
        _spend(store, conversations, report)
    if reader is not None and settings.answer is not None:
        if progress is not None:
            progress(arm, "answering", 0, len(asked_items))
        kept = answers_path(directory, arm)
        report.answer = Reader(reader, config.cycle.budget, kept, settings.answer).score(asked_items)
        if progress is not None:
            progress(arm, "answering", len(asked_items), len(asked_items))
    return report


def _spend(store: EventStore, conversations: Sequence[Conversation], report: ArmReport) -> None:
    """Tokens, dollars, cycles and outputs, read from each golem's log."""
    types = (DreamComplete, GenerationRecorded, DreamObservation, DreamStaged)
    for conversation in conversations:
        for record in store.read_stream(conversation.name, types=types):
            match record.event:
                case DreamComplete():
                    report.cycles += 1
                case GenerationRecorded(tokens_in=tokens_in, tokens_out=tokens_out, cost_usd=usd):
                    report.tokens += tokens_in + tokens_out
                    report.usd += usd
                case DreamObservation() | DreamStaged():
                    report.outputs += 1
    report.usd = round(report.usd, 6)


def evaluate(  # noqa: PLR0913 - the eval's public entry: optional collaborators keyword-only, each defaulted
    conversations: Sequence[Conversation],
    directory: Path,
    config: OneirosConfig,
    settings: EvalSettings,
    arms: Sequence[Arm] = ARMS,
    *,
    generator: Generator | None = None,
    rescore: bool = False,
    progress: Progress | None = None,
    reader: Generator | None = None,
    builds: Builder | None = None,
) -> dict[str, ArmReport]:
    """Each arm built in ``directory`` and scored; with ``rescore``, read from the stores a run
    before kept there (the recall index rebuilt from each log, no generator made or called)."""
    from oneiros._errors import InputError  # noqa: PLC0415 - only for a directory that will not do

    reports: dict[str, ArmReport] = {}
    for arm in arms:
        path = directory / f"{arm}.db"
        if rescore and not path.exists():
            raise InputError(f"no {arm} arm in {directory}: expected {path} from an earlier run's --keep")
        if not rescore and path.exists():
            raise InputError(f"{path} exists already: keep each run in a new directory, or score it with --from")
        started = time.perf_counter()
        if not rescore:
            build_arm(
                arm, conversations, directory, config, settings, generator=generator, progress=progress, builds=builds
            )
        report = score_arm(
            arm, conversations, directory, config, settings, progress=progress, rebuild=rescore, reader=reader
        )
        report.seconds = round(time.perf_counter() - started, 2)
        if not rescore:
            report.generator_calls = _calls(directory, arm, conversations)
        reports[arm] = report
    return reports


def _calls(directory: Path, arm: str, conversations: Sequence[Conversation]) -> int:
    with open_store(arm_store_url(directory, arm)) as store:
        return sum(len(store.read_stream(c.name, types=(GenerationRecorded,))) for c in conversations)
