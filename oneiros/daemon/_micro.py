"""Bardo's micro-consolidation fiber: between full dreams, every 60 s of waking, the newest
episodes are held against the most retrieved insights.

* an episode that matches an insight's pattern (cosine > 0.8) strengthens it (+0.1);
* one that looks like the pattern (> 0.7) but whose outcome went the other way is tagged
  ``dream_priority: high`` for the next full dream;
* a pass that leaves tagged episodes waiting for a dream adds 0.02 to dream urgency.

Each effect is an event (:class:`InsightStrengthened`, :class:`EpisodePrioritized`,
:class:`MicroConsolidated`); a pass with no effect writes nothing. The fiber never stages,
reviews or promotes anything: like Bardo's, it never writes the playbook.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

from oneiros.episodes._stored import StoredEpisodes
from oneiros.episodes._vectors import Embedder, HashingEmbedder, episode_text, make_embedder
from oneiros.events._content import DreamStaged
from oneiros.events._micro import EpisodePrioritized, InsightStrengthened, MicroConsolidated
from oneiros.events._types import DreamStart, Episode, EpisodeRecorded, Event
from oneiros.settings._scheduling import MicroConsolidationSettings
from oneiros.store._store import Recorded

__all__ = ["INSIGHT_KINDS", "MicroState", "micro_pass"]

INSIGHT_KINDS = frozenset({"novel_insight", "confirmed_pattern"})
"""Staged kinds that are insights (Bardo's Grimoire insights and confirmed patterns)."""


def _sign(pnl: float) -> int:
    return 0 if pnl == 0 else (1 if pnl > 0 else -1)


class MicroState:
    """What the fiber knows of one golem: its episodes, its staged insights with their retrievals
    and strength, the (episode, insight) pairs already acted on, and the episodes tagged since the
    last dream began. A fold of the golem's stream, like every other state.

    Episodes are kept as their JSON (``stored``): a pass reads only the newest few and the
    insights' sources, and a golem of a million episodes would otherwise hold a million objects."""

    def __init__(self) -> None:
        self.stored: dict[int, bytes] = {}
        self.episodes = StoredEpisodes(self.stored)
        self.insights: dict[str, DreamStaged] = {}
        self.staged_at: dict[str, int] = {}
        self.retrievals: Counter[str] = Counter()
        self.strength: dict[str, float] = {}
        self.handled: set[tuple[int, str]] = set()
        self.pending: set[int] = set()

    @classmethod
    def from_records(cls, records: Iterable[Recorded]) -> MicroState:
        state = cls()
        for record in records:
            state.apply(record)
        return state

    def apply(self, record: Recorded) -> None:
        match record.event:
            case EpisodeRecorded(episode=episode):
                self.stored[episode.tick] = StoredEpisodes.encode(episode)
            case DreamStaged(kind=kind, entry_id=entry_id) as staged if kind in INSIGHT_KINDS:
                self.insights[entry_id] = staged
                self.staged_at[entry_id] = record.position
            case InsightStrengthened(entry_id=entry_id, episode_tick=tick, strength=strength):
                self.retrievals[entry_id] += 1
                self.strength[entry_id] = strength
                self.handled.add((tick, entry_id))
            case EpisodePrioritized(entry_id=entry_id, episode_tick=tick):
                self.retrievals[entry_id] += 1
                self.handled.add((tick, entry_id))
                self.pending.add(tick)
            case DreamStart():
                self.pending.clear()

    def top_insights(self, count: int) -> list[DreamStaged]:
        """The ``count`` insights retrieved most often, the newest first among equals."""
        ranked = sorted(self.insights, key=lambda i: (-self.retrievals[i], -self.staged_at[i]))
        return [self.insights[i] for i in ranked[:count]]


def embedder_for(name: str) -> Embedder:
    """The cycle's embedder, or the built-in one when the cycle uses none (random fallback)."""
    return make_embedder(name) or HashingEmbedder()


def micro_pass(state: MicroState, settings: MicroConsolidationSettings, embedder: Embedder) -> list[Event]:
    """One pass of the fiber over ``state``: the events it decides, not yet recorded."""
    episodes = state.episodes
    recent = [episodes[t] for t in sorted(heapq.nlargest(settings.recent_episodes, episodes))]
    insights = state.top_insights(settings.top_insights)
    out: list[Event] = []
    tagged: set[int] = set()
    strengthened = 0
    if recent and insights:
        sources = {t: episodes[t] for i in insights for t in i.source_episode_ticks if t in episodes}
        texts = [episode_text(e) for e in recent]
        source_ticks = sorted(sources)
        texts += [episode_text(sources[t]) for t in source_ticks]
        texts += [i.content for i in insights]
        vectors = embedder.embed(texts)
        recent_v = vectors[: len(recent)]
        source_v = dict(zip(source_ticks, vectors[len(recent) : len(recent) + len(source_ticks)], strict=True))
        insight_v = vectors[len(recent) + len(source_ticks) :]
        strength = dict(state.strength)
        for index, episode in enumerate(recent):
            for insight, text_vector in zip(insights, insight_v, strict=True):
                if (episode.tick, insight.entry_id) in state.handled or episode.tick in insight.source_episode_ticks:
                    continue  # acted on already, or the insight was drawn from this very episode
                similarity, source = _best(recent_v[index], insight, source_v, text_vector, sources)
                # Compared as recorded (six places): float32 embeddings put 0.8 a hair above 0.8.
                similarity = round(similarity, 6)
                diverges = source is not None and _sign(episode.outcome.pnl) * _sign(source.outcome.pnl) < 0
                if diverges and similarity > settings.anomaly_similarity:
                    assert source is not None
                    tagged.add(episode.tick)
                    out.append(
                        EpisodePrioritized(
                            episode_tick=episode.tick,
                            entry_id=insight.entry_id,
                            similarity=similarity,
                            reason=(
                                f"like tick {source.tick} of insight {insight.entry_id} "
                                f"(cosine {similarity:.2f}) but pnl {episode.outcome.pnl:+.4f} against "
                                f"{source.outcome.pnl:+.4f}"
                            ),
                        )
                    )
                elif similarity > settings.match_similarity:
                    strength[insight.entry_id] = round(strength.get(insight.entry_id, 0.0) + settings.strength_delta, 6)
                    strengthened += 1
                    out.append(
                        InsightStrengthened(
                            entry_id=insight.entry_id,
                            episode_tick=episode.tick,
                            similarity=similarity,
                            delta=settings.strength_delta,
                            strength=strength[insight.entry_id],
                        )
                    )
    unresolved = state.pending | tagged
    if unresolved:
        out.append(
            MicroConsolidated(
                episode_ticks=tuple(e.tick for e in recent),
                insights=len(insights),
                strengthened=strengthened,
                prioritized=len(tagged),
                unresolved=len(unresolved),
                urgency_delta=settings.urgency_delta,
            )
        )
    return out


def _best(
    episode_vector: np.ndarray,
    insight: DreamStaged,
    source_v: dict[int, np.ndarray],
    text_vector: np.ndarray,
    sources: dict[int, Episode],
) -> tuple[float, Episode | None]:
    """The insight's pattern as its source episodes: the closest of them and its cosine; the
    insight's own text when it was drawn from none still recorded."""
    scored: Sequence[tuple[float, Episode | None]] = [
        (float(episode_vector @ source_v[t]), sources[t]) for t in insight.source_episode_ticks if t in source_v
    ]
    if not scored:
        return float(episode_vector @ text_vector), None
    return max(scored, key=lambda pair: (pair[0], -(pair[1].tick if pair[1] else 0)))
