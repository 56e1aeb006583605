"""Integration: the night joined to earlier nights by subject (threads, ``_consolidate.py``), every
dream output classified into a staged entry with a validation criterion, themes crystallized into
insights, the journal entry and the dream's self-assessment."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

import msgspec
import numpy as np

from oneiros._text import article, keywords, rank
from oneiros.episodes._fold import columns_of
from oneiros.episodes._vectors import HashingEmbedder, make_embedder
from oneiros.events._content import (
    CreditAssigned,
    DreamFragments,
    DreamJournal,
    DreamJournalEntry,
    DreamQualityAssessed,
    DreamStaged,
    EpisodeDepotentiated,
    EpisodeTriaged,
    HypnagogicPrediction,
    IntegrationSummary,
    NremSummary,
    RemSummary,
    StagedKind,
    StrategyHypothesis,
    ThreatSimulated,
    TriageCounts,
)
from oneiros.events._lineage import OutputsSourced, output_digest
from oneiros.events._types import DreamCounterfactual, DreamHypothesis, DreamInsight, Episode, Event, ReplayBatch
from oneiros.generators._protocol import TaskInputs
from oneiros.generators._results import InsightResult
from oneiros.phases._common import Steps, episode_lines, json_parser
from oneiros.phases._consolidate import thread_night
from oneiros.phases._context import PhaseContext
from oneiros.phases._timeline import timeline_night
from oneiros.settings._cycle import IntegrationSettings

__all__ = ["Candidate", "classify", "integration", "polarity"]

_NEGATION = re.compile(
    r"\b(not|no|never|fails?|failed|without|against|loses?|lost|worse|stop|avoid|don't|doesn't|won't)\b", re.I
)


def polarity(text: str) -> bool:
    """True when ``text`` asserts, False when it negates: what a contradiction flips."""
    return len(_NEGATION.findall(text)) % 2 == 0


class Candidate(msgspec.Struct, frozen=True, kw_only=True):
    """A dream output on its way to the staging buffer."""

    kind: StagedKind
    content: str
    confidence: float
    source: str
    ticks: tuple[int, ...] = ()
    detail: str = ""
    """What the validation criterion watches for beyond the content (a test, a threat kind)."""
    call_key: str = ""
    """The generator call the source output was made from ("" for none)."""


def _sourced(outputs: Sequence[Event], made_here: Mapping[str, str]) -> dict[str, str]:
    """The call behind each output of the cycle, by ``output_digest``: what each phase recorded
    in its ``OutputsSourced``, and what this phase has made so far."""
    found = {s.digest: s.call_key for e in outputs if isinstance(e, OutputsSourced) for s in e.sources}
    return found | dict(made_here)


def _candidates(ctx: PhaseContext, outputs: Sequence[Event], made_here: Mapping[str, str]) -> list[Candidate]:
    sourced = _sourced(outputs, made_here)
    return [
        msgspec.structs.replace(c, call_key=sourced.get(output_digest(event), ""))
        for event, c in _candidates_of(ctx, outputs)
    ]


def _candidates_of(ctx: PhaseContext, outputs: Sequence[Event]) -> list[tuple[Event, Candidate]]:
    """Each output the integration phase stages, with the entry it becomes."""
    settings = ctx.settings
    insight, thread, threat = (
        settings.insight_confidence,
        settings.integration.thread_confidence,
        settings.integration.threat_confidence,
    )
    out: list[tuple[Event, Candidate]] = []
    seeds: dict[str, int] = {}  # each hypothesis's seed episode, for the counterfactual that tests it
    for event in outputs:
        source = type(event).type_name
        match event:
            case ReplayBatch(pattern=pattern, episode_ticks=ticks):
                made = Candidate(kind="novel_insight", content=pattern, confidence=insight, source=source, ticks=ticks)
            case DreamInsight(insight=text, confidence=confidence, source_episode_ticks=ticks):
                made = Candidate(kind="novel_insight", content=text, confidence=confidence, source=source, ticks=ticks)
            case DreamFragments(thread=text, pairs=pairs):
                ticks = tuple(t for pair in pairs for t in pair)
                made = Candidate(kind="novel_insight", content=text, confidence=thread, source=source, ticks=ticks)
            case DreamHypothesis(hypothesis=hypothesis, seed_episode_tick=tick):
                seeds[hypothesis] = tick
                continue
            case DreamCounterfactual(hypothesis=hypothesis, lesson=lesson, outcome=outcome):
                seed = seeds.get(hypothesis)
                made = Candidate(
                    kind="playbook_revision",
                    content=lesson,
                    confidence=threat,
                    source=source,
                    ticks=() if seed is None else (seed,),
                    detail=f"{hypothesis}: {outcome}",
                )
            case StrategyHypothesis(hypothesis=hypothesis, confidence=confidence, seed_episode_ticks=ticks, test=test):
                made = Candidate(
                    kind="strategy_hypothesis",
                    content=hypothesis,
                    confidence=confidence,
                    source=source,
                    ticks=ticks,
                    detail=test,
                )
            case ThreatSimulated(kind=kind, scenario=scenario, response=response, seed_episode_ticks=ticks):
                made = Candidate(
                    kind="threat",
                    content=f"{kind}: {scenario} Response: {response}",
                    confidence=threat,
                    source=source,
                    ticks=ticks,
                    detail=kind,
                )
            case HypnagogicPrediction(fragment=fragment, confidence=confidence):
                # No source episodes: a live episode confirms the fragment by joining the words it joins.
                made = Candidate(kind="creative_prediction", content=fragment, confidence=confidence, source=source)
            case _:
                continue
        out.append((event, made))
    return out


def classify(
    ctx: PhaseContext, candidates: Sequence[Candidate], prior: Sequence[DreamStaged]
) -> list[tuple[Candidate, str | None]]:
    """Each candidate, turned into a confirmed pattern or a flagged contradiction where it matches an
    earlier entry, with that entry's id. Contradictions are flagged, never resolved."""
    settings = ctx.settings.integration
    comparable = [p for p in prior if p.kind in ("novel_insight", "confirmed_pattern", "strategy_hypothesis")]
    if not comparable or not candidates:
        return [(c, None) for c in candidates]
    embedder = make_embedder(ctx.settings.embedder) or HashingEmbedder()
    prior_vectors = embedder.embed([p.content for p in comparable])
    vectors = embedder.embed([c.content for c in candidates])
    similarity = vectors @ prior_vectors.T
    out: list[tuple[Candidate, str | None]] = []
    for index, candidate in enumerate(candidates):
        best = int(np.argmax(similarity[index]))
        score = float(similarity[index, best])
        match = comparable[best]
        kind: StagedKind = candidate.kind
        if candidate.kind in ("novel_insight", "strategy_hypothesis") and score >= settings.contradiction_similarity:
            if polarity(candidate.content) != polarity(match.content):
                kind = "contradiction"
            elif candidate.kind == "novel_insight" and score >= settings.match_similarity:
                kind = "confirmed_pattern"
        if kind == candidate.kind:
            out.append((candidate, None))
        else:
            out.append((msgspec.structs.replace(candidate, kind=kind), match.entry_id))
    return out


