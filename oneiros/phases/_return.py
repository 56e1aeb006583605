"""Hypnopompic return: the typed DreamReport (Bardo) and a wake-up summary the agent reads
on its next turn (OpenSeed's wake-up message, Bumblebee's [dream] fragments)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Final

from oneiros.events._content import (
    BudgetExhausted,
    DreamFragments,
    DreamJournal,
    DreamJournalEntry,
    DreamReport,
    DreamStaged,
    DreamSuppressed,
    EpisodeTriaged,
    IntegrationSummary,
    NremSummary,
    RemSummary,
    StepFailed,
    StrategyHypothesis,
    ThreatSimulated,
    WakeUpSummary,
)
from oneiros.events._observations import DreamObservation, Priority
from oneiros.events._types import DreamInsight, Event
from oneiros.phases._context import PhaseContext

__all__ = ["OBSERVATION_PRIORITY", "Priority", "dream_report", "hypnopompic_return", "openseed_wake_up", "wake_up_text"]

# OpenSeed: RED critical (threats, contradictions), YLW important (patterns learned, playbook
# revisions), GRN informational (everything else). The observations sink files staged entries the same way.
OBSERVATION_PRIORITY: Final[dict[str, Priority]] = {
    "threat": "RED",
    "contradiction": "RED",
    "novel_insight": "YLW",
    "confirmed_pattern": "YLW",
    "playbook_revision": "YLW",
}
_RANK: Final[dict[Priority, int]] = {"RED": 0, "YLW": 1, "GRN": 2}
# What the golem should act on first on waking: a threat or contradiction, then a lesson, then a
# strategy to test, then an insight; dream images and creative predictions are not priorities.
_ACTIONABLE: Final = ("threat", "contradiction", "playbook_revision", "strategy_hypothesis", "novel_insight")


def dream_report(cycle_id: str, outputs: Sequence[Event]) -> DreamReport:
    """The report of a cycle from its outputs; a cycle that never reached integration reports an
    empty journal."""
    journals = [e.journal for e in outputs if isinstance(e, DreamJournalEntry)]
    journal = (
        journals[-1]
        if journals
        else DreamJournal(
            phase1_summary=NremSummary(), phase2_summary=RemSummary(), phase3_summary=IntegrationSummary()
        )
    )
    staged = [e for e in outputs if isinstance(e, DreamStaged)]
    forgotten = {e.episode_tick: e.decision for e in outputs if isinstance(e, EpisodeTriaged)}
    return DreamReport(
        cycle_id=cycle_id,
        journal=journal,
        staging_writes=tuple(s.entry_id for s in staged),
        grimoire_updates=journal.phase3_summary.grimoire_updates,
        insights=tuple(e.insight for e in outputs if isinstance(e, DreamInsight)),
        hypotheses=tuple(e.hypothesis for e in outputs if isinstance(e, StrategyHypothesis)),
        threats=tuple(f"{e.kind}: {e.scenario}" for e in outputs if isinstance(e, ThreatSimulated)),
        deletions=tuple(sorted(t for t, d in forgotten.items() if d == "forget")),
        playbook_delta=tuple(s.content for s in staged if s.kind == "playbook_revision"),
        total_cost_usd=journal.total_cost_usd,
        duration_ticks=journal.dream_duration_ticks,
    )


def wake_up_text(report: DreamReport, outputs: Sequence[Event]) -> tuple[str, tuple[str, ...]]:
    """A few plain sentences and the highlights: what the agent should know it dreamed."""
    j = report.journal
    triage = j.phase1_summary.triage_decisions
    lines = [
        f"While dreaming I replayed {j.phase1_summary.episodes_replayed} episodes "
        f"(preserve {triage.preserve}, abstract {triage.abstract}, forget {triage.forget}) "
        f"and imagined {j.phase2_summary.counterfactuals_generated} counterfactuals.",
        f"{len(report.staging_writes)} outputs wait in staging as hypotheses, not facts; "
        f"{len(j.phase3_summary.contradictions_flagged)} contradictions are flagged for review.",
    ]
    observed = sum(isinstance(e, DreamObservation) for e in outputs)
    if observed:
        lines.append(f"{observed} observations restate what the episodes said, each naming its episodes.")
    suppressed = [e for e in outputs if isinstance(e, DreamSuppressed)]
    if suppressed:
        lines.append(
            f"The dream was suppressed: credit at {suppressed[0].credit_fraction:.0%}, "
            f"under the {suppressed[0].floor:.0%} floor."
        )
    for e in outputs:
        if isinstance(e, BudgetExhausted):
            lines.append(f"The {e.phase} phase ended early: its {e.cap} budget was spent.")
    failed = sum(isinstance(e, StepFailed) for e in outputs)
    if failed:
        lines.append(f"{failed} steps gave malformed output and were dropped.")
    highlights: list[str] = []
    for e in outputs:
        if isinstance(e, DreamFragments):
            highlights.extend(f"[dream] {f}" for f in e.fragments[:2])
            highlights.append(f"thread: {e.thread}")
    highlights.extend(f"insight: {i}" for i in report.insights[:3])
    highlights.extend(f"threat: {t}" for t in report.threats[:2])
    return " ".join(lines), tuple(highlights)


def openseed_wake_up(ctx: PhaseContext, reflection: str) -> str:
    """OpenSeed's wake-up message, in its shape: when and how long the golem slept, what it
    reflected, its priority, its recent observations with their levels, where its history is."""
    settings = ctx.settings.wake_up
    lines: list[str] = []
    if ctx.now is not None:
        slept = f" after sleeping {int((ctx.now - ctx.started_at).total_seconds())}s" if ctx.started_at else ""
        lines += [f"You woke up at {ctx.now.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}{slept}.", ""]
    lines += ["During sleep you reflected:", reflection, ""]
    staged = [e for e in ctx.cycle_outputs if isinstance(e, DreamStaged)]
    actionable = [e for e in staged if e.kind in _ACTIONABLE]
    if actionable:
        first = min(enumerate(actionable), key=lambda p: (_ACTIONABLE.index(p[1].kind), -p[1].confidence, p[0]))
        lines += [f"Your priority: {first[1].content}", ""]
    clock = f"{ctx.now.astimezone(UTC):%H:%M}" if ctx.now is not None else "--:--"
    # OpenSeed's observations are facts: the night's, most important first; a cycle that made none
    # (consolidation off) lists its staged entries with the levels of their kinds, as before.
    facts = [(e.priority, e.text) for e in ctx.cycle_outputs if isinstance(e, DreamObservation)]
    levelled = facts or [(OBSERVATION_PRIORITY.get(e.kind, "GRN"), e.content) for e in staged]
    ranked = sorted(enumerate(levelled), key=lambda p: (_RANK[p[1][0]], p[0]))
    observed = [f"{level} {clock} {text}" for _, (level, text) in ranked]
    if observed:
        lines += ["Recent observations:", *observed[: settings.observations]]
        if len(observed) > settings.observations:
            lines.append("...")
        lines.append("")
    lines += settings.history_note.splitlines()
    return "\n".join(lines)


def hypnopompic_return(ctx: PhaseContext) -> list[Event]:
    report = dream_report(ctx.cycle_id, ctx.cycle_outputs)
    text, highlights = wake_up_text(report, ctx.cycle_outputs)
    if ctx.settings.wake_up.style == "openseed":
        text = openseed_wake_up(ctx, text)
    return [report, WakeUpSummary(cycle_id=ctx.cycle_id, text=text, highlights=highlights)]
