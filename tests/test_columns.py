"""Episode memory held as columns behaves as the object-per-episode memory it replaced; NREM's
array scoring picks what the per-episode loop picked; embeddings are made once per episode."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import msgspec
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros.episodes._fold import EpisodeMemory, episode_time
from oneiros.episodes._vectors import HashingEmbedder, episode_text
from oneiros.events._content import EpisodeDepotentiated, EpisodeTriaged, ReplayStrengthened, TriageDecision
from oneiros.events._micro import EpisodePrioritized
from oneiros.events._types import DreamComplete, Episode, EpisodeRecorded, Outcome
from oneiros.phases._nrem import ReplayPick, need, utility
from oneiros.phases._nrem import select_replay as select_replay_columns
from oneiros.phases._pairs import select_distant_pairs
from oneiros.settings._cycle import EngineSettings, PairSettings

T0 = datetime(2025, 1, 1, tzinfo=UTC)


class ReferenceMemory:
    """The memory as it was before columns: a dict per field, keyed by tick."""

    def __init__(self) -> None:
        self.episodes: dict[int, Episode] = {}
        self.strength: dict[int, float] = {}
        self.arousal: dict[int, float] = {}
        self.triage: dict[int, TriageDecision] = {}
        self.prioritized: set[int] = set()

    def apply(self, event: object) -> None:
        if isinstance(event, EpisodeRecorded):
            e = event.episode
            self.episodes[e.tick] = e
            self.arousal[e.tick] = e.arousal
            self.strength.setdefault(e.tick, 0.0)
        elif isinstance(event, ReplayStrengthened):
            self.strength[event.episode_tick] = self.strength.get(event.episode_tick, 0.0) + event.delta
        elif isinstance(event, EpisodeDepotentiated):
            self.arousal[event.episode_tick] = event.arousal_after
        elif isinstance(event, EpisodeTriaged):
            self.triage[event.episode_tick] = event.decision
        elif isinstance(event, EpisodePrioritized):
            self.prioritized.add(event.episode_tick)
        elif isinstance(event, DreamComplete):
            self.prioritized.clear()

    def current(self) -> list[Episode]:
        out = []
        for tick in sorted(self.episodes):
            e = self.episodes[tick]
            a = self.arousal.get(tick, e.arousal)
            if a != e.arousal:
                e = msgspec.structs.replace(e, arousal=a)
            if tick in self.prioritized and e.dream_priority != "high":
                e = msgspec.structs.replace(e, dream_priority="high")
            out.append(e)
        return out


_unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
_times = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=10**12).map(lambda us: T0 + timedelta(microseconds=us)),
    st.integers(min_value=0, max_value=10**9).map(lambda s: datetime(2024, 5, 1) + timedelta(seconds=s)),
)
episodes_st = st.builds(
    Episode,
    tick=st.integers(min_value=0, max_value=40),
    summary=st.sampled_from(["eth breakout hedge", "gas spike on the bridge", "whale dump", "basis drift"]),
    time=_times,
    tags=st.lists(st.sampled_from(["eth", "gas", "risk"]), max_size=2).map(tuple),
    regime=st.sampled_from(["ranging", "trending", "volatile"]),
    significance=_unit,
    arousal=_unit,
    outcome=st.builds(
        Outcome,
        pnl=st.floats(min_value=-0.1, max_value=0.1),
        surprise=_unit,
        regret=st.floats(min_value=0, max_value=1),
    ),
    prediction_error=st.floats(min_value=-1, max_value=1),
    dream_priority=st.sampled_from(["normal", "high"]),
)
effects_st = st.one_of(
    episodes_st.map(lambda e: EpisodeRecorded(episode=e)),
    st.builds(
        ReplayStrengthened,
        cycle_id=st.just("c"),
        episode_tick=st.integers(0, 40),
        delta=st.just(0.5),
        strength=st.just(0.0),
    ),
    st.builds(
        EpisodeDepotentiated,
        cycle_id=st.just("c"),
        episode_tick=st.integers(0, 40),
        arousal_before=_unit,
        arousal_after=_unit,
        lesson=st.just("calm"),
    ),
    st.builds(EpisodePrioritized, episode_tick=st.integers(0, 40), entry_id=st.just("e"), similarity=_unit),
    st.builds(DreamComplete, cycle_id=st.just("c")),
    st.builds(
        EpisodeTriaged,
        cycle_id=st.just("c"),
        episode_tick=st.integers(0, 40),
        decision=st.sampled_from(["preserve", "abstract", "forget"]),
        utility=_unit,
        reason=st.just("r"),
    ),
)


@settings(max_examples=80, deadline=None)
@given(events=st.lists(effects_st, max_size=60), flush_at=st.integers(0, 60))
def test_columns_fold_like_the_object_memory_and_survive_a_snapshot(events: list[object], flush_at: int) -> None:
    """Any mix of recorded episodes (ticks replacing ticks), strengthening, depotentiation, triage,
    micro-consolidation's priority tags and the cycles that end them folds to the episodes, arousal,
    strength, triage and priorities the dict-per-field memory gave,
    whether the columns were built midway or not, and again after a round trip through bytes."""
    reference, memory = ReferenceMemory(), EpisodeMemory()
    for index, event in enumerate(events):
        if index == flush_at:
            memory.columns()
        reference.apply(event)
        memory.apply(event)
    restored = EpisodeMemory.from_bytes(memory.to_bytes())
    for candidate in (memory, restored):
        assert reference.current() == candidate.episodes()
        assert {t: reference.arousal[t] for t in reference.episodes} == dict(candidate.arousal)
        assert {t: reference.strength.get(t, 0.0) for t in range(41)} == {t: candidate.strength[t] for t in range(41)}
        assert reference.triage == candidate.triage
        assert reference.prioritized == candidate.prioritized
        columns = candidate.columns()
        assert [episode_time(e).timestamp() for e in reference.current()] == columns.seconds.tolist()


def reference_select_replay(episodes: Sequence[Episode], settings: EngineSettings) -> list[ReplayPick]:
    """select_replay as it was, one episode at a time."""
    if not episodes:
        return []
    nrem = settings.nrem
    now = max(episode_time(e) for e in episodes)
    current = max(episodes, key=lambda e: (episode_time(e), e.tick)).regime
    scores = {
        e.tick: utility(
            e,
            settings.high_priority_boost,
            need(
                e,
                current_regime=current,
                age_days=(now - episode_time(e)).total_seconds() / 86_400.0,
                half_life_days=nrem.recency_half_life_days,
                weights=nrem.need_weights,
            ),
            nrem.pnl_scale,
        )
        for e in episodes
    }
    slots = settings.batch_size * settings.max_batches
    diversity_slots = math.ceil(slots * nrem.diversity_share)
    ranked = sorted(
        (e for e in episodes if scores[e.tick] > settings.min_utility), key=lambda e: (-scores[e.tick], e.tick)
    )
    picks = [ReplayPick(episode=e, utility=scores[e.tick], reason="utility") for e in ranked[: slots - diversity_slots]]
    chosen = {p.episode.tick for p in picks}

    def best(candidates: Sequence[Episode], reason: str) -> None:
        rest = [e for e in candidates if e.tick not in chosen]
        if rest and len(picks) < slots and sum(p.reason != "utility" for p in picks) < diversity_slots:
            pick = max(rest, key=lambda e: (scores[e.tick], -e.tick))
            picks.append(ReplayPick(episode=pick, utility=scores[pick.tick], reason=reason))
            chosen.add(pick.tick)

    peak = max(e.arousal for e in episodes)
    best([e for e in episodes if e.arousal >= nrem.high_arousal and e.arousal == peak], "arousal")
    by_age = sorted(episodes, key=lambda e: (episode_time(e), e.tick))
    best(by_age[: max(1, len(by_age) // 3)], "oldest")
    recent = [e for e in episodes if (now - episode_time(e)).total_seconds() <= nrem.regime_window_days * 86_400.0]
    covered = {p.episode.regime for p in picks}
    for regime in sorted({e.regime for e in recent} - covered):
        best([e for e in recent if e.regime == regime], "regime")
    return picks


@settings(max_examples=80, deadline=None)
@given(
    episodes=st.lists(episodes_st, max_size=80, unique_by=lambda e: e.tick),
    batch=st.integers(1, 6),
    batches=st.integers(1, 4),
    floor=st.sampled_from([0.0, 0.05, 0.3]),
)
def test_array_scoring_picks_what_the_per_episode_loop_picked(
    episodes: list[Episode], batch: int, batches: int, floor: float
) -> None:
    """Over any episodes (timed or not, ties in time, high priority or not) and any slot counts,
    the replay set scored as arrays is the one the per-episode loop chose: same episodes, same
    utilities to the bit, same reasons, same order."""
    episodes = sorted(episodes, key=lambda e: e.tick)
    engine = EngineSettings(batch_size=batch, max_batches=batches, min_utility=floor)
    expected = [(p.episode, p.utility, p.reason) for p in reference_select_replay(episodes, engine)]
    actual = [(p.episode, p.utility, p.reason) for p in select_replay_columns(episodes, engine)]
    assert expected == actual


class CountingEmbedder(HashingEmbedder):
    def __init__(self, dimensions: int = 256) -> None:
        super().__init__(dimensions)
        self.embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += len(texts)
        return super().embed(texts)


def test_embeddings_are_made_once_per_episode_and_kept_by_snapshots() -> None:
    """Distant pairs embed only the memories they draw, each row equal to embedding every episode
    in one batch; drawing again embeds nothing new, and a snapshot of the memory keeps them for
    the same embedder version only."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    words = ["eth", "gas", "whale", "bridge", "hedge", "basis", "oracle", "vault"]
    episodes = [
        Episode(
            tick=i,
            summary=" ".join(words[(i * k) % len(words)] for k in (1, 3, 5)),
            time=start + timedelta(hours=7 * i),
            significance=(i % 10) / 10,
        )
        for i in range(2_000)
    ]
    memory = EpisodeMemory(episodes)
    embedder = CountingEmbedder()
    vectors = memory.vectors(embedder, "hashing")
    columns = memory.columns()
    draw = select_distant_pairs(
        columns.seconds, columns.significance, vectors, PairSettings(), np.random.default_rng(3)
    )
    assert draw.pairs
    first = embedder.embedded
    assert 0 < first < len(episodes) // 4
    dense = HashingEmbedder().embed([episode_text(e) for e in episodes])
    assert vectors is not None
    assert not isinstance(vectors, np.ndarray)
    for a, b in draw.pairs:
        assert dense[a].tolist() == vectors.row(a).tolist()
        assert dense[b].tolist() == vectors.row(b).tolist()
    again = select_distant_pairs(
        columns.seconds, columns.significance, vectors, PairSettings(), np.random.default_rng(3)
    )
    assert (draw, first) == (again, embedder.embedded)
    restored = EpisodeMemory.from_bytes(memory.to_bytes())
    fresh = CountingEmbedder()
    kept = restored.vectors(fresh, "hashing")
    replay = select_distant_pairs(columns.seconds, columns.significance, kept, PairSettings(), np.random.default_rng(3))
    assert (draw, 0) == (replay, fresh.embedded)
    smaller = CountingEmbedder(dimensions=64)
    other = restored.vectors(smaller, "hashing")  # the same setting, another embedder version
    assert other is not None
    assert not isinstance(other, np.ndarray)
    assert (64, 1) == (len(other.row(0)), smaller.embedded)
    dense_draw = select_distant_pairs(
        columns.seconds, columns.significance, dense, PairSettings(), np.random.default_rng(3)
    )
    assert draw == dense_draw