def _kept(
    classified: list[tuple[Candidate, str | None]], settings: IntegrationSettings
) -> list[tuple[Candidate, str | None]]:
    """What ``max_staged`` keeps: the kinds ``staged_first`` names first, then in the cycle's order."""
    limit = settings.max_staged
    if limit is None or len(classified) <= limit:
        return classified
    order = {kind: rank for rank, kind in enumerate(settings.staged_first)}
    chosen = sorted(range(len(classified)), key=lambda i: (order.get(classified[i][0].kind, len(order)), i))[:limit]
    return [classified[i] for i in sorted(chosen)]


def _where(episodes: Sequence[Episode]) -> str:
    """The live episodes a criterion watches for, named as the staging buffer matches them: the
    sources' most shared tags, in their regime when they all share one."""
    tags = rank((t.lower() for e in episodes for t in e.tags), 3)
    regimes = {e.regime for e in episodes} - {"unknown"}
    regime = f"{regimes.pop()} " if len(regimes) == 1 else ""
    return f"a live {regime}episode" + (f" tagged {', '.join(tags)}" if tags else "")


def _criterion(candidate: Candidate, by_tick: Mapping[int, Episode], related: str | None) -> str:
    """What would confirm or refute the entry, in whole sentences: the entry's own text is shown
    beside it, so the criterion names the evidence instead of repeating (or cutting) the text."""
    where = _where([by_tick[t] for t in candidate.ticks if t in by_tick])
    detail = candidate.detail.strip().rstrip(".")
    joined = sorted(keywords(candidate.content, 2))
    test = f"passes this test: {detail[:1].lower()}{detail[1:]}" if detail else "bears the strategy out"
    by_kind: dict[str, str] = {
        "contradiction": (
            f"Review against entry {related}: both cannot hold; "
            "decide by live outcomes or an explicit review, never automatically."
        ),
        "threat": (
            f"Confirm when {where} shows the early signs of {article(detail)} {detail} "
            "and the rehearsed response limits the harm."
        ),
        "strategy_hypothesis": f"Confirm when {where} {test}; refute when it fails.",
        "playbook_revision": f"Apply only after {where} shows that following this lesson beats the current heuristic.",
        "creative_prediction": (
            f"Confirm when a live episode brings {joined[0]} and {joined[-1]} together, as this image does."
            if len(joined) == 2 and not candidate.ticks
            else f"Confirm when {where} echoes this image."
        ),
    }
    default = f"Confirm when {where} repeats this pattern; refute when such an episode goes the other way."
    return by_kind.get(candidate.kind, default)


def _themes(steps: Steps) -> list[Event]:
    """Tags that recur across two or more forward replay batches become insights."""
    ctx = steps.ctx
    by_tick = columns_of(ctx.episodes).by_tick()
    seen_in: Counter[str] = Counter()
    ticks_for: dict[str, set[int]] = {}
    for batch in (o for o in ctx.cycle_outputs if isinstance(o, ReplayBatch) and o.direction == "forward"):
        for tag in sorted({tag for t in batch.episode_ticks if t in by_tick for tag in by_tick[t].tags}):
            seen_in[tag] += 1
            ticks_for.setdefault(tag, set()).update(
                t for t in batch.episode_ticks if t in by_tick and tag in by_tick[t].tags
            )
    settings = ctx.settings.integration
    parse = json_parser("insight", InsightResult)
    out: list[Event] = []
    for tag, count in sorted(seen_in.items(), key=lambda kv: (-kv[1], kv[0]))[: settings.max_theme_insights]:
        if count < 2 or steps.stopped:
            break
        ticks = tuple(sorted(ticks_for[tag]))
        result = steps.ask(
            f"theme:{tag}",
            "insight",
            parse,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            given=TaskInputs(episodes=tuple(by_tick[t] for t in ticks), tag=tag),
            episodes=episode_lines([by_tick[t] for t in ticks]),
        )
        if result is not None:
            out.append(
                steps.made(
                    DreamInsight(
                        cycle_id=ctx.cycle_id,
                        insight=f"[{tag}] {result.insight}",
                        source_episode_ticks=ticks,
                        confidence=ctx.settings.insight_confidence,
                    )
                )
            )
    return out


def integration(ctx: PhaseContext) -> list[Event]:
    steps = Steps(ctx)
    # Timelines first: a night of long turns leaves little of the phase's budget after threads.
    outputs: list[Event] = timeline_night(steps, ctx.night_episodes())
    outputs.extend(_themes(steps))
    outputs.extend(thread_night(steps, ctx.night_episodes()))
    prior = [e for e in ctx.prior_outputs if isinstance(e, DreamStaged)]
    by_tick = columns_of(ctx.episodes).by_tick()
    staged: list[DreamStaged] = []
    classified = classify(ctx, _candidates(ctx, [*ctx.cycle_outputs, *outputs], steps.sources()), prior)
    for index, (candidate, related) in enumerate(_kept(classified, ctx.settings.integration)):
        entry = DreamStaged(
            cycle_id=ctx.cycle_id,
            entry_id=f"{ctx.cycle_id}:{index + 1:03d}",
            kind=candidate.kind,
            content=candidate.content,
            confidence=candidate.confidence,
            validation_criterion=_criterion(candidate, by_tick, related),
            source=candidate.source,
            source_episode_ticks=candidate.ticks,
            related_entry=related,
            status="flagged" if candidate.kind == "contradiction" else "staged",
            call_key=candidate.call_key,
        )
        staged.append(entry)
        # A novel insight from replay or the dream thread crystallizes here; theme insights already did.
        if entry.kind == "novel_insight" and candidate.source != DreamInsight.type_name:
            outputs.append(
                DreamInsight(
                    cycle_id=ctx.cycle_id,
                    insight=entry.content,
                    source_episode_ticks=entry.source_episode_ticks,
                    confidence=entry.confidence,
                )
            )
    outputs.extend(staged)
    quality = _quality(ctx, staged)
    outputs.append(quality)
    outputs.append(DreamJournalEntry(cycle_id=ctx.cycle_id, journal=_journal(ctx, staged, quality.score)))
    return outputs + steps.closing()