def test_the_exact_filter_draws_what_the_dense_matrix_draws_and_keeps_only_drawn_rows() -> None:
    """When dissimilar partners are rare (one rejection try, a low ceiling) the draw filters every
    memory exactly: lazily embedded vectors draw the pairs the whole matrix draws, and the memory
    keeps only the rows the draws touched, not every episode's."""
    words = ["eth", "gas", "whale", "bridge", "hedge", "basis", "oracle", "vault", "perp", "drift"]
    episodes = [
        Episode(
            tick=i,
            summary=" ".join(words[(i * k) % len(words)] for k in (1, 2, 7)),
            time=T0 + timedelta(hours=5 * i),
            significance=((i * 7) % 10) / 10,
        )
        for i in range(600)
    ]
    memory = EpisodeMemory(episodes)
    columns = memory.columns()
    strict = PairSettings(rejection_tries=1, max_similarity=0.2)
    dense = HashingEmbedder().embed([episode_text(e) for e in episodes])
    lazy = memory.vectors(HashingEmbedder(), "hashing")
    for seed in range(5):
        expected = select_distant_pairs(
            columns.seconds, columns.significance, dense, strict, np.random.default_rng(seed)
        )
        actual = select_distant_pairs(columns.seconds, columns.significance, lazy, strict, np.random.default_rng(seed))
        assert expected == actual
    kept = len(memory._vectors["hashing|" + HashingEmbedder().version])
    assert 0 < kept < len(episodes) // 2