def _journal(ctx: PhaseContext, staged: Sequence[DreamStaged], quality: float) -> DreamJournal:
    outputs = ctx.cycle_outputs
    triage = Counter(e.decision for e in outputs if isinstance(e, EpisodeTriaged))
    replayed = {t for e in outputs if isinstance(e, ReplayBatch) for t in e.episode_ticks}
    tokens, cost = ctx.spent()

    def ids(*kinds: str) -> tuple[str, ...]:
        return tuple(s.entry_id for s in staged if s.kind in kinds)

    return DreamJournal(
        phase1_summary=NremSummary(
            episodes_replayed=len(replayed),
            patterns_found=tuple(e.pattern for e in outputs if isinstance(e, ReplayBatch) and e.direction == "forward"),
            triage_decisions=TriageCounts(
                preserve=triage["preserve"], abstract=triage["abstract"], forget=triage["forget"]
            ),
            credit_assignments=sum(isinstance(e, CreditAssigned) for e in outputs),
        ),
        phase2_summary=RemSummary(
            counterfactuals_generated=sum(isinstance(e, DreamCounterfactual) for e in outputs),
            creative_hypotheses=tuple(e.hypothesis for e in outputs if isinstance(e, StrategyHypothesis)),
            threats_simulated=tuple(f"{e.kind}: {e.scenario}" for e in outputs if isinstance(e, ThreatSimulated)),
            emotional_episodes_processed=sum(isinstance(e, EpisodeDepotentiated) for e in outputs),
        ),
        phase3_summary=IntegrationSummary(
            grimoire_updates=ids("novel_insight", "confirmed_pattern"),
            playbook_revisions_staged=ids("playbook_revision"),
            contradictions_flagged=ids("contradiction"),
        ),
        total_cost_usd=round(cost, 8),
        tokens_spent=tokens,
        dream_duration_ticks=ctx.cycle_versions,
        dream_quality_score=quality,
    )


def _quality(ctx: PhaseContext, staged: Sequence[DreamStaged]) -> DreamQualityAssessed:
    """Did replay reveal anything new, were the hypotheses far from their seeds, were the threats
    grounded in real losses or charged episodes? Each part in [0, 1]; the score is their mean
    over the parts that had something to judge."""
    by_tick = columns_of(ctx.episodes).by_tick()
    patterns = [s for s in staged if s.source == ReplayBatch.type_name]
    novel = sum(s.kind == "novel_insight" for s in patterns)
    replay_novelty = novel / len(patterns) if patterns else 0.0
    hypotheses = [e for e in ctx.cycle_outputs if isinstance(e, StrategyHypothesis)]
    creative = 0.0
    if hypotheses:
        embedder = HashingEmbedder()
        texts = [h.hypothesis for h in hypotheses]
        seeds = [
            " ".join(by_tick[t].said() for t in h.seed_episode_ticks if t in by_tick) or h.hypothesis
            for h in hypotheses
        ]
        a, b = embedder.embed(texts), embedder.embed(seeds)
        creative = float(np.clip(1.0 - np.mean(np.sum(a * b, axis=1)), 0.0, 1.0))
    threats = [e for e in ctx.cycle_outputs if isinstance(e, ThreatSimulated)]
    grounded = [
        any(t in by_tick and (by_tick[t].outcome.pnl < 0 or by_tick[t].arousal >= 0.5) for t in e.seed_episode_ticks)
        for e in threats
    ]
    plausibility = sum(grounded) / len(grounded) if grounded else 0.0
    parts = [
        v for v, present in ((replay_novelty, patterns), (creative, hypotheses), (plausibility, threats)) if present
    ]
    score = sum(parts) / len(parts) if parts else 0.0
    return DreamQualityAssessed(
        cycle_id=ctx.cycle_id,
        score=round(score, 6),
        replay_novelty=round(replay_novelty, 6),
        creative_novelty=round(creative, 6),
        threat_plausibility=round(plausibility, 6),
        notes=f"{novel} of {len(patterns)} replay patterns new; {len(hypotheses)} hypotheses; {len(threats)} threats",
    )
